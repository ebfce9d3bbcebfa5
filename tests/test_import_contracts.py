"""The layering written in pyproject.toml holds, and the checker would notice if it did not."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
APPS = ["config", "bench", "accounts", "lobby", "review", "quiz", "verifier", "core"]


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    binary = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(binary), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )


def copy_of_the_code(tmp_path: Path) -> Path:
    for app in APPS:
        shutil.copytree(REPO / app, tmp_path / app, ignore=shutil.ignore_patterns("__pycache__", "pack_data"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_contracts_hold():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 3 kept, 0 broken." in result.stdout


def test_the_gate_importing_quiz_breaks_the_layers(tmp_path):
    root = copy_of_the_code(tmp_path)
    (root / "verifier" / "leak.py").write_text("from quiz.models import Question  # noqa: F401\n")
    result = lint_imports(root)
    assert result.returncode == 1
    assert "verifier.leak -> quiz.models" in result.stdout


def test_a_cycle_hidden_inside_a_function_breaks_the_acyclic_contract(tmp_path):
    root = copy_of_the_code(tmp_path)
    services = root / "review" / "premises" / "premise_recheck.py"
    services.write_text(services.read_text() + "\n\ndef _later():\n    from review import services  # noqa: F401\n")
    result = lint_imports(root)
    assert result.returncode == 1
    assert "No cycles are allowed in review." in result.stdout


PURE = "Pure rules import neither Django nor Channels"


@pytest.mark.parametrize(
    ("module", "line", "chain"),
    [
        ("lobby/rules/machine.py", "import django.db  # noqa: F401", "lobby.rules.machine -> django"),
        ("lobby/rules/teams.py", "from core import i18n  # noqa: F401", "lobby.rules.teams -> core.i18n"),
        (
            "review/thresholds/sweep.py",
            "from channels.layers import get_channel_layer  # noqa: F401",
            "review.thresholds.sweep -> channels",
        ),
        ("verifier/policy.py", "from asgiref.sync import sync_to_async  # noqa: F401", "verifier.policy -> asgiref"),
        (
            "lobby/realtime/frames.py",
            "from django.conf import settings  # noqa: F401",
            "lobby.realtime.frames -> django",
        ),
        (
            "review/checker_eval/figures.py",
            "from review.checker_eval import items  # noqa: F401",
            "review.checker_eval.figures -> review.checker_eval.items",
        ),
        ("verifier/causes.py", "from core import i18n  # noqa: F401", "verifier.causes -> core.i18n"),
        # Through a module of ours that imports Django: still not pure.
        ("verifier/policy.py", "from core import i18n  # noqa: F401", "verifier.policy -> core.i18n"),
    ],
)
def test_a_pure_module_importing_django_or_channels_breaks_the_purity_contract(tmp_path, module, line, chain):
    root = copy_of_the_code(tmp_path)
    path = root / module
    path.write_text(path.read_text() + f"\n\ndef _later():\n    {line}\n")
    result = lint_imports(root)
    assert result.returncode == 1, result.stdout
    assert "Contracts: 2 kept, 1 broken." in result.stdout
    assert f"{PURE}" in result.stdout and "BROKEN" in result.stdout
    assert chain in result.stdout
