"""Any OpenAI-compatible chat model, logprobs or not: an LLM-as-judge report per question.

One call per question asks for a JSON report: a probability for each check (the closed-book two, or the grounded
four), the claims the judge finds false or unsupported, a one-sentence suggested fix and the option it would mark.
The blind question is one more call, answered with one letter and a probability. Each call asks for the reply
with a JSON schema first; a server that refuses that (HTTP 400/422) is asked for a JSON object, then for plain
text, and the backend remembers for the rest of the round what the server took. Until the server has answered
once, one call at a time walks that ladder and the others wait for it in their slots (within their own deadlines),
so a server that refuses every format costs the ladder once per round, not once per call. Whatever comes back is parsed
defensively (the whole text, a code fence, the outermost object) and every field is checked: a probability
that is missing, text, not finite or outside [0, 1] fails the question open with its own reason; lists and
strings are cut to size.

Reasoning models think before they answer and their thinking counts against the completion limit, so the limit
is generous (VERIFIER_JUDGE_MAX_TOKENS); each call's hard deadline (VERIFIER_TIMEOUT) holds all the same. A
reply cut at the limit before the report closed fails open as `truncated_report`, with the reasoning tokens the
server reported.
"""

import asyncio
from collections.abc import Mapping
from typing import Any

import httpx2
import openai

from verifier.backends.base import (
    BackendAnswer,
    BlindAnswer,
    CallBudget,
    GateFailure,
    parse_json_object,
    read_capped,
    served_model,
    status_failure,
    token_count,
    transport_failure,
)
from verifier.backends.judge_report import (
    FORMATS,
    blind_messages,
    blind_schema,
    reasoning_tokens,
    reply_object,
    report_claims,
    report_fix,
    report_letter,
    report_messages,
    report_probability,
    report_schema,
)
from verifier.backends.llm import openai_client
from verifier.backends.replies import ReplyRefused
from verifier.conf import GateConfig


