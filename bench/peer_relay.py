"""A bare in-memory quiz socket server, built like the in-memory peers people self-host instead of Quizgate (Rahoot:
one Node process, socket.io, every game in memory): no database, no channel layer, no per-player part, one
process. A host's question goes out as one JSON frame, encoded once, written to every socket of the room; an answer
is counted in memory and acknowledged. bench/ws_load.py drives it as it drives the Channels relay
(bench/baseline_app.py), with the same messages:

    .venv/bin/python bench/peer_relay.py --port 8100

- `{"type": "broadcast", "payload": {...}}`: the payload, stamped with the server's `sent_at`, to every socket of
  the room (the sender's too);
- anything else: counted as an answer, answered with `{"type": "ack"}`.

It is faster than the peer it stands for (no socket.io framing, no per-answer broadcast to the room, as Rahoot does
with every answer): a bound Quizgate's fan-out is compared against, not a copy of the peer.
"""

import argparse
import asyncio
import json
import time
from collections import defaultdict

from websockets.asyncio.server import broadcast, serve

rooms: dict[str, set] = defaultdict(set)
answers: dict[str, int] = defaultdict(int)


async def handler(ws) -> None:
    parts = ws.request.path.strip("/").split("/")
    if len(parts) != 3 or parts[:2] != ["ws", "room"]:
        await ws.close(1008, "unknown path")
        return
    code = parts[2]
    room = rooms[code]
    room.add(ws)
    try:
        async for raw in ws:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("type") == "broadcast":
                payload = message.get("payload") if isinstance(message.get("payload"), dict) else {}
                # One frame, encoded once, queued on every socket of the room.
                broadcast(room, json.dumps({**payload, "sent_at": time.time()}))
            else:
                answers[code] += 1
                await ws.send('{"type": "ack"}')
    finally:
        room.discard(ws)
        if not room:
            rooms.pop(code, None)
            answers.pop(code, None)


async def main(host: str, port: int) -> None:
    # No compression, frames up to 64 KiB, as Quizgate's server is run by the bench.
    options = {"compression": None, "max_size": 65536, "max_queue": 64, "ping_interval": None, "backlog": 4096}
    async with serve(handler, host, port, **options):
        await asyncio.Future()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main(args.host, args.port))
