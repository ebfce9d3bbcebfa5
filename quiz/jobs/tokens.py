"""The signed token a host's generation page carries: job ids are sequential, progress is the host's own."""

from django.core import signing

TOKEN_SALT = "quiz.generation"


def generation_token(*, job_id: int) -> str:
    return signing.dumps(int(job_id), salt=TOKEN_SALT)


def generation_token_job_id(token: str) -> int | None:
    try:
        return int(signing.loads(token, salt=TOKEN_SALT, max_age=24 * 3600))
    except (signing.BadSignature, TypeError, ValueError):
        return None
