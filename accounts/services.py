"""Accounts' writes: a host signs up, and a browser's anonymous rounds and games move into an account."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from accounts.models import HostAccount
from core.owner_keys import new_owner_key
from lobby.services import rooms_move
from quiz.pages.host_rounds import host_rounds_move


def host_sign_up(*, username: str, password: str) -> AbstractBaseUser:
    """A new host account (the form has checked the name is free and the password passes the validators)."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=username, password=password)
        account_owner_key(user=user)
    return user


def account_owner_key(*, user: AbstractBaseUser) -> str:
    """The account's owner key, made on first need (accounts from before, such as staff made in the shell)."""
    account = HostAccount.objects.filter(user=user).first()
    if account is None:
        try:
            with transaction.atomic():
                account = HostAccount.objects.create(user=user, owner_key=new_owner_key())
        except IntegrityError:  # made by a concurrent sign-in of the same account
            account = HostAccount.objects.get(user=user)
    return account.owner_key


@dataclass(frozen=True)
class Taken:
    owner_key: str  # the account's: the browser's session keeps this from now on
    rounds: int
    rooms: int


def account_take_browser(*, user: AbstractBaseUser, browser_key: str, host_tokens: dict[str, str]) -> Taken:
    """A host signed up or in: what the browser made anonymously (under `browser_key`, and the rooms it created
    by host token) is filed under the account. Another account's key is never taken from: a session holding
    one belongs to that account (Django empties the session when another user signs in)."""
    key = account_owner_key(user=user)
    if browser_key == key or (browser_key and HostAccount.objects.filter(owner_key=browser_key).exists()):
        browser_key = ""
    with transaction.atomic():
        rounds = host_rounds_move(from_key=browser_key, to_key=key)
        rooms = rooms_move(from_key=browser_key, to_key=key, host_tokens=host_tokens)
    return Taken(owner_key=key, rounds=rounds, rooms=rooms)
