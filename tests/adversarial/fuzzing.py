"""Hypothesis strategies for hostile WebSocket frames, and the figures the fuzz tests report."""

import asyncio
import json
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# kind -> {"cases": int, "distinct": set of frames, "replies": Counter of reply codes}; printed at the end.
FIGURES: dict[str, dict] = {}

# Fields a cheater might add to any message: they must be ignored.
CHEAT_FIELDS = ["player", "player_id", "score", "points", "correct", "streak", "room", "code", "role", "id"]

FIELDS = {
    "join": ["nickname", "more_time", "team", "previous"],
    "resume": ["token"],
    "host": ["token"],
    "answer": ["question", "option", "texts"],
    "report": ["question", "text"],
    "start": ["phase", "index"],
    "next": ["phase", "index"],
    "close": ["phase", "index"],
    "remove": ["player", "block"],
    "hide_word": ["word"],
    "lock": ["locked"],
    "void": ["index"],
    "extra_time": ["player", "percent"],
    "decline_time": ["player"],
    "speed_bonus": ["no_speed_bonus"],
    "accuracy_only": ["accuracy_only"],
    "reading": ["seconds"],
    "team": ["team"],
    "team_talk": ["seconds"],
    "ping": [],
    "sync": ["seq"],
}

EDGE_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2,
    5,
    6,
    2**15,
    2**31,
    2**63,
    -(2**63) - 1,
    2**80,
    -(10**300),
    10**4000,
    1e308,
    -0.0,
    0.5,
    float("inf"),
    float("-inf"),
    float("nan"),
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "\udfff x",
    "ß" * 20,
    "ﬃ" * 20,
    "İ" * 20,
    "\u202eevil",
    "\u200b",
    "💥" * 12,
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "'; DROP TABLE lobby_player; --",
    "x" * 5000,
    "y" * 17000,
    "0",
    "1",
    "lobby",
    "question",
    "reveal",
    "leaderboard",
    "finished",
    [],
    {},
    [[[[]]]],
    {"$gt": ""},
    {"type": "answer"},
    [0, 1],
]

scalars = st.one_of(
    st.sampled_from(EDGE_VALUES),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.none(),
    st.text(st.characters(exclude_categories=()), max_size=30),
)
junk = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=8,
)


def message(kind: str, *, useful: list | None = None) -> st.SearchStrategy[str]:
    """A frame of this type whose fields are junk, or sometimes values that mean something in this room (real
    tokens, ids, indexes), so the fuzz reaches past the first type check."""
    values = junk | st.sampled_from(useful) if useful else junk
    fields = {name: values for name in FIELDS[kind] + CHEAT_FIELDS}
    return st.fixed_dictionaries({"type": st.just(kind)}, optional=fields).map(json.dumps)


_non_json_text = st.text(st.characters(exclude_categories=()), max_size=200).filter(lambda s: not _is_json(s))


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


# Frames wrong before any type is looked at: not JSON, not an object, no or odd type, binary, nested, huge.
raw_frames = st.one_of(
    _non_json_text,
    st.sampled_from(
        [
            "",
            "null",
            "1",
            '"join"',
            "[]",
            "{}",
            '{"type": null}',
            '{"type": ["join"]}',
            '{"type": {"type": "join"}}',
            '{"type": "JOIN"}',
            '{"type": "on_join"}',
            '{"type": "__class__"}',
            '{"type": "_require"}',
            '{"type": "send_error"}',
            '{"type": "join\\u0000"}',
            '{"type": "answer"',
            '{"type": "ping", "type": "join"}',
            "[" * 10000 + "]" * 10000,
            "[" * 5000 + "]" * 5000,
            '{"a":' * 3000 + "1" + "}" * 3000,
            "[" * 16000,
            "1" * 5000,
            '{"type": "ping", "pad": "' + "x" * 16500 + '"}',
            "\ufeff{}",
        ]
    ),
    junk.filter(lambda value: not isinstance(value, dict)).map(json.dumps),
    st.dictionaries(st.text(max_size=8).filter(lambda key: key != "type"), junk, max_size=4).map(json.dumps),
    st.text(max_size=40).filter(lambda name: name not in FIELDS).map(lambda name: json.dumps({"type": name})),
    st.binary(max_size=300),
)


def record(kind: str, frame: str | bytes, replies: list[dict]) -> None:
    figures = FIGURES.setdefault(kind, {"cases": 0, "distinct": set(), "replies": Counter()})
    figures["cases"] += 1
    figures["distinct"].add(frame)
    for reply in replies or [{"type": "ignored"}]:
        figures["replies"][reply["code"] if reply["type"] == "error" else reply["type"]] += 1


async def fuzz(strategy: st.SearchStrategy, check, *, max_examples: int = 80) -> None:
    """Run `check(frame)` (a coroutine function) for each generated frame on this event loop, where the test's
    connections live, while hypothesis drives the examples from a worker thread."""
    loop = asyncio.get_running_loop()

    @settings(max_examples=max_examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(frame=strategy)
    def one(frame):
        asyncio.run_coroutine_threadsafe(check(frame), loop).result(timeout=60)

    await asyncio.to_thread(one)
