"""One question's walk through the gate: the modules it enters, in order, and how often it comes back to one.

    DJANGO_DEBUG=1 .venv/bin/python bench/gate_walk.py [--plain] [--every-module]

Checks one question against the scripted System One checker on loopback (no database: the pass mark is given),
with the blind question on (two orders) and, unless --plain, a second opinion asked of a scripted judge (the
question scores 0.65 against 0.6, inside the band).

A profile hook (sys.setprofile) builds the call tree of that check: each call of a function of ours is a node
under the call of ours it was made from; a coroutine run as a task (asyncio.gather) hangs under the call that
created the task, so the blind question asked beside the first check is a branch of the walk, not interleaved
with it in time. The walk reads the tree depth first, noting the module at every step down and back up;
consecutive repeats collapse into one stay. A return is a stay in a module the walk had already left.

The stations are the gate's own modules. What a station calls as a tool stays part of its stay: the checker's
client (verifier.backends, with its circuit breaker), the pure vocabulary (verifier.policy, verifier.prompts,
verifier.decisions, verifier.causes, verifier.conf) and core. --every-module counts them as stations too.

Prints the walk, one stay a line, then: stays, modules, returns, and the stays per module.
"""

import argparse
import asyncio
import logging
import os
import sys
from collections import Counter
from collections.abc import Coroutine
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from tests.fakes.model_server import ModelServer  # noqa: E402
from verifier.gate import Gate, GateItem  # noqa: E402

OURS = ("config", "core", "accounts", "lobby", "review", "quiz", "verifier")
TOOLS = (
    "core",
    "verifier.backends",
    "verifier.breaker",
    "verifier.policy",
    "verifier.prompts",
    "verifier.decisions",
    "verifier.causes",
    "verifier.conf",
)


def within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


class Node:
    def __init__(self, module: str) -> None:
        self.module = module
        self.children: list[Node] = []


class Walk:
    """The call tree of one check, built by a profile hook; `stays` reads it depth first."""

    def __init__(self, *, every_module: bool) -> None:
        self.every_module = every_module
        self.root: Node | None = None
        self.nodes: dict[FrameType, Node] = {}  # holds each frame, so no frame's id is reused meanwhile
        self.task_parents: dict[asyncio.Task[Any], Node] = {}

    def station(self, frame: FrameType) -> str | None:
        module = frame.f_globals.get("__name__", "")
        if not within(module, OURS) or (not self.every_module and within(module, TOOLS)):
            return None
        return module

    def parent_of(self, frame: FrameType | None) -> Node | None:
        """The node of the nearest call of ours up the stack, else the node that created the running task."""
        while frame is not None:
            if frame in self.nodes:
                return self.nodes[frame]
            frame = frame.f_back
        try:
            task = asyncio.current_task()
        except RuntimeError:
            return None
        return self.task_parents.get(task) if task is not None else None

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame in self.nodes:  # a coroutine resumed is the same call
            return
        module = self.station(frame)
        if module is None:
            return
        node = Node(module)
        parent = self.parent_of(frame.f_back)
        if parent is None:
            if self.root is not None:
                return  # not part of this check (the scripted server's own loop, say)
            self.root = node
        else:
            parent.children.append(node)
        self.nodes[frame] = node

    def task_factory(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], **kwargs: Any) -> Any:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        parent = self.parent_of(sys._getframe(1))
        if parent is not None:
            self.task_parents[task] = parent
        return task

    @property
    def stays(self) -> list[str]:
        steps: list[str] = []

        def down(node: Node) -> None:
            steps.append(node.module)
            for child in node.children:
                down(child)
                steps.append(node.module)

        if self.root is not None:
            down(self.root)
        return [module for index, module in enumerate(steps) if index == 0 or steps[index - 1] != module]


def returns(stays: list[str]) -> int:
    seen: set[str] = set()
    count = 0
    for module in stays:
        count += module in seen
        seen.add(module)
    return count


async def walk_one(walk: Walk) -> str:
    question = GateItem(
        key="q1",
        text="Which planet is known as the red planet?",
        options=("Mars", "Venus", "Jupiter", "Saturn"),
        correct_index=0,
        explanation="Iron oxide on its surface makes Mars look red.",
    )
    asyncio.get_running_loop().set_task_factory(walk.task_factory)
    async with Gate.from_settings(threshold=0.6) as gate:
        sys.setprofile(walk.profile)
        try:
            decision = await gate.check(question)
        finally:
            sys.setprofile(None)
    return f"{decision.outcome} ({decision.reason or 'no reason'})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plain", action="store_true", help="no second opinion")
    parser.add_argument("--every-module", action="store_true", help="the tools are stations too")
    args = parser.parse_args()
    for name in ("httpx", "httpx2", "verifier"):
        logging.getLogger(name).setLevel(logging.ERROR)

    server = ModelServer().start()
    judge = None if args.plain else ModelServer().start()
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_BASE_URL = server.url
    settings.VERIFIER_API_KEY = "bench"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = 30.0
    settings.VERIFIER_BLIND = True
    settings.VERIFIER_BLIND_ORDERS = 2
    if judge is not None:
        server.script.default_probability = 0.65  # borderline against 0.6 with the band 0.1
        settings.VERIFIER_SECOND_OPINION_MODEL = "judge-70b-2025-06"
        settings.VERIFIER_SECOND_OPINION_BASE_URL = f"{judge.url}/v1"
        settings.VERIFIER_SECOND_OPINION_BAND = 0.1
    walk = Walk(every_module=args.every_module)
    try:
        verdict = asyncio.run(walk_one(walk))
    finally:
        server.stop()
        if judge is not None:
            judge.stop()
    stays = walk.stays
    seen: set[str] = set()
    for number, module in enumerate(stays, 1):
        print(f"{number:>3} {module}{'  (again)' if module in seen else ''}")
        seen.add(module)
    per_module = Counter(stays)
    print(f"verdict: {verdict}; second opinion {'off' if judge is None else 'asked'}")
    print(f"stays={len(stays)} modules={len(per_module)} returns={returns(stays)}")
    print("stays per module: " + ", ".join(f"{module} {count}" for module, count in per_module.most_common()))


if __name__ == "__main__":
    main()
