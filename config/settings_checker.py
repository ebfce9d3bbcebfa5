"""The checker's settings (verifier/, the review's crowd signal and sweep), read from the environment.

Star-imported by config/settings.py after the .env file is read; each default is declared here once, and
verifier/conf.py only reads them.
"""

import environ

env = environ.Env()

# The gate (verifier/): off | systemone | llm | judge. Each default is declared here only; verifier/conf.py reads these.
VERIFIER_BACKEND = env("VERIFIER_BACKEND", default="off")
VERIFIER_MODEL = env("VERIFIER_MODEL", default="")  # pinned, e.g. jev-1.13.0; a moving name is refused
VERIFIER_API_KEY = env("VERIFIER_API_KEY", default="")
VERIFIER_BASE_URL = env("VERIFIER_BASE_URL", default="")
VERIFIER_TIMEOUT = env.float("VERIFIER_TIMEOUT", default=6.0)
VERIFIER_CONCURRENCY = env.int("VERIFIER_CONCURRENCY", default=4)
VERIFIER_DOCUMENT_FIELD = env("VERIFIER_DOCUMENT_FIELD", default="document")
VERIFIER_ALLOW_MODEL_ALIAS = env.bool("VERIFIER_ALLOW_MODEL_ALIAS", default=False)
# An id with no date or version (gpt-4o, model-v2, llama3:8b) is a warning (verifier.W004) until acknowledged here.
VERIFIER_ALLOW_UNPINNED_MODEL = env.bool("VERIFIER_ALLOW_UNPINNED_MODEL", default=False)
VERIFIER_MAX_BODY_BYTES = env.int("VERIFIER_MAX_BODY_BYTES", default=256 * 1024)
VERIFIER_DEFAULT_THRESHOLD = env.float("VERIFIER_DEFAULT_THRESHOLD", default=0.6)
# `llm`: a first token with less than this share on Yes/No is no answer (unverified, reason not_yes_no).
VERIFIER_YES_NO_FLOOR = env.float("VERIFIER_YES_NO_FLOOR", default=0.5)
# `judge`: the completion limit of one report; a reasoning model's thinking counts against it. 0 (the default):
# 512, what a one-line report needs, or 4096 for a reasoning model. Which it is: VERIFIER_JUDGE_REASONING (true or
# false), or with "auto" (the default) by the judge's model id: o1, o3, o4, gpt-5, r1, qwq, or a part "reason",
# "reasoning", "think", "thinking" (split at non-alphanumerics).
VERIFIER_JUDGE_MAX_TOKENS = env.int("VERIFIER_JUDGE_MAX_TOKENS", default=0)
VERIFIER_JUDGE_REASONING = env("VERIFIER_JUDGE_REASONING", default="auto")
# Grounded rounds (a source document): the bounds a question's support and contradiction scores must keep.
VERIFIER_SUPPORTED_MIN = env.float("VERIFIER_SUPPORTED_MIN", default=0.85)
VERIFIER_ANSWERS_QUESTION_MIN = env.float("VERIFIER_ANSWERS_QUESTION_MIN", default=0.80)
VERIFIER_UNSUPPORTED_DETAIL_MAX = env.float("VERIFIER_UNSUPPORTED_DETAIL_MAX", default=0.15)
VERIFIER_CONTRADICTION_MAX = env.float("VERIFIER_CONTRADICTION_MAX", default=0.10)
# Blind re-answer: the checker picks the right option without seeing the marked one; P(marked) joins the min.
VERIFIER_BLIND = env.bool("VERIFIER_BLIND", default=True)
# "The checker chose X": another option got at least this probability (and more than the marked one).
VERIFIER_BLIND_DISAGREE = env.float("VERIFIER_BLIND_DISAGREE", default=0.5)
# The blind question shows the options in an order shuffled per question (from this seed and the question, so
# a run can be reproduced), and maps the answer back. With 2 orders it is asked twice, the second time with every
# option moved one place: the answers are averaged, and one that follows the position (the same letter twice, two
# different options) is not scored and flags nothing. 1 only spreads a favourite letter over the options.
VERIFIER_BLIND_ORDERS = env.int("VERIFIER_BLIND_ORDERS", default=2)
VERIFIER_BLIND_SEED = env("VERIFIER_BLIND_SEED", default="")
# A second opinion for the borderline: with VERIFIER_SECOND_OPINION_MODEL set, a question whose score lies within
# VERIFIER_SECOND_OPINION_BAND of its threshold is asked again, by this backend (llm: any OpenAI-compatible chat
# model with logprobs) at this URL, before the gate decides; its verdict decides. It has its own deadline and
# fails open to the first verdict; the round's budget (VERIFIER_TIMEOUT after writing ends) still holds.
VERIFIER_SECOND_OPINION_BACKEND = env("VERIFIER_SECOND_OPINION_BACKEND", default="llm")
VERIFIER_SECOND_OPINION_MODEL = env("VERIFIER_SECOND_OPINION_MODEL", default="")
VERIFIER_SECOND_OPINION_BASE_URL = env("VERIFIER_SECOND_OPINION_BASE_URL", default="")
VERIFIER_SECOND_OPINION_API_KEY = env("VERIFIER_SECOND_OPINION_API_KEY", default="")
VERIFIER_SECOND_OPINION_BAND = env.float("VERIFIER_SECOND_OPINION_BAND", default=0.1)
VERIFIER_SECOND_OPINION_TIMEOUT = env.float("VERIFIER_SECOND_OPINION_TIMEOUT", default=10.0)
# Circuit breaker per backend + model id (shared through the cache, so through Redis when REDIS_URL is set):
# this many calls in a row that find the checker unavailable open it; after the cool-down one probe may go.
VERIFIER_BREAKER_FAILURES = env.int("VERIFIER_BREAKER_FAILURES", default=5)
VERIFIER_BREAKER_COOLDOWN = env.float("VERIFIER_BREAKER_COOLDOWN", default=30.0)

# Review: the crowd signal (after a question closes, at least CROWD_MIN_ANSWERS answers and at least
# CROWD_MAJORITY of them on one unmarked option flag it "the crowd disagrees"), and the sweep's trust floor
# (it warns when either class, good or defective, has fewer labels than VERIFIER_SWEEP_MIN_LABELS).
CROWD_MIN_ANSWERS = env.int("CROWD_MIN_ANSWERS", default=5)
CROWD_MAJORITY = env.float("CROWD_MAJORITY", default=0.6)
VERIFIER_SWEEP_MIN_LABELS = env.int("VERIFIER_SWEEP_MIN_LABELS", default=10)