class JudgeBackend:
    name = "judge"

    def __init__(self, config: GateConfig) -> None:
        self.config = config
        self.model_id = config.model_id
        self._client: openai.AsyncOpenAI | None = None
        # What this server took, learnt from its refusals (for the rest of the round).
        self._format_index = 0
        self._send_temperature = True
        # Until the server has answered one call with anything but a refusal of its options, one call at a time
        # (the learner) goes out: the others wait in their slots, within their own deadlines, and are sent as it
        # learnt, instead of each walking the ladder.
        self._learnt = False
        self._learner_out = False
        self._learner_done = asyncio.Event()

    def _openai(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self._client = openai_client(self.config)
        return self._client

    def _check_configured(self) -> None:
        if not self.config.api_key and not self.config.base_url:
            raise GateFailure("no_api_key", "VERIFIER_API_KEY is not set and no VERIFIER_BASE_URL points elsewhere")
        if not self.config.model_id:
            raise GateFailure("not_configured", "VERIFIER_MODEL is required")

    def _options(self, fmt: str, *, name: str, schema: dict[str, Any], temperature: bool) -> dict[str, Any]:
        options: dict[str, Any] = {"max_completion_tokens": self.config.judge_max_tokens}
        if temperature:
            options["temperature"] = 0
        if fmt == "json_schema":
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        elif fmt == "json_object":
            options["response_format"] = {"type": "json_object"}
        return options

    async def _post(
        self, *, messages: list[dict[str, str]], name: str, schema: dict[str, Any], budget: CallBudget
    ) -> tuple[bytes, str]:
        """(raw body, the format asked in). The options are chosen once the call has its slot (and the learner,
        if one is out, has come back), so a call that waited is sent with what the calls before it learnt."""
        reading_body = False
        async with budget.call():
            while not self._learnt and self._learner_out:
                await self._learner_done.wait()
            learner = not self._learnt
            if learner:
                self._learner_out = True
            index, sent_temperature = self._format_index, self._send_temperature
            fmt = FORMATS[index]
            refused_options = False
            try:
                async with self._openai().chat.completions.with_streaming_response.create(
                    model=self.config.model_id,
                    messages=messages,
                    **self._options(fmt, name=name, schema=schema, temperature=sent_temperature),
                ) as response:
                    reading_body = True
                    raw = await read_capped(
                        response.http_response.aiter_raw(),
                        cap=self.config.max_body_bytes,
                        declared_length=response.headers.get("content-length"),
                    )
                    return raw, fmt
            except ReplyRefused as exc:
                raise GateFailure(exc.reason, exc.message) from exc
            except openai.APIStatusError as exc:
                if exc.status_code in (400, 422):
                    refused_options = True
                    refused = _OptionsRefused(exc.status_code, str(exc.message or ""))
                    refused.format_index, refused.sent_temperature = index, sent_temperature
                    raise refused from exc
                raise status_failure(exc.status_code) from exc
            except (openai.APIError, httpx2.HTTPError) as exc:
                raise transport_failure(exc, reading_body=reading_body) from exc
            except asyncio.CancelledError:
                refused_options = True  # cut before it said anything: the next call learns instead
                raise
            finally:
                if learner:
                    # An answer, or a failure that says nothing about the options (a timeout, an outage, a bad
                    # reply): the server takes these options as far as anyone can tell, so the rest go out at once.
                    self._learnt = not refused_options
                    self._learner_out = False
                    done, self._learner_done = self._learner_done, asyncio.Event()
                    done.set()

    def _step_down(self, refused: "_OptionsRefused") -> None:
        """Learn from a refusal what the server does not take; raise when nothing is left to drop."""
        if refused.sent_temperature and "temperature" in refused.refusal.lower():
            # Some reasoning models take only their default temperature.
            self._send_temperature = False
        elif refused.format_index + 1 < len(FORMATS):
            # max: a call refused for a format the round has already stepped past is simply asked again.
            self._format_index = max(self._format_index, refused.format_index + 1)
        else:
            raise GateFailure("http_status", refused.message, status=refused.status) from refused

    async def _complete(
        self, *, messages: list[dict[str, str]], name: str, schema: dict[str, Any], budget: CallBudget
    ) -> tuple[dict[str, Any], str, int]:
        """(chat completion, the format it was asked in, calls made): down the format ladder on each refusal."""
        calls = 0
        while True:
            calls += 1
            try:
                raw, fmt = await self._post(messages=messages, name=name, schema=schema, budget=budget)
            except _OptionsRefused as refused:
                self._step_down(refused)
                continue
            return parse_json_object(raw), fmt, calls

    async def ask(self, *, document: Mapping[str, Any], checks: tuple[str, ...], budget: CallBudget) -> BackendAnswer:
        self._check_configured()
        letters = tuple(document.get("options") or ())
        payload, fmt, calls = await self._complete(
            messages=report_messages(document=document, checks=checks, letters=letters),
            name="quiz_question_report",
            schema=report_schema(checks=checks, letters=letters),
            budget=budget,
        )
        report = reply_object(payload, max_tokens=self.config.judge_max_tokens)
        probabilities = {name: report_probability(report, name) for name in checks}
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        details: dict[str, Any] = {
            "judge": {
                "unsupported_claims": report_claims(report.get("unsupported_claims")),
                "suggested_fix": report_fix(report.get("suggested_fix")),
                "suggested_option": report_letter(report.get("suggested_option"), letters),
                "reasoning_tokens": reasoning_tokens(payload),
                "format": fmt,
            }
        }
        if served := served_model(payload):
            details["served_model"] = served
        return BackendAnswer(
            probabilities=probabilities,
            input_tokens=token_count(usage.get("prompt_tokens")),
            output_tokens=token_count(usage.get("completion_tokens")),
            calls=calls,
            details=details,
        )

    async def ask_blind(
        self, *, document: Mapping[str, Any], letters: tuple[str, ...], budget: CallBudget
    ) -> BlindAnswer:
        self._check_configured()
        payload, fmt, calls = await self._complete(
            messages=blind_messages(document=document, letters=letters),
            name="quiz_blind_answer",
            schema=blind_schema(letters=letters),
            budget=budget,
        )
        answer = reply_object(payload, max_tokens=self.config.judge_max_tokens)
        letter = report_letter(answer.get("answer"), letters)
        if letter is None:
            raise GateFailure("no_option_letter", f"the answer {str(answer.get('answer'))[:20]!r} is not an option")
        stated = report_probability(answer, "probability")
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        details: dict[str, Any] = {"served_choice": letter, "confidence": stated, "format": fmt}
        if (thought := reasoning_tokens(payload)) is not None:
            details["reasoning_tokens"] = thought
        if served := served_model(payload):
            details["served_model"] = served
        return BlindAnswer(
            probabilities=letter_spread(letter, stated, letters),
            input_tokens=token_count(usage.get("prompt_tokens")),
            output_tokens=token_count(usage.get("completion_tokens")),
            details=details,
            calls=calls,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def letter_spread(letter: str, stated: float, letters: tuple[str, ...]) -> dict[str, float]:
    """One letter and its probability as a probability per option: the rest shared by the other options.

    The letter chosen is at least as likely as any other (a stated 0.1 of four options reads as 0.25 each)."""
    others = [other for other in letters if other != letter]
    if not others:
        return {letter: 1.0}
    chosen = max(stated, 1.0 / len(letters))
    rest = (1.0 - chosen) / len(others)
    return {other: (chosen if other == letter else rest) for other in letters}


class _OptionsRefused(GateFailure):
    """The server refused the request's options (HTTP 400/422): a format or a parameter it does not take.

    A GateFailure, so the call budget's guard hears that the server answered (a refusal is not an outage).
    It carries what the refused request was sent with (the round's other calls may have learnt more since)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__("http_status", f"HTTP {status}: {message[:200]}", status=status)
        self.refusal = message
        self.format_index = 0
        self.sent_temperature = True
