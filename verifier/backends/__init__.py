from verifier.backends.base import Backend, BackendAnswer, BlindAnswer, CallBudget, GateFailure
from verifier.conf import GateConfig


def backend_for(config: GateConfig) -> Backend:
    if config.backend == "systemone":
        from verifier.backends.systemone import SystemOneBackend

        return SystemOneBackend(config)
    if config.backend == "judge":
        from verifier.backends.judge import JudgeBackend

        return JudgeBackend(config)
    if config.backend == "llm":
        from verifier.backends.llm import LlmBackend

        return LlmBackend(config)
    from verifier.backends.off import OffBackend

    return OffBackend(config)


__all__ = ["Backend", "BackendAnswer", "BlindAnswer", "CallBudget", "GateFailure", "backend_for"]
