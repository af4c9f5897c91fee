"""Which user a provider account signs in as: matching, linking, sign-up.

Accounts are matched by (provider, subject) only, never by email: an email
address can be added to another provider account by whoever controls that
account. A new user needs an email the provider did not call unverified,
allowed by UPTIME_ALLOWED_EMAILS; while that is empty only the very first
account may sign up (the owner). An address another account already holds
never makes a second account, verified or not: its owner signs in with the
provider they used before and links this one (docs/oauth.md#linking).

Every sign-in may make the user an admin (``admins.grant_if_listed``): when
UPTIME_ADMINS lists the address the provider asserted as verified.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

import peewee

from uptime_server.auth import admins as admin_rights
from uptime_server.auth.provider_profiles import Profile
from uptime_server.auth.teams import create_personal_team
from uptime_server.db import exclude_writers, write_tx
from uptime_server.errors import ApiError
from uptime_server.models import Identity, User

log = logging.getLogger(__name__)


def email_allowed(email: str, allowed: Sequence[str]) -> bool:
    """Whether *email* matches an address, ``@domain`` or ``*`` entry."""
    email = email.strip().lower()
    domain = email.rpartition("@")[2]
    for entry in allowed:
        entry = entry.strip().lower()
        if entry == "*" or entry == email or (entry.startswith("@") and entry[1:] == domain):
            return True
    return False


def resolve_user(
    profile: Profile,
    provider: str,
    *,
    link_user: int | None,
    allowed: Sequence[str],
    now: datetime,
    admins: Sequence[str] = (),
) -> User:
    """The user this provider account signs in as, creating or linking as needed."""
    try:
        return _resolve(profile, provider, link_user, allowed, admins, now)
    except peewee.IntegrityError:
        # A concurrent callback created the same identity first: use it.
        return _resolve(profile, provider, link_user, allowed, admins, now)


def _resolve(
    profile: Profile,
    provider: str,
    link_user: int | None,
    allowed: Sequence[str],
    admins: Sequence[str],
    now: datetime,
) -> User:
    with write_tx():
        identity = Identity.get_or_none(
            Identity.provider == provider, Identity.subject == profile.subject
        )
        if link_user is not None:
            user = _link(identity, profile, provider, link_user, now)
        elif identity is not None:
            user = identity.user
        else:
            user = _sign_up(profile, provider, allowed, now)
        if identity is not None and profile.email and identity.email != profile.email:
            identity.email = profile.email
            identity.save()
        # Only the column this sets: a whole-row save could put back an admin
        # flag `uptime server admin revoke` took away meanwhile.
        User.update(last_login=now).where(User.id == user.id).execute()
        user.last_login = now
        admin_rights.grant_if_listed(user, profile.verified_email, admins)
    return user


def _link(
    identity: Identity | None, profile: Profile, provider: str, user_id: int, now: datetime
) -> User:
    if identity is not None and identity.user_id != user_id:
        raise ApiError(
            "IDENTITY_IN_USE",
            f"This {provider} account is already linked to another user",
            {"provider": [provider]},
        )
    user = User.get_by_id(user_id)
    if identity is None:
        _create_identity(user, profile, provider, now)
        log.info("linked a %s account to user %s", provider, user.id)
    return user


def _sign_up(profile: Profile, provider: str, allowed: Sequence[str], now: datetime) -> User:
    email = profile.signup_email
    if email is None:
        raise ApiError(
            "SIGNUP_CLOSED",
            f"Your {provider} account has no verified email address, which signing up needs",
        )
    if allowed and not email_allowed(email, allowed):
        raise _closed(email)
    _lock_users()
    if not allowed and User.select().exists():
        raise _closed(email)
    if admin_rights.email_held(email):
        raise _in_use(email, provider)
    user = User.create(
        email=email,
        name=(profile.name or email.split("@")[0])[:200],
        avatar_url=profile.avatar_url,
        created_at=now,
    )
    _create_identity(user, profile, provider, now)
    create_personal_team(user, now=now)
    log.info("new user %s signed up with %s", user.id, provider)
    return user


def _lock_users() -> None:
    # "Only the first account" and "one account per address" must hold when
    # two people sign up at once.
    exclude_writers(User._meta.table_name)


def _closed(email: str) -> ApiError:
    return ApiError(
        "SIGNUP_CLOSED",
        f"Sign-up is closed for {email}: ask the administrator to add it to UPTIME_ALLOWED_EMAILS",
    )


def _in_use(email: str, provider: str) -> ApiError:
    return ApiError(
        "EMAIL_IN_USE",
        f"An account with the address {email} already exists, so this {provider} account "
        "cannot make another: sign in with the provider you used before, then link "
        f"{provider} to that account (open its sign-in while signed in)",
        {"email": [email]},
    )


def _create_identity(user: User, profile: Profile, provider: str, now: datetime) -> Identity:
    return Identity.create(
        user=user, provider=provider, subject=profile.subject, email=profile.email, created_at=now
    )
