from collections.abc import Mapping
from typing import Any

from verifier.backends.base import BackendAnswer, BlindAnswer, CallBudget, GateFailure
from verifier.conf import GateConfig


class OffBackend:
    """Nothing is checked; the gate labels every question `unchecked` without asking this backend."""

    name = "off"

    def __init__(self, config: GateConfig) -> None:
        self.model_id = ""

    async def ask(self, *, document: Mapping[str, Any], checks: tuple[str, ...], budget: CallBudget) -> BackendAnswer:
        raise GateFailure("off", "the gate is off")

    async def ask_blind(
        self, *, document: Mapping[str, Any], letters: tuple[str, ...], budget: CallBudget
    ) -> BlindAnswer:
        raise GateFailure("off", "the gate is off")

    async def aclose(self) -> None:
        return None
