from celery import shared_task

from quiz.checking import job_run


@shared_task(name="quiz.generate_round")
def generate_round(job_id: int) -> None:
    job_run(job_id=job_id)
