"""What the checker did with a question, in one word per case, from a verdict's outcome and reason: the one
vocabulary every page, label and export says it with (quiz/check_labels.py puts each into the reader's words).

    passed         the checker answered and the question passed
    rejected       the checker answered and scored it below the threshold (it did not fail: it said no)
    too_slow       no answer in time (a call cut at VERIFIER_TIMEOUT, the round's budget spent, or the breaker
                   resting a checker whose calls ran out of time)
    unreachable    no connection to the checker (refused, reset, DNS, TLS)
    paused         the circuit breaker rests the checker after failures in a row (refused or lost connections, 5xx)
    model_changed  the server now serves another model than the one the threshold was set for
    unusable       the checker answered, but with nothing to score (no logprobs, no yes/no, a bad report ...)
    not_checked    no checker was asked (the gate is off, or the question was never sent)
"""

# The reasons these causes are read from, named here so this vocabulary imports nothing (it is pure, like the
# figures that read it): verifier/breaker.py and verifier/decisions.py take them from here.
UNAVAILABLE = "checker_unavailable"  # the breaker is open: the question was not sent
# Not called either, the breaker being open, but opened by calls that ran out of time: a steadily slow checker is
# said to be too slow and counted in the slow-checker warning, not called unavailable.
SLOW_PAUSED = "checker_slow_paused"
ROUND_BUDGET = "round_budget"  # the round's call budget was spent before the checker answered

PASSED = "passed"
REJECTED = "rejected"
TOO_SLOW = "too_slow"
UNREACHABLE = "unreachable"
PAUSED = "paused"
MODEL_CHANGED = "model_changed"
UNUSABLE = "unusable"
NOT_CHECKED = "not_checked"
CAUSES = (PASSED, REJECTED, TOO_SLOW, UNREACHABLE, PAUSED, MODEL_CHANGED, UNUSABLE, NOT_CHECKED)
# The causes of a question that went unverified (the checker did not give a usable answer).
UNVERIFIED_CAUSES = (TOO_SLOW, UNREACHABLE, PAUSED, MODEL_CHANGED, UNUSABLE)

# A verdict's reason when the served model is not the one pinned (the gate's reason string).
MODEL_CHANGED_REASON = "model_changed"
# A breaker opened by calls that ran out of time pauses a checker that is slow, not absent.
TOO_SLOW_REASONS = frozenset({"timeout", ROUND_BUDGET, SLOW_PAUSED})
UNREACHABLE_REASONS = frozenset(
    {"connection_refused", "connect_error", "connection_closed", "dns_error", "tls_error", "transport_error"}
)


def cause_of(*, outcome: str, reason: str) -> str:
    """The cause for a verdict's outcome (passed / dropped / unverified / unchecked) and reason."""
    if outcome == "passed":
        return PASSED
    if outcome == "dropped":
        return REJECTED
    if outcome == "unchecked" or reason == "gate_off":
        return NOT_CHECKED
    if reason in TOO_SLOW_REASONS:
        return TOO_SLOW
    if reason in UNREACHABLE_REASONS:
        return UNREACHABLE
    if reason == UNAVAILABLE:
        return PAUSED
    if reason == MODEL_CHANGED_REASON:
        return MODEL_CHANGED
    return UNUSABLE


# In the reviewer's (English) admin and the exports beside the cause's code.
CAUSE_WORDS = {
    PASSED: "passed the checker",
    REJECTED: "rejected by the checker",
    TOO_SLOW: "not verified: checker too slow",
    UNREACHABLE: "not verified: checker unreachable",
    PAUSED: "not verified: checker paused by the breaker",
    MODEL_CHANGED: "not verified: the checker's model changed",
    UNUSABLE: "not verified: the checker's answer could not be used",
    NOT_CHECKED: "not checked",
}


def cause_words(*, outcome: str, reason: str) -> str:
    return CAUSE_WORDS[cause_of(outcome=outcome, reason=reason)]
