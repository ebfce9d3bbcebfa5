"""LOG_FORMAT=json: one JSON object per log event, one line each (core/json_logs.py)."""

import json
import logging
import subprocess
import sys
from datetime import datetime

import pytest

from core.json_logs import JsonFormatter
from tests.support.servers import REPO, server_env

SCRIPT = """
import logging
import django

django.setup()
log = logging.getLogger("lobby.realtime.consumers")
log.warning("closing a flooding connection to room %s from %s", "ABCD", "10.0.0.1", extra={"room": "ABCD"})
try:
    raise ValueError("bad\\nvalue")
except ValueError:
    log.exception("a two-line\\nmessage", extra={"job": 7, "when": object()})
logging.getLogger("verifier").info("gate round: checked=%d", 12)
"""


def _run(log_format: str) -> list[str]:
    env = server_env(LOG_FORMAT=log_format, LOG_LEVEL="INFO", DJANGO_DEBUG="1")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stderr.splitlines()


def test_every_event_is_one_json_line_with_level_logger_message_time_and_extras():
    lines = _run("json")
    assert len(lines) == 3, lines  # the traceback and the message's newline stay inside their event's line
    events = [json.loads(line) for line in lines]
    first, second, third = events
    assert first["level"] == "WARNING" and first["logger"] == "lobby.realtime.consumers"
    assert first["message"] == "closing a flooding connection to room ABCD from 10.0.0.1"
    assert first["room"] == "ABCD"
    assert datetime.fromisoformat(first["time"]).tzinfo is not None
    assert second["level"] == "ERROR" and second["message"] == "a two-line\nmessage"
    assert second["job"] == 7 and second["when"].startswith("<object object")
    assert "ValueError: bad" in second["exc_info"]
    assert (third["logger"], third["message"]) == ("verifier", "gate round: checked=12")


def test_plain_is_the_default_and_a_wrong_format_is_refused():
    assert "WARNING lobby.realtime.consumers closing a flooding connection" in _run("plain")[0]
    with pytest.raises(subprocess.CalledProcessError) as refused:
        _run("yaml")
    assert "LOG_FORMAT must be plain or json" in refused.value.stderr


def test_the_formatter_alone():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "n=%d", (3,), None)
    record.players = ["Ann", "Ben"]
    entry = json.loads(JsonFormatter().format(record))
    assert entry == {"time": entry["time"], "level": "INFO", "logger": "x", "message": "n=3", "players": ["Ann", "Ben"]}
