import csv
import io

import pytest

from lobby import services
from lobby.reads.selectors import crowd_rule, results_csv
from lobby.rules import machine

pytestmark = pytest.mark.django_db


def test_the_results_csv_neutralises_every_nickname_a_spreadsheet_would_run(make_room):
    room = make_room().room
    nicknames = ['=HYPERLINK("x")', "+1", "-1+2", "@SUM(A1)", "Ada"]
    for nickname in nicknames:
        services.player_join(code=room.code, nickname=nickname)
    rows = list(csv.reader(io.StringIO(results_csv(room=room))))
    assert rows[0][:3] == ["rank", "nickname", "score"]
    written = sorted(row[1] for row in rows[1:])
    assert written == sorted(['\'=HYPERLINK("x")', "'+1", "'-1+2", "'@SUM(A1)", "Ada"])
    assert all(row[0].isdigit() and row[2] == "0" for row in rows[1:])  # numbers stay numbers


def test_crowd_settings_are_read_at_call_time(settings):
    assert crowd_rule() == machine.CrowdRule(min_answers=5, majority=0.6)  # the defaults
    settings.CROWD_MIN_ANSWERS = 3
    settings.CROWD_MAJORITY = 0.9
    assert not machine.crowd_verdict(distribution=[2, 1], correct_index=1, rule=crowd_rule()).disagrees
    assert machine.crowd_verdict(distribution=[3, 0], correct_index=1, rule=crowd_rule()).disagrees
