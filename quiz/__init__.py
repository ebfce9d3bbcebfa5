"""Questions, rounds and packs, in two wings with a small core.

The core: `models`, the one validation (`validation`), `services` and `selectors`, import/export (`importing`,
`audit`), the question bank (`bank`, its word index `search_index`), `packs`, the round pages (`views`, `forms`,
`host_rounds`), `kinds` (each question kind) and
`kind_checks` (what the gate is asked of each kind, and a question's one verdict of its asks, for both wings),
`check_labels` (the marks every page shows, which the models read too), `job_state` (what a generation job of
any kind shares: heartbeat, staleness, broadcast, failing), `tasks` (the Celery entry; queued task names point
here), `events`, `tokens`, `checks` (start-up checks), `conf`, `exceptions`, and `signals`, by which `review`
and `lobby` hear about rounds.

`generation` writes rounds: prompt -> model client and replies -> writer -> jobs -> runner (where any job runs,
QUIZ_GENERATION_RUNNER, and `job_run`, every kind's entry point). `checking` runs a round through the gate when
`verifier.registry.gate_enabled()` says a checker is configured. Imports run one way: the core imports neither
wing except where a page or the task starts a job; `generation` imports `checking`, never the reverse; quiz
imports the gate (`verifier`) and `core`, never `review` or `lobby`.
"""
