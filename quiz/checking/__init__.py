"""Check my questions: an existing round's questions sent through the gate as a generation job of kind "check"
(`rounds`: creating the job, running it, the marks the editor shows). It imports nothing of `quiz.generation`;
the runner there runs its jobs.
"""
