"""The room socket's way into the database: a pool of threads for the game's services, and the batches that put
the answers and the joins reaching one process together into one transaction each."""

import functools
from concurrent.futures import ThreadPoolExecutor

from channels.db import database_sync_to_async
from django.conf import settings

from lobby import services
from lobby.exceptions import RoomNotFound
from lobby.realtime import ratelimit
from lobby.realtime.batching import GroupCommit

_db_threads = ThreadPoolExecutor(max_workers=settings.DB_THREADS, thread_name_prefix="quizgate-db")


@functools.cache
def db(func):
    """Run a service in a pool of threads. Not thread-sensitive: the game's writes are safe side by side (row
    locks and compare-and-set), and one shared thread per process would queue every player's answer. One wrapper
    per service, made once: a socket's every message asked for its service's wrapper anew."""
    return database_sync_to_async(func, thread_sensitive=False, executor=_db_threads)


# The answers that reach this process together go into the database in one transaction.
# Each batch's count-and-close step runs after its players have their acknowledgements.
answers = GroupCommit(db(services.answers_store), after=db(services.answers_counted))


# Joins too: a room of 2,000 filling up is a few dozen transactions, one row lock each, not 2,000.
joins = GroupCommit(db(services.players_join))


def join_allowed(*, ip: str, code: str) -> None:
    """Before a join: a room new to this IP counts against its rooms-joined limit; an IP that has used up its
    code guesses is refused (each unknown code counts, `join`)."""
    if not ratelimit.room_join_hit(ip=ip, code=code) or ratelimit.ip_blocked(limit=ratelimit.CODE_GUESSES, ip=ip):
        raise ratelimit.RateLimited()


async def join(
    *,
    ip: str,
    code: str,
    nickname: object,
    asks_more_time: bool,
    team: object = None,
    previous: object = None,
    language: str = "en",
) -> services.Joined:
    """Join under the IP's limits, in the next batch of joins; not from a phone the host blocked (`previous`).
    `language`: the phone's, for a room with generated friendly names."""
    await db(join_allowed)(ip=ip, code=code)
    if previous:
        await db(services.player_blocked_check)(previous=previous, code=code)
    try:
        return await joins.submit(
            services.JoinIn(code=code, nickname=nickname, asks_more_time=asks_more_time, team=team, language=language)
        )
    except RoomNotFound:
        await db(ratelimit.ip_hit)(limit=ratelimit.CODE_GUESSES, ip=ip)
        raise
