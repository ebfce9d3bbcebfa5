"""Retention (lobby/services/retention.py): old games and sessions go, recent ones stay whole."""

from datetime import timedelta
from io import StringIO

import pytest
from celery.schedules import crontab
from django.conf import settings as django_settings
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.utils import timezone

from config.celery_app import app
from lobby.models import Answer, Player, Report, Room, VoidedQuestion
from lobby.services.retention import old_data_purge
from lobby.tasks import purge_old_data
from quiz.models import GenerationJob, Round
from tests.factories import AnswerFactory, GenerationJobFactory, PlayerFactory, ReportFactory, RoomFactory

pytestmark = pytest.mark.django_db


def _played_room(*, days_ago: float, nicknames=("Ann", "Ben")) -> Room:
    """A room whose game was played `days_ago`: players joined, answered and one reported then."""
    room = RoomFactory()
    players = [PlayerFactory(room=room, nickname=name) for name in nicknames]
    for player in players:
        AnswerFactory(player=player, option=0)
    ReportFactory(player=players[0])
    _age(room, days_ago)
    return room


def _age(room: Room, days_ago: float) -> None:
    then = timezone.now() - timedelta(days=days_ago)
    Room.objects.filter(pk=room.pk).update(created_at=then)
    Player.objects.filter(room=room).update(joined_at=then)
    Answer.objects.filter(room=room).update(created_at=then)
    Report.objects.filter(room=room).update(created_at=then)


def _session(*, last_used_days_ago: float) -> str:
    store = SessionStore()
    store["owner_key"] = "k" * 16
    store.create()
    age = timedelta(seconds=django_settings.SESSION_COOKIE_AGE)
    Session.objects.filter(pk=store.session_key).update(
        expire_date=timezone.now() - timedelta(days=last_used_days_ago) + age
    )
    return store.session_key


def test_an_old_game_goes_whole_and_a_recent_one_stays_whole(settings):
    settings.RETENTION_DAYS = 30
    old = _played_room(days_ago=31)
    recent = _played_room(days_ago=29, nicknames=("Cy", "Di"))
    purged = old_data_purge()
    assert (purged.rooms, purged.players, purged.answers, purged.reports) == (1, 2, 2, 1)
    assert not Room.objects.filter(pk=old.pk).exists()
    assert not Player.objects.filter(nickname__in=["Ann", "Ben"]).exists()
    assert Answer.objects.filter(room=recent).count() == 2 and Report.objects.filter(room=recent).count() == 1
    assert sorted(Player.objects.filter(room=recent).values_list("nickname", flat=True)) == ["Cy", "Di"]
    # The round and its questions are the host's: they stay for the next game.
    assert Round.objects.get(pk=old.round_id).entries.exists()


def test_an_old_room_still_in_use_is_kept(settings):
    settings.RETENTION_DAYS = 30
    room = _played_room(days_ago=45)
    late = PlayerFactory(room=room, nickname="Late")  # joined today (a homework room, a room reused)
    purged = old_data_purge()
    assert purged.rooms == 0
    assert Player.objects.filter(room=room).count() == 3 and Player.objects.filter(pk=late.pk).exists()


def test_a_question_voided_in_an_old_game_goes_with_it(settings):
    settings.RETENTION_DAYS = 30
    room = _played_room(days_ago=40)
    question = room.round.entries.get(position=0).question
    VoidedQuestion.objects.create(room=room, question_index=0, question=question)
    old_data_purge()
    assert not VoidedQuestion.objects.exists()


def test_sessions_go_once_last_used_before_the_period_or_expired(settings):
    settings.RETENTION_DAYS = 30
    settings.SESSION_COOKIE_AGE = 365 * 24 * 3600  # longer than the retention period: the period decides
    old, recent = _session(last_used_days_ago=31), _session(last_used_days_ago=2)
    assert old_data_purge().sessions == 1
    assert list(Session.objects.values_list("pk", flat=True)) == [recent] != [old]
    settings.SESSION_COOKIE_AGE = 14 * 24 * 3600  # shorter: an expired session goes, whatever its age
    expired = _session(last_used_days_ago=15)
    assert old_data_purge().sessions == 1
    assert not Session.objects.filter(pk=expired).exists() and Session.objects.filter(pk=recent).exists()


def test_the_network_a_round_was_asked_from_is_blanked_after_the_period(settings):
    settings.RETENTION_DAYS = 30
    old = GenerationJobFactory(client_network="203.0.113.0/24")
    recent = GenerationJobFactory(client_network="198.51.100.7")
    GenerationJob.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))
    assert old_data_purge().networks == 1
    assert GenerationJob.objects.get(pk=old.pk).client_network == ""  # the job and its round stay
    assert GenerationJob.objects.get(pk=recent.pk).client_network == "198.51.100.7"


def test_the_command_says_what_it_deleted_and_a_dry_run_deletes_nothing(settings):
    settings.RETENTION_DAYS = 30
    _played_room(days_ago=31)
    out = StringIO()
    call_command("purge_old_data", "--dry-run", stdout=out)
    assert out.getvalue().startswith("Would delete 1 rooms (2 players, 2 answers, 1 reports)")
    assert Room.objects.count() == 1
    out = StringIO()
    call_command("purge_old_data", stdout=out)
    assert out.getvalue().startswith("Deleted 1 rooms (2 players, 2 answers, 1 reports)")
    assert Room.objects.count() == 0 and Player.objects.count() == 0
    # --days overrides the setting; a period under a day would delete games being played.
    _played_room(days_ago=3)
    call_command("purge_old_data", "--days", "7", stdout=StringIO())
    assert Room.objects.count() == 1
    with pytest.raises(CommandError, match="at least one day"):
        call_command("purge_old_data", "--days", "0", stdout=StringIO())
    assert Room.objects.count() == 1


def test_celery_beat_runs_the_purge_daily(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["purge-old-data"]
    assert isinstance(entry["schedule"], crontab)
    app.loader.import_default_modules()
    assert entry["task"] in app.tasks  # the worker knows the name beat sends
    settings.RETENTION_DAYS = 30
    _played_room(days_ago=31)
    purge_old_data.apply()
    assert Room.objects.count() == 0
