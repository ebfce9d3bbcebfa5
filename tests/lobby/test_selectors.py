import csv
import io

import pytest

from lobby import services
from lobby.selectors import results_csv

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
