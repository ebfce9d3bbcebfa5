"""The gate: checks a written question with a second model and says whether it may be played.

Owns the registry of checker backends (registry.py: off, systemone, llm, judge; each one's class, needed settings
and capabilities, and `gate_enabled()`, the one answer to "does the gate check?"), the backends and their reply
guards, the policy (scores -> outcome, the pass rule; pure: no Django, no Channels, checked by import-linter),
the prompts, the call budget and the circuit breaker, the settings readers (conf), the round runtime (gate.py:
Gate, GateItem, GateDecision, the round's pass marks in pass_marks.py) and a question's path through it in two
steps: the checker asked (asking.py: the first check and the blind question side by side), then the verdict
(verdict.py: the judgement, the second opinion on the borderline in second_opinion.py, the reason, the cost,
the decision); and its own records: verdicts and thresholds (models, services, selectors).

May import: core, Django, and the libraries it calls. Never quiz, review or lobby: it takes plain data (GateItem)
and returns plain data (GateDecision); a verdict names its question by id ("quiz.Question" as a string).
"""
