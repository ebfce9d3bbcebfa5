"""One subscription per room and process (lobby/realtime/fanout.py): a process holding 200 players and the host of one
room receives each room event once from the channel layer, and still gives every socket its own frame of it, once."""

import asyncio
from collections import Counter, OrderedDict

import msgpack
import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from lobby import events, services
from lobby.reads import standings
from lobby.reads.selectors import room_picture
from lobby.realtime import fanout
from lobby.rules.machine import Action
from tests.support.communicator import Client

pytestmark = pytest.mark.django_db(transaction=True)

ROOM = 200
WAIT = 60


@pytest.fixture
def layer_receives(monkeypatch):
    """Every room event this process takes from the channel layer, as (phase, seq), counted. Installed before any
    socket connects: a consumer binds the layer's `receive` when it starts."""
    layer = get_channel_layer()
    received: Counter = Counter()
    receive = layer.receive

    async def counting(channel):
        message = await receive(channel)
        if message.get("type") == events.ROOM_STATE:
            received[(message["state"]["phase"], message["state"]["seq"])] += 1
        return message

    monkeypatch.setattr(layer, "receive", counting)
    return received


async def _fill(sockets, code: str) -> list[Client]:
    async def one(n: int) -> Client:
        client = await sockets.open(Client(code))
        await client.send(type="join", nickname=f"p{n:03d}")
        joined = await client.until(lambda m: m["type"] in ("joined", "error"), timeout=WAIT)
        assert joined["type"] == "joined", joined
        return client

    players = []
    for start in range(0, ROOM, 50):
        players += await asyncio.gather(*(one(n) for n in range(start, min(start + 50, ROOM))))
    return players


async def _everyone_gets(clients: list[Client], **expected) -> list[dict]:
    return list(await asyncio.gather(*(client.until(_state(**expected), timeout=WAIT) for client in clients)))


def _state(**expected):
    return lambda m: m["type"] == "state" and all(m.get(key) == value for key, value in expected.items())


async def test_a_process_with_200_players_of_a_room_receives_each_room_event_once(
    room, settings, sockets, host_socket, layer_receives
):
    settings.ROOM_MAX_PLAYERS = ROOM
    settings.WS_MAX_PER_IP = ROOM + 20
    created = await room(timer_seconds=60)
    code = created.room.code
    host = await host_socket(created)
    players = await _fill(sockets, code)
    await host.until(lambda m: m["type"] == "state" and m["player_count"] == ROOM, timeout=WAIT)

    await host.send(type="start")
    questions = await _everyone_gets([host, *players], phase="question", question_index=0)
    seq = questions[0]["seq"]
    assert {q["seq"] for q in questions} == {seq}
    await host.send(type="close", phase="question", index=0)
    reveals = await _everyone_gets([host, *players], phase="reveal", question_index=0)
    revealed = reveals[0]["seq"]
    assert {r["seq"] for r in reveals} == {revealed}
    await host.send(type="next", phase="reveal", index=0)
    await _everyone_gets([host, *players], phase="leaderboard", question_index=0)
    await asyncio.sleep(0.5)  # any late copy of an event would have arrived by now

    # Each room event came from the channel layer once for the 201 sockets, not once per socket.
    assert layer_receives[("question", seq)] == 1
    assert layer_receives[("reveal", revealed)] == 1
    # And each socket still had its own frame of it, once: a player their own `you`, the host the lines it draws.
    for client in players:
        assert [m["seq"] for m in client.received if m.get("phase") == "question"] == [seq]
        assert [m["seq"] for m in client.received if m.get("phase") == "reveal"] == [revealed]
    assert len({q["you"]["id"] for q in questions[1:]}) == ROOM
    ids = sorted(q["you"]["id"] for q in questions[1:])
    assert reveals[0]["player_count"] == ROOM and set(ids[-20:]) <= {line["id"] for line in reveals[0]["players"]}

    assert [s.code for s in fanout.subscribed()] == [code]  # the room's one subscription in this process
    # The last socket of the room to leave ends it.
    await sockets.close()
    assert fanout.subscribed() == []


async def test_a_socket_joining_after_the_room_empties_gets_the_room_events_again(room, sockets, host_socket):
    created = await room(timer_seconds=60)
    code = created.room.code
    first = await host_socket(created)
    await first.comm.disconnect()
    assert fanout.subscribed() == []
    host = await host_socket(created)
    player, _ = await sockets.join(code, "late")
    await player.state(phase="lobby")
    await host.send(type="start")
    await player.state(phase="question", question_index=0)
    await host.state(phase="question", question_index=0)


