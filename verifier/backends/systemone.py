"""System One (`POST /v1/systemone`): every check of one question as `noul` questions in one call."""

from collections.abc import Mapping
from typing import Any

import httpx

from verifier.backends.base import (
    BackendAnswer,
    CallBudget,
    GateFailure,
    checked_probability,
    parse_json_object,
    read_capped,
    status_failure,
    token_count,
    transport_failure,
)
from verifier.conf import GateConfig
from verifier.prompts import CHECKS


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

    async def ask(self, *, document: Mapping[str, Any], checks: tuple[str, ...], budget: CallBudget) -> BackendAnswer:
        config = self.config
        if not config.api_key:
            raise GateFailure("no_api_key", "VERIFIER_API_KEY is not set")
        if not config.base_url or not config.model_id:
            raise GateFailure("not_configured", "VERIFIER_BASE_URL and VERIFIER_MODEL are required")
        body = systemone_request_body(
            model=config.model_id, document_field=config.document_field, document=document, checks=checks
        )
        headers = {"Authorization": f"Bearer {config.api_key}", "Accept": "application/json"}
        reading_body = False
        async with budget.call():
            try:
                async with self._http().stream(
                    "POST", f"{config.base_url}/v1/systemone", json=body, headers=headers
                ) as response:
                    if not 200 <= response.status_code < 300:
                        raise status_failure(response.status_code)
                    reading_body = True
                    raw = await read_capped(
                        response.aiter_bytes(),
                        cap=config.max_body_bytes,
                        declared_length=response.headers.get("content-length"),
                    )
            except httpx.HTTPError as exc:
                raise transport_failure(exc, reading_body=reading_body) from exc
        payload = parse_json_object(raw)
        probabilities = systemone_probabilities(payload, checks=checks)
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        return BackendAnswer(
            probabilities=probabilities,
            input_tokens=token_count(usage.get("input_tokens")),
            output_tokens=token_count(usage.get("output_tokens")),
            calls=1,
            details={"served_model": payload["model"]} if isinstance(payload.get("model"), str) else {},
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
