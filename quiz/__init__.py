"""Questions, rounds and packs, the one validation, import/export, and model-written rounds.

Writing a round: `prompts` (what is asked) -> `model_client` (the model's server) and `replies` (reading its
answer) -> `writer` (the round's policy) -> `jobs` (a job's life, in the database) -> `tasks` (the Celery
entry) -> `runner` (where a job runs, QUIZ_GENERATION_RUNNER). Reads are `selectors`, signed page tokens
`tokens`, uploaded sources `uploads`. "Check my questions" (`checking`) runs a round through the gate when
`verifier.registry.gate_enabled()` says a checker is configured (any backend the registry lists). Imports run
that one way; quiz imports the gate (`verifier`) and `core`, never `review` or `lobby` (they hear about rounds
through `signals`).
"""
