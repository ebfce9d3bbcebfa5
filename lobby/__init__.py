"""The game: rooms, players, answers and the clock, played live over WebSockets.

Owns the rooms' rules (machine.py, pure, which import-linter checks: no Django, Channels or asgiref; phases,
scoring, streaks, voided questions, the crowd verdict; teams.py, pure too: team names, where a new player goes, a
team's score as its members' mean), their writes (the services/ package, one module per job: rooms.py with codes and
host/co-host tokens, players.py, progress.py where every phase change is a compare-and-set on the room's row,
answers.py in batches, reports.py, teams.py), the team board from the stored answers (team_board.py), reads and
snapshots (selectors.py, each question shown and judged by its kind from quiz.kinds, in the room's order from
showing.py), the events sent after commit (events.py), a broadcast's frames encoded once per process (frames.py),
the consumer and its database threads and batches (consumers.py, game_db.py), the game clock (started once per
process by the ASGI lifespan), the per-IP limits (ratelimit.py), the game's half of the review queue's admin
(admin.py, through review's admin hooks), and a question's record in its owner's bank with the bank's pages
(question_record.py, bank_views.py: quiz.questions.bank searches, and the record reads the game and the review side).

May import: review, quiz, verifier, core. Nothing imports lobby but config.
"""
