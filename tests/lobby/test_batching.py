"""Group commit: what arrives while a write runs goes into the next write, and each caller gets its own result."""

import asyncio

import pytest

from lobby.realtime.batching import GroupCommit


class Refused(Exception):
    pass


async def test_items_arriving_during_a_write_go_into_the_next_write_together():
    calls: list[list[int]] = []
    first_write_started, release = asyncio.Event(), asyncio.Event()

    async def write(items):
        calls.append(list(items))
        first_write_started.set()
        await release.wait()
        return [Refused(f"odd {i}") if i % 2 else i * 10 for i in items]

    group = GroupCommit(write)
    first = asyncio.create_task(group.submit(0))
    await first_write_started.wait()
    rest = [asyncio.create_task(group.submit(i)) for i in range(1, 6)]
    await asyncio.sleep(0.01)
    assert calls == [[0]]  # the others wait for the write in progress: no second transaction meanwhile
    release.set()
    results = await asyncio.gather(first, *rest, return_exceptions=True)
    assert calls == [[0], [1, 2, 3, 4, 5]]
    assert results[0] == 0 and results[2] == 20 and results[4] == 40
    assert [str(r) for r in results if isinstance(r, Refused)] == ["odd 1", "odd 3", "odd 5"]


async def test_a_failed_write_fails_only_its_own_batch_and_the_next_one_runs():
    attempts = 0

    async def write(items):
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ConnectionError("database unreachable")
        return list(items)

    group = GroupCommit(write)
    with pytest.raises(ConnectionError):
        await group.submit("a")
    assert await group.submit("b") == "b"


async def test_a_caller_that_goes_away_does_not_disturb_the_others():
    release = asyncio.Event()

    async def write(items):
        await release.wait()
        return [f"ok {i}" for i in items]

    group = GroupCommit(write, max_batch=2)
    tasks = [asyncio.create_task(group.submit(i)) for i in range(4)]
    await asyncio.sleep(0.01)
    tasks[1].cancel()
    release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert results[0] == "ok 0" and isinstance(results[1], asyncio.CancelledError)
    assert results[2:] == ["ok 2", "ok 3"]  # max_batch 2: the second pair went in a second write


async def test_callers_have_their_results_before_the_follow_up_and_the_next_write_waits_for_it():
    log: list[str] = []
    follow_up_may_finish = asyncio.Event()

    async def write(items):
        log.append(f"write {list(items)}")
        return list(items)

    async def after(results):
        log.append(f"after {results} starts")
        if results == [1]:
            await follow_up_may_finish.wait()
        log.append(f"after {results} done")

    group = GroupCommit(write, after=after)
    assert await group.submit(1) == 1  # acknowledged while its follow-up is still running
    assert log == ["write [1]", "after [1] starts"]
    second = asyncio.create_task(group.submit(2))
    await asyncio.sleep(0.02)
    assert log == ["write [1]", "after [1] starts"]  # one database thread: the next write waits its turn
    follow_up_may_finish.set()
    assert await second == 2
    await asyncio.sleep(0.01)
    assert log[2:] == ["after [1] done", "write [2]", "after [2] starts", "after [2] done"]


async def test_a_failing_follow_up_is_logged_and_the_next_still_runs(caplog):
    done = []

    async def after(results):
        if results == ["bad"]:
            raise RuntimeError("count failed")
        done.append(results)

    async def write(items):
        return list(items)

    group = GroupCommit(write, after=after)
    assert await group.submit("bad") == "bad"
    assert await group.submit("good") == "good"
    for _ in range(20):
        await asyncio.sleep(0.01)
    assert done == [["good"]]
    assert "follow-up of a group commit failed" in caplog.text


async def test_while_writes_keep_coming_one_follow_up_counts_several_batches_and_the_last_is_counted_at_once():
    """A room answering all at once: the count (two scans of the room) runs once for the batches written while
    more waited, not after each, and the last batch, with nothing behind it, is counted straight away."""
    followed: list[list[int]] = []
    first_may_finish = asyncio.Event()

    async def write(items):
        if items == [0]:
            await first_may_finish.wait()
        return list(items)

    async def after(results):
        followed.append(list(results))

    group = GroupCommit(write, after=after, max_batch=1, after_every=60)
    tasks = [asyncio.create_task(group.submit(i)) for i in range(4)]
    await asyncio.sleep(0.01)  # 0 is being written, 1 to 3 wait
    first_may_finish.set()
    assert await asyncio.gather(*tasks) == [0, 1, 2, 3]
    await asyncio.sleep(0.01)
    assert followed == [[0, 1, 2, 3]]
    # Alone, an answer is counted as soon as it is written.
    assert await group.submit(4) == 4
    await asyncio.sleep(0.01)
    assert followed == [[0, 1, 2, 3], [4]]


async def test_a_long_stream_of_writes_is_still_followed_up_every_after_every_seconds():
    followed: list[list[int]] = []

    async def write(items):
        await asyncio.sleep(0.02)
        return list(items)

    async def after(results):
        followed.append(list(results))

    group = GroupCommit(write, after=after, max_batch=1, after_every=0)
    assert await asyncio.gather(*(group.submit(i) for i in range(3))) == [0, 1, 2]
    await asyncio.sleep(0.05)
    assert followed == [[0], [1], [2]]  # the host's count keeps moving while the answers pour in
