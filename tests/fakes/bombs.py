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


PDF_BOMB_PAGES = 400
PDF_BOMB_DECODED_BYTES = 40 * 1024 * 1024
# One line of a page's content: a line of text shown, the kind of operators a text extractor must walk.
_PDF_LINE = b"BT /F1 12 Tf 72 712 Td (The kestrel hovers over the field.) Tj ET\n"


def _pdf_lines(total: int):
    piece = _PDF_LINE * (_STEP // len(_PDF_LINE))
    for start in range(0, total, len(piece)):
        yield piece[: min(len(piece), total - start)]


@functools.cache
def pdf_bomb(pages: int = PDF_BOMB_PAGES, decoded: int = PDF_BOMB_DECODED_BYTES) -> bytes:
    """A PDF of `pages` pages that all share one Flate content stream of `decoded` bytes of text operators:
    small on disk, and a text extractor that reads every page inflates the stream once a page."""
    stream = _compress(_pdf_lines(decoded), wbits=zlib.MAX_WBITS)
    kids = b" ".join(b"%d 0 R" % (5 + n) for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
        b"/Resources << /Font << /F1 4 0 R >> >> >>"
    )
    objects += [page] * pages
    out = [b"%PDF-1.4\n"]
    size = len(out[0])
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(size)
        chunk = b"%d 0 obj\n%s\nendobj\n" % (number, body)
        out.append(chunk)
        size += len(chunk)
    xref = [b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)]
    xref += [b"%010d 00000 n \n" % offset for offset in offsets]
    trailer = b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, size)
    return b"".join(out + xref + [trailer])
