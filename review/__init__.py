"""The review side: what a reviewer needs to judge the questions the gate doubted and the game flagged.

Owns the review queue (ReviewItem, a proxy of quiz.Question, and its admin: admin/queue.py), labels (Review), flags
(Flag), the fix of a question, the calibration admin (admin/calibration.py: thresholds, sweep page, labels CSV,
breaker page, checker evaluation runs), the sweep (threshold calibration from labels, pure and by the gate's own
pass rule in verifier.policy; its chart drawn from templates/review/sweep_chart.svg, and its `sweep` command),
the checker evaluation (checker_eval/: items, runs, figures; `manage.py checker_eval`), labelled-set
import and export, and premise groups (round-mates of a defective question, re-checked blind by a Celery task).

May import: quiz, verifier (the gate), core. Never lobby: the game calls review (flag_record) and adds its half
of the queue's admin through review/admin_hooks.py; quiz tells review about dropped questions by a signal
(quiz.signals.round_generated, connected in ReviewConfig.ready).
"""
