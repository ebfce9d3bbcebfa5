"""Model-written rounds: `prompts` (what is asked) -> `model_client` (the model's server) and `replies` (reading
its answer) -> `writer` (the round's policy; its host sentences in `writer_messages`) -> `jobs` (a job's life, in
the database; `limits` admits it) -> `runner` (where a job of any kind runs, QUIZ_GENERATION_RUNNER; `job_run`
is the entry point the Celery task in `quiz.tasks` calls). Its pages are `views`, its live socket `consumers`,
uploaded sources `uploads` (a PDF read by `python -m quiz.generation.pdf_text` in a child process).
"""
