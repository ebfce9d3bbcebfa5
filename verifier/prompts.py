"""The fixed wording of each check and how a question is laid out as data for a backend.

Nothing a host or a writer model typed ever becomes an instruction: their text only appears as the
values of a labelled document, and the instructions below are the only instructions sent.
"""

import json
from dataclasses import dataclass
from typing import Any

from verifier import policy

OPTION_LABELS = "ABCDEFGHIJ"


@dataclass(frozen=True)
class CheckSpec:
    name: str
    instructions: str
    when_true: str
    when_false: str
    yes_no_question: str


CHECKS: dict[str, CheckSpec] = {
    spec.name: spec
    for spec in (
        CheckSpec(
            name=policy.ANSWER_CORRECT,
            instructions="The option marked as correct is the factually correct answer to the quiz question.",
            when_true="The marked option is the correct answer to the question.",
            when_false="The marked option is wrong, or another option is at least as correct.",
            yes_no_question="Is the option marked as correct the factually correct answer to the quiz question?",
        ),
        CheckSpec(
            name=policy.EXPLANATION_TRUE,
            instructions="Every factual claim in the explanation is true.",
            when_true="All factual claims in the explanation are true.",
            when_false="At least one factual claim in the explanation is false.",
            yes_no_question="Is every factual claim in the explanation true?",
        ),
        CheckSpec(
            name=policy.SUPPORTED,
            instructions="The marked answer is stated in, or follows directly from, the source text.",
            when_true="The source text supports the marked answer.",
            when_false="The source text does not support the marked answer.",
            yes_no_question="Is the marked answer stated in, or directly supported by, the source text?",
        ),
        CheckSpec(
            name=policy.ANSWERS_QUESTION,
            instructions="The marked option answers the question that is asked.",
            when_true="The marked option is an answer to the question as asked.",
            when_false="The marked option answers a different question, or none.",
            yes_no_question="Does the marked option answer the question that is asked?",
        ),
        CheckSpec(
            name=policy.UNSUPPORTED_DETAIL,
            instructions=(
                "The question, its marked answer or its explanation contains a factual detail "
                "that is not in the source text."
            ),
            when_true="There is at least one detail the source text does not contain.",
            when_false="Every detail is found in the source text.",
            yes_no_question=(
                "Does the question, its marked answer or its explanation contain a factual detail "
                "that is not in the source text?"
            ),
        ),
        CheckSpec(
            name=policy.CONTRADICTION,
            instructions="The question, its marked answer or its explanation contradicts the source text.",
            when_true="Something in the question, answer or explanation contradicts the source text.",
            when_false="Nothing contradicts the source text.",
            yes_no_question="Does the question, its marked answer or its explanation contradict the source text?",
        ),
    )
}


def _flat(value: str) -> str:
    return " ".join(str(value).split())


def question_document(
    *,
    text: str,
    options: tuple[str, ...],
    correct_index: int,
    explanation: str = "",
    source_text: str | None = None,
    language: str = "",
) -> dict[str, Any]:
    """The state a backend sees: data only, each value under a label."""
    labelled = {OPTION_LABELS[i]: _flat(option) for i, option in enumerate(options[: len(OPTION_LABELS)])}
    marked = OPTION_LABELS[correct_index] if 0 <= correct_index < len(labelled) else "?"
    document: dict[str, Any] = {
        "kind": "multiple-choice quiz question",
        "question": _flat(text),
        "options": labelled,
        "marked_correct_option": f"{marked}. {labelled.get(marked, '')}".strip(),
    }
    if explanation.strip():
        document["explanation"] = _flat(explanation)
    if source_text is not None:
        document["source_text"] = source_text.strip()
    if language:
        document["language"] = language
    return document


BLIND_INSTRUCTIONS = "Which option is the factually correct answer to the quiz question?"


def option_letters(options: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(OPTION_LABELS[: min(len(options), len(OPTION_LABELS))])


def blind_document(*, text: str, options: tuple[str, ...], language: str = "") -> dict[str, Any]:
    """The state of the blind question: the question and its options, and nothing that says which one is marked.

    No marked answer and no explanation: a checker that sees the claim tends to agree with it.
    """
    document: dict[str, Any] = {
        "kind": "multiple-choice quiz question",
        "question": _flat(text),
        "options": {letter: _flat(option) for letter, option in zip(option_letters(options), options, strict=False)},
    }
    if language:
        document["language"] = language
    return document


def render_document(document: dict[str, Any]) -> str:
    # JSON keeps every value quoted and escaped, so no value can pose as a label or close the block.
    return json.dumps(document, ensure_ascii=False, indent=2)
