"""The fakes in a process of their own, so a test can measure its own process's memory without counting
the server's. Every hostile reply is on at once, chosen by a marker in the request: a checker fault by
`[fault]` in the question text, a writer fault by `[fault]` in the topic.

Run as `python -m tests.fakes.process`: it prints its port and serves on 127.0.0.1 until its stdin closes
(so it stops by itself when the test process ends, however it ends).
"""

import sys

from tests.fakes import bombs
from tests.fakes.model_server import FAULTS
from tests.fakes.writer_server import WRITER_FAULTS, WriterServer


def marker(fault: str) -> str:
    return f"[{fault}]"


def main() -> None:
    server = WriterServer()
    server.script.faults = {marker(fault): fault for fault in FAULTS}
    server.writer.faults = {marker(fault): fault for fault in WRITER_FAULTS}
    # Built before the port is announced, so no reply waits for its bomb to be made.
    bombs.gzip_bomb(layers=2), bombs.gzip_bomb(), bombs.deflate_bomb()
    server.start()
    print(server.port, flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
