from celery import shared_task

from quiz.jobs import generation_run


@shared_task(name="quiz.generate_round")
def generate_round(job_id: int) -> None:
    generation_run(job_id=job_id)