class _Socket:
    """A local socket of the room as the subscription sees it: its rules, its send, its close."""

    def __init__(self, *, stalls: bool = False, at_once: bool = False):
        self.language = "en"
        self.stalls = stalls
        self.at_once = at_once  # takes its frame without an await, as most phones do (`deliver_now`)
        self.frames: list[int] = []
        self.closed = False

    def wants(self, common):
        return True

    def deliver_now(self, common, picture):
        if not self.at_once:
            return None
        self.frames.append(common["seq"])
        return True

    async def room_event(self, common, picture):
        if self.stalls:
            await asyncio.Event().wait()  # a phone whose buffers are full: its send never completes
        self.frames.append(common["seq"])
        return True

    async def close(self):
        self.closed = True


@pytest.mark.parametrize("at_once", [False, True], ids=["others-awaited", "others-at-once"])
async def test_a_phone_that_takes_no_frames_holds_up_its_room_only_briefly_and_is_closed(monkeypatch, at_once):
    class Picture:
        def __init__(self, seq):
            self.snapshot = {"seq": seq}

    async def picture_at_least(room_id, code, seq, *, load):
        return Picture(seq)

    monkeypatch.setattr(fanout.standings, "picture_at_least", picture_at_least)
    monkeypatch.setattr(fanout, "SEND_SECONDS", 0.2)
    stalled, *others = [_Socket(stalls=True), *(_Socket(at_once=at_once) for _ in range(5))]
    subscription = fanout.Subscription(code="ABCDEF", layer=None, sockets={stalled, *others})

    await asyncio.wait_for(subscription.hand_out({"room_id": 1, "state": {"code": "ABCDEF", "seq": 7}}), WAIT)

    assert [socket.frames for socket in others] == [[7]] * 5  # everyone else has the event
    await asyncio.sleep(0.05)
    assert stalled.closed and stalled not in subscription.sockets  # it reconnects for the full picture
    # The next event is not held up by it at all.
    await asyncio.wait_for(subscription.hand_out({"room_id": 1, "state": {"code": "ABCDEF", "seq": 8}}), WAIT)
    assert [socket.frames for socket in others] == [[7, 8]] * 5


class _Recorder(_Socket):
    def __init__(self):
        super().__init__()
        self.pictures = []

    async def room_event(self, common, picture):
        self.pictures.append(picture)
        return True


def _revealed_room(make_room, players: int):
    """A room whose first question is revealed: `players` joined, one answered (so there are results), one
    with extra time. Returns the room's id and code."""
    created = make_room(timer_seconds=60)
    room_id, code = created.room.pk, created.room.code
    joined = [services.player_join(code=code, nickname=f"p{n}") for n in range(players)]
    services.player_time_set(room_id=room_id, player_id=joined[1].player.pk, time_percent=150)
    services.game_act(room_id=room_id, action=Action.START)
    services.answer_submit(player_id=joined[0].player.pk, question_index=0, option=1)
    services.game_act(room_id=room_id, action=Action.CLOSE)
    return room_id, code


@pytest.mark.parametrize("players, carries", [(3, True), (3, False)])
async def test_a_small_rooms_event_carries_its_standings_so_no_other_process_reads_them_again(
    make_room, monkeypatch, players, carries
):
    if not carries:
        monkeypatch.setattr(standings, "CARRY_PLAYERS", players - 1)  # a room too big to carry them
    room_id, code = await database_sync_to_async(_revealed_room)(make_room, players)
    built = await database_sync_to_async(room_picture)(room_id=room_id)
    event = events.state_event(room_id, built)
    assert ("standings" in event) is carries
    # The event as another process receives it: through the channel layer's encoding, holding no picture.
    event = msgpack.unpackb(msgpack.packb(event, use_bin_type=True), raw=False)
    monkeypatch.setattr(standings, "_latest", OrderedDict())
    loads = []

    def counting_load(*, room_id):
        loads.append(room_id)
        return room_picture(room_id=room_id)

    monkeypatch.setattr(fanout, "room_picture", counting_load)
    readers = [_Recorder() for _ in range(4)]
    subscription = fanout.Subscription(code=code, layer=None, sockets=set(readers))

    await subscription.hand_out(event)

    assert loads == ([] if carries else [room_id])  # read once for the process's sockets when not carried
    for reader in readers:
        (picture,) = reader.pictures
        # The same standings as the sender's picture: every score and rank, the answer's result, the extra time.
        assert picture.standings == built.standings
        assert picture.snapshot["seq"] == built.snapshot["seq"]
    assert built.standings.results and built.standings.extra_time


