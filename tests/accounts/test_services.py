"""accounts/services.py called directly: signing up makes the account's owner key, signing in takes the
browser's anonymous rounds and games, and wrong passwords from one address are counted."""

import pytest
from django.contrib.auth import get_user_model

from accounts.models import HostAccount
from accounts.services import (
    account_owner_key,
    account_take_browser,
    host_sign_up,
    sign_in_blocked,
    sign_in_failed,
)
from core.owner_keys import new_owner_key
from lobby.models import Room
from lobby.services import room_create
from quiz.models import Round
from tests.factories import HostUserFactory, RoundFactory

pytestmark = pytest.mark.django_db


def test_signing_up_makes_a_user_who_can_sign_in_and_an_owner_key():
    user = host_sign_up(username="quizmaster", password="correct horse battery")
    assert user.check_password("correct horse battery") and not user.check_password("wrong")
    account = HostAccount.objects.get(user=user)
    assert account.owner_key and account_owner_key(user=user) == account.owner_key


def test_an_account_from_before_gets_its_owner_key_on_first_need_and_keeps_it():
    staff = get_user_model().objects.create_user(username="staff", password="x" * 12)
    assert not HostAccount.objects.filter(user=staff).exists()
    key = account_owner_key(user=staff)
    assert key and account_owner_key(user=staff) == key
    assert HostAccount.objects.filter(user=staff).count() == 1


def test_signing_in_files_the_browsers_rounds_and_rooms_under_the_account():
    user = HostUserFactory()
    browser = new_owner_key()
    mine = RoundFactory(owner_key=browser)
    someone_elses = RoundFactory(owner_key=new_owner_key())
    # A room made under the browser's key, and one from before owner keys that this browser created.
    keyed = room_create(round_id=mine.pk, timer_seconds=20, owner_key=browser)
    unkeyed = room_create(round_id=mine.pk, timer_seconds=20)
    taken = account_take_browser(user=user, browser_key=browser, host_tokens={unkeyed.room.code: unkeyed.host_token})
    key = account_owner_key(user=user)
    assert (taken.owner_key, taken.rounds, taken.rooms) == (key, 1, 2)
    assert Round.objects.get(pk=mine.pk).owner_key == key
    assert Round.objects.get(pk=someone_elses.pk).owner_key != key
    assert set(Room.objects.filter(owner_key=key).values_list("pk", flat=True)) == {keyed.room.pk, unkeyed.room.pk}


def test_another_accounts_key_in_the_session_is_never_taken_from():
    first, second = HostUserFactory(), HostUserFactory()
    firsts_key = account_owner_key(user=first)
    RoundFactory(owner_key=firsts_key)
    taken = account_take_browser(user=second, browser_key=firsts_key, host_tokens={})
    assert (taken.rounds, taken.rooms) == (0, 0)
    assert Round.objects.filter(owner_key=firsts_key).count() == 1


def test_signing_in_again_in_the_same_browser_moves_nothing():
    user = HostUserFactory()
    key = account_owner_key(user=user)
    RoundFactory(owner_key=key)
    assert account_take_browser(user=user, browser_key=key, host_tokens={}) == account_take_browser(
        user=user, browser_key="", host_tokens={}
    )
    assert Round.objects.filter(owner_key=key).count() == 1


def test_wrong_passwords_from_one_address_block_it_and_not_another(settings):
    settings.RATELIMIT_FAILED_SIGN_INS_PER_IP = (3, 600)
    for _ in range(2):
        sign_in_failed(ip="198.51.100.7")
    assert not sign_in_blocked(ip="198.51.100.7")
    sign_in_failed(ip="198.51.100.7")
    assert sign_in_blocked(ip="198.51.100.7")
    assert not sign_in_blocked(ip="198.51.100.8")
