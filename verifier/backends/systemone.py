"""System One (`POST /v1/systemone`): every check of one question as `noul` questions in one call, and the blind
question as one `choice` question in a call of its own."""

from collections.abc import Mapping
from typing import Any

import httpx

from verifier import policy
from verifier.backends.base import (
    BackendAnswer,
    BlindAnswer,
    CallBudget,
    GateFailure,
    checked_probability,
    parse_json_object,
    read_capped,
    served_model,
    status_failure,
    token_count,
    transport_failure,
)
from verifier.backends.replies import IDENTITY, ReplyRefused, refuse_encoded
from verifier.conf import GateConfig
from verifier.prompts import BLIND_INSTRUCTIONS, CHECKS


def systemone_request_body(
    *, model: str, document_field: str, document: Mapping[str, Any], checks: tuple[str, ...]
) -> dict[str, Any]:
    return {
        "model": model,
        document_field: dict(document),
        "questions": {
            name: {
                "type": "noul",
                "instructions": CHECKS[name].instructions,
                "criteria": {"true": CHECKS[name].when_true, "false": CHECKS[name].when_false},
            }
            for name in checks
        },
    }


def systemone_blind_body(*, model: str, document_field: str, document: Mapping[str, Any]) -> dict[str, Any]:
    """One `choice` question whose criteria map each option letter to the option's text."""
    return {
        "model": model,
        document_field: dict(document),
        "questions": {
            policy.BLIND: {
                "type": "choice",
                "instructions": BLIND_INSTRUCTIONS,
                "criteria": dict(document["options"]),
            }
        },
    }


def systemone_probabilities(payload: Mapping[str, Any], *, checks: tuple[str, ...]) -> dict[str, float]:
    answers = payload.get("answers")
    if not isinstance(answers, dict):
        raise GateFailure("missing_answers", "the reply has no `answers` object")
    probabilities = {}
    for name in checks:
        answer = answers.get(name)
        if not isinstance(answer, dict):
            raise GateFailure("missing_answer", f"the reply has no answer for {name}")
        probabilities[name] = checked_probability(answer.get("noul"), check=name)
    return probabilities


def systemone_choice_probabilities(payload: Mapping[str, Any], *, letters: tuple[str, ...]) -> dict[str, float]:
    """answers.blind.probabilities, per option letter. A letter the reply leaves out counts 0; one it adds is
    ignored; a reply with none of the letters is no answer."""
    answers = payload.get("answers")
    if not isinstance(answers, dict):
        raise GateFailure("missing_answers", "the reply has no `answers` object")
    answer = answers.get(policy.BLIND)
    if not isinstance(answer, dict):
        raise GateFailure("missing_answer", f"the reply has no answer for {policy.BLIND}")
    given = answer.get("probabilities")
    if not isinstance(given, dict):
        raise GateFailure("missing_probability", f"no probabilities for {policy.BLIND}")
    found = {
        letter: checked_probability(given[letter], check=f"{policy.BLIND} option {letter}")
        for letter in letters
        if letter in given
    }
    if not found:
        raise GateFailure("missing_probability", f"no probability for any option of {policy.BLIND}")
    return {letter: found.get(letter, 0.0) for letter in letters}


class SystemOneBackend:
    name = "systemone"

    def __init__(self, config: GateConfig) -> None:
        self.config = config
        self.model_id = config.model_id
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.config.timeout),
                follow_redirects=False,
                limits=httpx.Limits(
                    max_connections=self.config.concurrency, max_keepalive_connections=self.config.concurrency
                ),
            )
        return self._client

    def _check_configured(self) -> None:
        if not self.config.api_key:
            raise GateFailure("no_api_key", "VERIFIER_API_KEY is not set")
        if not self.config.base_url or not self.config.model_id:
            raise GateFailure("not_configured", "VERIFIER_BASE_URL and VERIFIER_MODEL are required")

    async def _post(self, body: dict[str, Any], budget: CallBudget) -> dict[str, Any]:
        config = self.config
        headers = {
            "Authorization": f"Bearer {config.api_key}",
            "Accept": "application/json",
            "Accept-Encoding": IDENTITY,
        }
        reading_body = False
        async with budget.call():
            try:
                async with self._http().stream(
                    "POST", f"{config.base_url}/v1/systemone", json=body, headers=headers
                ) as response:
                    if not 200 <= response.status_code < 300:
                        raise status_failure(response.status_code)
                    # Raw bytes only: httpx would decode each read in one blocking step, before it is counted.
                    refuse_encoded(response.headers)
                    reading_body = True
                    raw = await read_capped(
                        response.aiter_raw(),
                        cap=config.max_body_bytes,
                        declared_length=response.headers.get("content-length"),
                    )
            except ReplyRefused as exc:
                raise GateFailure(exc.reason, exc.message) from exc
            except httpx.HTTPError as exc:
                raise transport_failure(exc, reading_body=reading_body) from exc
        return parse_json_object(raw)

    async def ask(self, *, document: Mapping[str, Any], checks: tuple[str, ...], budget: CallBudget) -> BackendAnswer:
        self._check_configured()
        body = systemone_request_body(
            model=self.config.model_id, document_field=self.config.document_field, document=document, checks=checks
        )
        payload = await self._post(body, budget)
        probabilities = systemone_probabilities(payload, checks=checks)
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        return BackendAnswer(
            probabilities=probabilities,
            input_tokens=token_count(usage.get("input_tokens")),
            output_tokens=token_count(usage.get("output_tokens")),
            calls=1,
            details={"served_model": served} if (served := served_model(payload)) else {},
        )

    async def ask_blind(
        self, *, document: Mapping[str, Any], letters: tuple[str, ...], budget: CallBudget
    ) -> BlindAnswer:
        self._check_configured()
        body = systemone_blind_body(
            model=self.config.model_id, document_field=self.config.document_field, document=document
        )
        payload = await self._post(body, budget)
        probabilities = systemone_choice_probabilities(payload, letters=letters)
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        answer = payload["answers"][policy.BLIND]
        details: dict[str, Any] = {}
        if isinstance(answer.get("choice"), str):
            details["served_choice"] = answer["choice"][:20]
        if policy.is_probability(answer.get("confidence")):
            details["confidence"] = float(answer["confidence"])
        if served := served_model(payload):
            details["served_model"] = served
        return BlindAnswer(
            probabilities=probabilities,
            input_tokens=token_count(usage.get("input_tokens")),
            output_tokens=token_count(usage.get("output_tokens")),
            details=details,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
