"""A PDF's text, read in a process of its own so a hostile file costs the web process nothing.

    python -m quiz.generation.pdf_text MAX_PAGES MAX_CONTENT_BYTES MAX_CHARS MAX_MEMORY_BYTES < file.pdf

The PDF comes on stdin; one JSON object goes to stdout: {"text": ...} or {"refused": REASON, ...} with REASON one of
"pages" (more pages than MAX_PAGES), "content" (the pages' content streams unpack to more than MAX_CONTENT_BYTES,
counted page by page, so 400 pages sharing one stream count 400 times), "memory" (the address-space limit
MAX_MEMORY_BYTES was hit), "complex" (one of pypdf's own bounds, such as the operators in one content stream) or
"unreadable" (pypdf gave up). Text stops growing past MAX_CHARS (the caller refuses a
longer source anyway). The caller (quiz/generation/uploads.py) holds the deadline and kills this process at it.

Plain Python and pypdf only: no Django, so the process starts quickly and holds nothing of the web process's.
"""

import io
import json
import resource
import sys


def _limit_memory(max_bytes: int) -> None:
    if max_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))


def extract(data: bytes, *, max_pages: int, max_content: int, max_chars: int) -> dict:
    import pypdf
    from pypdf.errors import LimitReachedError

    # No single stream may unpack past the document's whole allowance.
    limits = {
        name: max_content
        for name in (
            "zlib_maximum_output_length",
            "lzw_maximum_output_length",
            "run_length_maximum_output_length",
            "brotli_maximum_output_length",
            "jbig2_maximum_output_length",
            "array_based_stream_maximum_output_length",
            "maximum_declared_stream_length",
        )
    }
    pypdf.overwrite_configuration(**limits)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = len(reader.pages)
        if pages > max_pages:
            return {"refused": "pages", "pages": pages}
        unpacked = 0
        parts: list[str] = []
        chars = 0
        for page in reader.pages:
            contents = page.get_contents()
            unpacked += len(contents.get_data()) if contents is not None else 0
            if unpacked > max_content:
                return {"refused": "content"}
            text = page.extract_text() or ""
            parts.append(text)
            chars += len(text) + 1
            if chars > max_chars:
                break
    except LimitReachedError as error:
        # pypdf's own bounds: a stream unpacking past the allowance, or too many operators in one stream.
        return {"refused": "content" if "decompress" in str(error).lower() else "complex"}
    except MemoryError:
        return {"refused": "memory"}
    except Exception:  # noqa: BLE001 - pypdf raises many kinds for a damaged file
        return {"refused": "unreadable"}
    return {"text": "\n".join(parts)[: max_chars + 1]}


def main(argv: list[str]) -> None:
    max_pages, max_content, max_chars, max_memory = (int(value) for value in argv)
    _limit_memory(max_memory)
    data = sys.stdin.buffer.read()
    try:
        result = extract(data, max_pages=max_pages, max_content=max_content, max_chars=max_chars)
    except MemoryError:
        result = {"refused": "memory"}
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