async def test_players_take_no_channel_of_their_own_and_the_host_still_gets_its_counts(
    room, sockets, host_socket, monkeypatch
):
    """A player's socket is served by its process's subscription: it makes no channel (on the Redis layer, a
    subscription each; 10,000 for a room of 10,000). The host's screen makes one, for its group's answer counts."""
    layer = get_channel_layer()
    made: list[str] = []
    new_channel = layer.new_channel

    async def counting(prefix="specific."):
        made.append(prefix)
        return await new_channel(prefix)

    monkeypatch.setattr(layer, "new_channel", counting)
    created = await room(timer_seconds=60)
    host = await host_socket(created)
    players = [(await sockets.join(created.room.code, f"p{n}"))[0] for n in range(5)]
    for player in players:
        await player.state(phase="lobby", player_count=5)
    assert sorted(made) == ["room.", "specific."]  # the room's one subscription and the host's channel
    await host.send(type="start")
    for player in players:
        await player.state(phase="question", question_index=0)
    await players[0].send(type="answer", question=0, option=1)
    counted = await host.until(lambda m: m["type"] == "answers" and m["answered_count"] == 1, timeout=WAIT)
    assert counted["question_index"] == 0
    assert sorted(made) == ["room.", "specific."]


async def test_a_big_rooms_question_after_the_leaderboard_is_served_from_the_standings_held_with_no_read(
    make_room, monkeypatch
):
    """Issue 47: a big room's event carries no standings; when they are those of the picture before it (a question
    opening after the leaderboard), it names that picture, and a process holding it reads nothing; a process that
    does not hold it, or an event whose standings changed (the reveal), reads the picture as before."""
    monkeypatch.setattr(standings, "CARRY_PLAYERS", 2)  # a room too big to carry them
    room_id, code = await database_sync_to_async(_revealed_room)(make_room, 3)
    act = database_sync_to_async(services.game_act)
    reveal = await database_sync_to_async(room_picture)(room_id=room_id)
    await act(room_id=room_id, action=Action.NEXT)  # the leaderboard
    board = await database_sync_to_async(room_picture)(room_id=room_id)
    await act(room_id=room_id, action=Action.NEXT)  # the next question: the same scores, ranks and times
    question = await database_sync_to_async(room_picture)(room_id=room_id)
    assert question.standings == board.standings and question.snapshot["phase"] == "question"

    loads = []

    def counting_load(*, room_id):
        loads.append(room_id)
        return room_picture(room_id=room_id)

    monkeypatch.setattr(fanout, "room_picture", counting_load)

    async def received_by_another_process(event, holding):
        # Through the channel layer's encoding, in a process that holds `holding` (its last event's picture).
        event = msgpack.unpackb(msgpack.packb(event, use_bin_type=True), raw=False)
        monkeypatch.setattr(standings, "_latest", OrderedDict())
        if holding is not None:
            standings.remember(room_id, holding)
        readers = [_Recorder() for _ in range(3)]
        await fanout.Subscription(code=code, layer=None, sockets=set(readers)).hand_out(event)
        return [reader.pictures[0] for reader in readers]

    event = events.state_event(room_id, question, before=board)
    assert event["standings_of"] == board.snapshot["seq"] and "standings" not in event
    for picture in await received_by_another_process(event, holding=board):
        assert picture.standings == question.standings and picture.snapshot["seq"] == question.snapshot["seq"]
    assert loads == []
    # A process that holds another picture (not the one named: the reveal before it) reads it, once.
    older = await received_by_another_process(event, holding=reveal)
    assert loads == [room_id] and all(picture.standings == question.standings for picture in older)
    # A picture whose standings changed names none (the leaderboard after the reveal, its results gone).
    assert board.standings != reveal.standings
    assert "standings_of" not in events.state_event(room_id, board, before=reveal)


def test_the_game_names_the_leaderboards_standings_when_it_opens_the_next_question(make_room, monkeypatch):
    """Through the services, as the host plays: the next question's event names the leaderboard's picture."""
    monkeypatch.setattr(standings, "CARRY_PLAYERS", 2)
    monkeypatch.setattr(standings, "_latest", OrderedDict())
    room_id, _code = _revealed_room(make_room, 3)
    sent = []
    monkeypatch.setattr(events, "_send", lambda group, event: sent.append(event))
    services.game_act(room_id=room_id, action=Action.NEXT)  # the leaderboard
    services.game_act(room_id=room_id, action=Action.NEXT)  # the next question
    phases = [(event["state"]["phase"], event["state"]["seq"], event.get("standings_of")) for event in sent]
    (board_seq,) = [seq for phase, seq, _ in phases if phase == "leaderboard"]
    assert [same for phase, _, same in phases if phase == "question"] == [board_seq]
