"""Decompression bombs for the fakes: small bodies that decode to a great many bytes (zeros), built by
streaming so building one never holds its decoded size. Cached: each is built once per test process."""

import functools
import zlib

BOMB_DECODED_BYTES = 128 * 1024 * 1024
_STEP = 1024 * 1024


def _compress(pieces, *, wbits: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    out = [compressor.compress(piece) for piece in pieces]
    out.append(compressor.flush())
    return b"".join(out)


def _zeros(total: int):
    zeros = bytes(_STEP)
    for start in range(0, total, _STEP):
        yield zeros[: min(_STEP, total - start)]


@functools.cache
def gzip_bomb(decoded: int = BOMB_DECODED_BYTES, *, layers: int = 1) -> bytes:
    body = _compress(_zeros(decoded), wbits=zlib.MAX_WBITS | 16)
    for _ in range(layers - 1):
        body = _compress([body], wbits=zlib.MAX_WBITS | 16)
    return body


@functools.cache
def deflate_bomb(decoded: int = BOMB_DECODED_BYTES) -> bytes:
    return _compress(_zeros(decoded), wbits=zlib.MAX_WBITS)


def decoded_size(body: bytes, *, layers: int = 1, wbits: int = zlib.MAX_WBITS | 16) -> int:
    """How many bytes `body` decodes to, counted in bounded pieces (never held at once)."""
    total = 0
    pending = [body]
    for layer in range(layers):
        last = layer == layers - 1
        decoder = zlib.decompressobj(wbits)
        produced: list[bytes] = []
        for data in pending:
            while data:
                piece = decoder.decompress(data, _STEP)
                data = decoder.unconsumed_tail
                if last:
                    total += len(piece)
                else:
                    produced.append(piece)
        pending = produced
    return total
