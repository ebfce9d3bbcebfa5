"""The game: rooms, players, answers and the clock, played live over WebSockets.

In wings, each package's docstring saying what is inside:

- `rules/`: the game's rules (`machine.py`, pure, which import-linter checks: no Django, Channels or asgiref; phases,
  scoring, streaks, voided questions, the crowd verdict; `teams.py`, pure too: team names, where a new player goes, a
  team's score as its members' mean; `nicknames.py`, and `friendly_names.py` with its word lists in `name_words.py`;
  `showing.py`, the order a room shows options in; `ways.py`,
  the ways to play a host sets, one entry each);
- `services/`: the writes, one module per job (`rooms.py` with codes and host/co-host tokens, `players.py`,
  `progress.py` where every phase change is a compare-and-set on the room's row, `answers.py` in batches,
  `reports.py`, `teams.py`, `words.py`, `review.py` what the game tells the review queue, `retention.py`);
- `reads/`: reads and snapshots (`selectors.py`, each question shown and judged by its kind from quiz.kinds), the
  host's view, the team board from the stored answers (`team_board.py`), each process's standings,
  a question's record in its owner's bank (`question_record.py`: it reads the game and the review side);
- `realtime/`: the socket (`consumers.py`, its client messages as a table in `messages.py`), its database threads
  and batches (`game_db.py`, `batching.py`), a broadcast's frames encoded once per process (`frames.py`), one
  subscription per room and process (`fanout.py`), the game clock (started once per process by the ASGI lifespan),
  the per-IP limits (`ratelimit.py`), the heal after outages and lost processes;
- `pages/`: the host's web pages, results and audit trail, the question bank's pages (`bank_views.py`); `homework/`:
  homework's rules and pages.

At the top: what Django expects (models, admin with the game's half of the review queue's admin through review's
admin hooks, apps, urls, tasks, migrations, management), the events sent after commit (`events.py`), the game's
errors (`exceptions.py`) and its signed tokens (`tokens.py`).

May import: review, quiz, verifier, core. Nothing imports lobby but config.
"""
