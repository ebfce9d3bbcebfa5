"""The checker backends, one module each; which names exist and what each can do is verifier/registry.py."""

from verifier.backends.base import Backend, BackendAnswer, BlindAnswer, CallBudget, GateFailure

__all__ = ["Backend", "BackendAnswer", "BlindAnswer", "CallBudget", "GateFailure"]
