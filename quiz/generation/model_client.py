"""The writer's connection to its model: an OpenAI-compatible server through the `openai` SDK over the guarded
HTTP client (never decoded, capped), retried with backoff inside each attempt's deadline, streamed as text."""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

import openai

from core import cost, metrics
from quiz.exceptions import WriterError
from quiz.generation.prompts import STRING_LENGTH_KEYWORDS, question_schema
from quiz.jobs.conf import WriterConfig
from quiz.kinds import DEFAULT
from verifier.backends.replies import ReplyRefused, guarded_http_client

logger = logging.getLogger(__name__)

BACKOFF_FIRST = 0.5
BACKOFF_MAX = 8.0
# How long the rest of a reply is read, after the writer has what it needs, for the token usage at its end: a
# model that stops where asked sends its last "]}" and the usage within milliseconds; one that writes on is cut
# here (its usage is then not counted). It runs while the round's last checks do, so a gated round never waits.
USAGE_DRAIN_SECONDS = 0.25


class CallTokens:
    """One request's tokens: what its stream's usage chunk said, and the characters sent and received, for an
    estimate when it said nothing (a server that ignores `include_usage`, a reply cut before its end)."""

    def __init__(self, messages: list[dict[str, str]]) -> None:
        self.prompt_chars = sum(len(str(message.get("content") or "")) for message in messages)
        self.reply_chars = 0
        self.input_tokens: Any = None
        self.output_tokens: Any = None

    def count(self, chunk: Any) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is None:
            return
        self.input_tokens = getattr(usage, "prompt_tokens", None)
        self.output_tokens = getattr(usage, "completion_tokens", None)
        metrics.writer_tokens(
            input_tokens=cost.reported_tokens(self.input_tokens), output_tokens=cost.reported_tokens(self.output_tokens)
        )

    def usage(self, model: str) -> cost.Usage:
        return cost.call_usage(
            model=model,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            input_chars=self.prompt_chars,
            output_chars=self.reply_chars,
        )


class StreamBroken(Exception):
    """The reply stopped part-way (connection lost); what was complete before it still counts."""


SchemaLevel = Literal["bounded", "no_lengths", "none"]


