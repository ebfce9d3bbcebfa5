"""A dead server process's players get their open question's lost time back (lobby/realtime/lost.py): the time it was
silent plus the grace, never more than a whole question's time, and only in rooms in an open question."""

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from lobby.models import Room
from lobby.realtime import lost
from lobby.rules.machine import Phase

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_dead_processs_open_questions_get_its_silence_and_the_grace_back(make_room, settings):
    settings.LOST_PROCESS_GRACE_SECONDS = 5
    asking, revealing, elsewhere = [(await sync_to_async(make_room)()).room for _ in range(3)]
    deadline = timezone.now() + timedelta(seconds=2)
    for room in (asking, elsewhere):
        await sync_to_async(Room.objects.filter(pk=room.pk).update)(
            phase=Phase.QUESTION, question_index=0, deadline=deadline
        )
    await sync_to_async(Room.objects.filter(pk=revealing.pk).update)(phase=Phase.REVEAL, question_index=0)
    # It held players of the first two rooms; the third is another process's.
    await lost._process_died(None, "elsewhere-4242-ab", 1.5, [asking.pk, revealing.pk, "junk"])
    rooms = {r.pk: r for r in await sync_to_async(list)(Room.objects.all())}
    assert rooms[asking.pk].deadline == deadline + timedelta(seconds=6.5)
    assert rooms[asking.pk].seq == asking.seq + 1  # a room event tells everyone the new deadline
    assert rooms[elsewhere.pk].deadline == deadline
    assert rooms[revealing.pk].phase == Phase.REVEAL and rooms[revealing.pk].seq == revealing.seq


async def test_after_a_long_outage_a_question_gets_back_at_most_a_whole_questions_time(make_room, settings):
    settings.LOST_PROCESS_GRACE_SECONDS = 5
    room = (await sync_to_async(make_room)()).room
    deadline = timezone.now() - timedelta(minutes=30)  # every process was down for an hour
    await sync_to_async(Room.objects.filter(pk=room.pk).update)(
        phase=Phase.QUESTION, question_index=0, deadline=deadline
    )
    await lost._process_died(None, "elsewhere-4242-ab", 3600.0, [room.pk])
    moved = await sync_to_async(Room.objects.get)(pk=room.pk)
    assert moved.deadline == deadline + timedelta(seconds=settings.ROOM_MAX_TIMER + 5)
    assert moved.deadline < timezone.now()  # still past: the clock closes it
