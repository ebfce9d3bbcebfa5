"""The game's writes, one module per job (after Zulip's `zerver/actions/`):

- `rooms.py`: rooms and their codes, the host's and co-hosts' tokens, the room's lock and speed bonus;
- `players.py`: joining (one or many at once), resuming, removal, the extra time a host gives;
- `progress.py`: game progress, every phase change a compare-and-set on the room's row (the host's actions,
  closing and scoring a question, the clock's closing of due questions, the resume after a database outage);
- `answers.py`: answers stored in batches, then counted (a question everyone has answered closes);
- `reports.py`: players' reports of a question;
- `teams.py`: a room's teams, where a joining player goes, a player's switch of team in the lobby;
- `words.py`: words the host hides from the big screen (an open question's cloud);
- `review.py`: what the game tells the review queue (reports, the crowd's disagreement), and voiding a question;
- `retention.py`: what players leave behind, deleted RETENTION_DAYS after the game's last activity;
- `common.py`: what several of them share (the lobby-sized bump, the room's closing time).

The names are re-exported here, so callers write `from lobby import services` and `services.game_act(...)`.
"""

from lobby.exceptions import AnswerRefused
from lobby.services.answers import (
    AnswerAck,
    AnswerIn,
    answer_given,
    answer_submit,
    answers_counted,
    answers_store,
    answers_submit,
)
from lobby.services.players import (
    Joined,
    JoinIn,
    player_blocked_check,
    player_join,
    player_remove,
    player_resume,
    player_time_request_decline,
    player_time_set,
    players_join,
)
from lobby.services.progress import close_due_questions, game_act, question_close, resume_after_outage, writing_tick
from lobby.services.reports import report_create
from lobby.services.rooms import (
    CODE_ALPHABET,
    CODE_LENGTH,
    CreatedRoom,
    cohost_join,
    cohost_link_key,
    cohost_link_replace,
    host_resume,
    host_token_for_owner,
    normalize_code,
    room_by_code,
    room_create,
    room_set_locked,
    room_set_no_speed_bonus,
    room_set_reading_seconds,
    room_set_team_talk_seconds,
    room_way_set,
    rooms_move,
)
from lobby.services.teams import player_team_set
from lobby.services.words import word_hide
from lobby.tokens import player_token

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "AnswerAck",
    "AnswerIn",
    "answer_given",
    "AnswerRefused",
    "CreatedRoom",
    "JoinIn",
    "Joined",
    "answer_submit",
    "answers_counted",
    "answers_store",
    "answers_submit",
    "close_due_questions",
    "cohost_join",
    "cohost_link_key",
    "cohost_link_replace",
    "game_act",
    "host_resume",
    "host_token_for_owner",
    "normalize_code",
    "player_blocked_check",
    "player_join",
    "player_remove",
    "player_resume",
    "player_team_set",
    "player_time_request_decline",
    "player_time_set",
    "player_token",
    "players_join",
    "question_close",
    "report_create",
    "resume_after_outage",
    "word_hide",
    "writing_tick",
    "room_by_code",
    "room_create",
    "room_set_locked",
    "room_set_no_speed_bonus",
    "room_set_reading_seconds",
    "room_way_set",
    "room_set_team_talk_seconds",
    "rooms_move",
]
