"""Reading the model's reply: each question as its closing brace streams in, the whole reply as a fallback,
neither recursing nor going quadratic nor holding the reply, whatever it holds."""

import gc
import json
import math
import time

from quiz.generation.replies import ItemExtractor, parse_reply
from tests.fakes.writer_server import good_question, good_reply
from tests.support.memory import peak_allocation


def test_extractor_hands_over_each_question_as_soon_as_it_closes():
    text = "Sure!\n```json\n" + good_reply(3) + "\n```\nEnjoy the quiz {really}."
    extractor = ItemExtractor()
    found_at = []
    for index in range(len(text)):
        for item in extractor.feed(text[index]):
            found_at.append((index, item["question"]))
    assert [question for _, question in found_at] == [good_question(0, n)["question"] for n in (1, 2, 3)]
    # Each arrives at its own closing brace, long before the reply ends.
    assert found_at[0][0] < found_at[1][0] < found_at[2][0] < len(text) - 30


def test_parse_reply_reads_fences_the_outermost_object_and_ignores_trailing_text():
    assert len(parse_reply("```json\n" + good_reply(2) + "\n```")) == 2
    assert len(parse_reply("Here you go: " + good_reply(2) + " Let me know {if} you want more!")) == 2
    assert len(parse_reply(json.dumps([good_question(0, 1)]))) == 1
    assert parse_reply("I cannot help with that.") == []


def _bracket_bombs(scale: int) -> float:
    """The seconds the readers take over three bracket bombs `scale` quarters of the full size (the best of
    three runs: the machine's load only ever adds)."""
    best = math.inf
    for _ in range(3):
        started = time.monotonic()
        extractor = ItemExtractor()
        depth = 1250 * scale
        assert extractor.feed("[" + '{"question": [' * depth + "]}" * depth + "]") == []
        assert parse_reply("[" * 25_000 * scale) == []
        assert parse_reply("[" * 999 + "0," * 25_000 * scale) == []
        best = min(best, time.monotonic() - started)
    return best


def test_the_readers_neither_recurse_nor_go_quadratic_on_brackets():
    # No RecursionError at 5000 levels; and four times the brackets cost about four times the time, measured
    # against the quarter size in the same test (quadratic would be sixteen).
    # Earlier tests' garbage is collected first and none during the bombs: an object finalised while
    # json's C reader stands near the recursion limit cannot have its warning formatted, and pytest fails
    # this test for another's leak (seen once in CI); a collection's pause is no part of the readers' time.
    gc.collect()
    gc.disable()
    try:
        quarter = _bracket_bombs(1)
        full = _bracket_bombs(4)
    finally:
        gc.enable()
    assert full < 8 * quarter, (full, quarter)
    # Still found: a reply wrapped in chatty text with a few stray braces.
    assert len(parse_reply("Sure {here} you go: " + good_reply(3) + " {enjoy}")) == 3


def test_the_streaming_reader_holds_neither_the_reply_nor_its_brackets():
    extractor = ItemExtractor()
    with peak_allocation() as memory:
        for _ in range(25):
            extractor.feed("[" * 4000)
        for _ in range(500):
            extractor.feed(" " * 4000)
    # 100,000 open brackets and 2 MB of padding: only a few levels and the reply's first 256 KiB are kept.
    assert memory["peak"] < 1024 * 1024, f"the reader grew by {memory['peak'] / 2**20:.1f} MiB"
    assert len(extractor.text) == 256 * 1024


def test_the_streaming_reader_follows_escapes_across_chunks():
    question = good_question(0, 1) | {"question": 'Which "quoted" \\ path {braced} [listed] is right?'}
    reply = json.dumps({"questions": [question, good_question(0, 2)]})
    assert "\\\\" in reply and '\\"' in reply
    extractor = ItemExtractor()
    found = [item for char in reply for item in extractor.feed(char)]
    assert found == [question, good_question(0, 2)]