class ModelClient:
    """One job's model connection: retries 429/5xx with backoff inside the attempt's deadline, falls back from
    the bounded JSON schema (to one without string lengths when the server names those, else to plain text)
    when the server rejects it, and streams the reply's text. A deadline that passes is a `TimeoutError`: the
    attempt was too slow, and the writer decides whether another one runs."""

    def __init__(
        self, *, config: WriterConfig, grounded: bool, kinds: Sequence[str] = (DEFAULT,), client: Any = None
    ) -> None:
        self.config = config
        self.grounded = grounded
        # The kinds of question the schema lets the model write.
        self.kinds = tuple(kinds)
        self.schema: SchemaLevel = "bounded"
        self.tokens_param = "max_tokens"
        # Ask for the token usage in the stream's last chunk (counted in the metrics); off for a server that refuses it.
        self.ask_usage = True
        self._drains: set[asyncio.Future[None]] = set()
        # Every request's tokens, for the round's cost (`usage`, read after `aclose`).
        self.calls: list[CallTokens] = []
        # The model id the server says is writing (each streamed chunk's `model`).
        self.served_model = ""
        # Set once questions are ready to play (a game may be waiting for the next): a server failing this many
        # seconds in a row is given up then, not retried to the attempt's deadline. None: to the deadline.
        self.give_up_after: float | None = None
        self._client = client or openai.AsyncOpenAI(
            # Local servers (vLLM, Ollama, llama.cpp) take any key; the SDK insists on one.
            api_key=config.api_key or "no-key",
            base_url=config.base_url or None,
            max_retries=0,
            timeout=config.timeout,
            # Never decoded, never longer than the cap: a compressed or endless reply cannot take the
            # worker's memory, nor hold the event loop past the job's deadline.
            http_client=guarded_http_client(cap=config.max_reply_bytes, timeout=config.timeout, follow_redirects=True),
        )

    async def aclose(self) -> None:
        if self._drains:
            await asyncio.gather(*self._drains, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self._client.close()

    @property
    def usage(self) -> cost.Usage:
        """The tokens of every request so far, under the pinned model id (what MODEL_PRICES names)."""
        total = cost.Usage(model=self.config.model)
        for call in self.calls:
            total.add(call.usage(self.config.model))
        return total

    @property
    def use_schema(self) -> bool:
        return self.schema != "none"

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "stream": True,
            self.tokens_param: self.config.max_tokens,
        }
        if self.ask_usage:
            request["stream_options"] = {"include_usage": True}
        if self.use_schema:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "quiz_round",
                    "strict": True,
                    "schema": question_schema(
                        grounded=self.grounded, lengths=self.schema == "bounded", kinds=self.kinds
                    ),
                },
            }
        return request

    def _schema_refused(self, text: str) -> bool:
        """Step down one schema level after the server refused it; False when there is none left."""
        if self.schema == "bounded" and any(keyword in text for keyword in STRING_LENGTH_KEYWORDS):
            logger.info("writer: the server refused string lengths in the schema (%s); asking without them", text[:200])
            self.schema = "no_lengths"
            return True
        if self.schema != "none":
            logger.info("writer: the server rejected the JSON schema (%s); asking without it", text[:200])
            self.schema = "none"
            return True
        return False

    async def _open(self, messages: list[dict[str, str]], deadline: float) -> Any:
        loop = asyncio.get_running_loop()
        delay = BACKOFF_FIRST
        failing_since: float | None = None
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError("the attempt's deadline passed before the model answered")
            try:
                async with asyncio.timeout(remaining):
                    return await self._client.chat.completions.create(**self._request(messages), timeout=remaining)
            except ReplyRefused as refused:
                raise self._refused(refused) from refused
            except openai.BadRequestError as error:
                text = str(error)
                if "max_completion_tokens" in text and self.tokens_param == "max_tokens":
                    self.tokens_param = "max_completion_tokens"
                    continue
                if "stream_options" in text and self.ask_usage:
                    self.ask_usage = False
                    continue
                if self._schema_refused(text):
                    continue
                raise WriterError(f"The model server refused the request: {text[:200]}") from error
            except (openai.AuthenticationError, openai.PermissionDeniedError) as error:
                raise WriterError("The model server refused the API key (check OPENAI_API_KEY).") from error
            except openai.NotFoundError as error:
                raise WriterError(
                    f"The model server does not know the model {self.config.model!r} (check QUIZ_WRITER_MODEL "
                    "and OPENAI_BASE_URL)."
                ) from error
            except (openai.APIStatusError, openai.APIConnectionError, TimeoutError) as error:
                status = getattr(error, "status_code", None)
                if isinstance(error, openai.APIStatusError) and status != 429 and status < 500:
                    raise WriterError(f"The model server answered {status}: {str(error)[:200]}") from error
                wait = min(_retry_after(error) or delay, BACKOFF_MAX)
                logger.info("writer: %s; retrying in %.1fs", status or type(error).__name__, wait)
                failing_since = loop.time() if failing_since is None else failing_since
                if self._gives_up(error, failed_for=loop.time() + wait - failing_since):
                    raise WriterError(
                        f"The model server kept failing ({status or 'no connection'}) for "
                        f"{loop.time() - failing_since:.0f} seconds after some questions were ready; the round "
                        "ends with those."
                    ) from error
                if deadline - loop.time() <= wait:
                    if isinstance(error, TimeoutError | openai.APITimeoutError):
                        # Slow, not failing: the attempt is cut at its deadline like a slow stream.
                        raise TimeoutError("the model did not answer before the attempt's deadline") from error
                    raise WriterError(
                        f"The model server kept failing ({status or 'no connection'}) for "
                        f"{self.config.timeout:g} seconds. Try again later."
                    ) from error
                await asyncio.sleep(wait)
                delay = min(delay * 2, BACKOFF_MAX)

    def _gives_up(self, error: BaseException, *, failed_for: float) -> bool:
        """A failing server (5xx, no connection; not one asking to wait, 429, nor a slow one) past `give_up_after`."""
        if self.give_up_after is None or isinstance(error, TimeoutError | openai.APITimeoutError):
            return False
        if isinstance(error, openai.APIStatusError) and error.status_code == 429:
            return False
        return failed_for > self.give_up_after

    async def stream_text(self, messages: list[dict[str, str]], *, deadline: float) -> AsyncIterator[str]:
        """The reply's text; `deadline` (the event loop's clock) bounds opening it, retries included."""
        stream = await self._open(messages, deadline)
        tokens = CallTokens(messages)
        self.calls.append(tokens)
        drained = False
        try:
            async for chunk in stream:
                self.served_model = str(getattr(chunk, "model", None) or self.served_model)[:200]
                tokens.count(chunk)
                for choice in getattr(chunk, "choices", None) or []:
                    delta = getattr(choice, "delta", None)
                    content = getattr(delta, "content", None) if delta is not None else None
                    if content:
                        tokens.reply_chars += len(content)
                        yield content
        except GeneratorExit:
            # The writer has the questions it needs; the token usage comes in the stream's last chunk, a moment
            # later. Read to it in the background (never past USAGE_DRAIN_SECONDS) rather than hold the writer.
            drained = True
            self._drains.add(task := asyncio.ensure_future(_drain_usage(stream, tokens, deadline=deadline)))
            task.add_done_callback(self._drains.discard)
            raise
        except ReplyRefused as refused:
            raise self._refused(refused) from refused
        except (openai.APIError, OSError) as error:
            raise StreamBroken(str(error)[:200]) from error
        finally:
            if not drained:
                with contextlib.suppress(Exception):
                    await stream.close()

    def _refused(self, refused: ReplyRefused) -> WriterError:
        if refused.reason == "encoded_body":
            return WriterError(
                f"The model server sent a compressed reply ({refused.message}). "
                "Check OPENAI_BASE_URL: a proxy in front of the server may be compressing replies."
            )
        return WriterError(
            f"The model's reply went past {_size(self.config.max_reply_bytes)} (QUIZ_WRITER_MAX_REPLY_BYTES) and "
            "was cut there; the questions completed before that are kept."
        )


async def _drain_usage(stream: Any, tokens: CallTokens, *, deadline: float) -> None:
    """The rest of a reply the writer no longer needs, read only for its usage chunk, then closed."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(min(deadline, loop.time() + USAGE_DRAIN_SECONDS)):
            async for chunk in stream:
                tokens.count(chunk)
                for choice in getattr(chunk, "choices", None) or []:
                    tokens.reply_chars += len(getattr(getattr(choice, "delta", None), "content", None) or "")
    except Exception:  # noqa: BLE001 - a timeout or a broken stream: only a figure is lost
        pass
    finally:
        with contextlib.suppress(Exception):
            await stream.close()


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):g} MiB"
    return f"{count / 1024:g} KiB" if count >= 1024 else f"{count} bytes"


def _retry_after(error: BaseException) -> float | None:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        return max(0.0, float(headers.get("retry-after", "")))
    except ValueError:
        return None
