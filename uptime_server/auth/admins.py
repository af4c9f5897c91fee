"""Who is an admin: a flag on the account, and the two ways it is set.

An admin may manage probe agents (``api/agents.py``), whose tokens run every
user's checks of a location; the API asks ``users.is_admin`` and nothing
else. The flag is set

1. at sign-in, from ``UPTIME_ADMINS`` (the bootstrap, ``grant_if_listed``):
   only for an address the provider asserted as verified (OIDC
   ``email_verified: true``, GitHub's ``/user/emails`` ``verified``; the
   server's own ``uptime server session`` and ``login --local`` count, as
   they run on its machine) and that no other account holds. An address is
   only as good as whoever vouches for it: a provider that says nothing, or
   a second account with the same address, gets no flag;
2. by hand on the server's machine: ``uptime server admin grant|revoke|list``
   (``find_user``, ``set_admin``, ``list_admins``), straight in the database.

The bootstrap never takes the flag away. Revoking a user whose address
``UPTIME_ADMINS`` still lists lasts only until their next sign-in.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from peewee import fn

from uptime_server.db import INT64_MAX
from uptime_server.models import User

log = logging.getLogger(__name__)


class UnknownUser(LookupError):
    """No account matches the email address or id."""


class AmbiguousUser(LookupError):
    """Several accounts hold the email address: name one by id."""


def holders(email: str) -> list[User]:
    """The accounts whose address is *email*, compared case-insensitively."""
    return list(
        User.select().where(fn.LOWER(User.email) == email.strip().lower()).order_by(User.id)
    )


def email_held(email: str, *, other_than: int | None = None) -> bool:
    """Whether an account (other than *other_than*) holds *email*."""
    query = User.select(User.id).where(fn.LOWER(User.email) == email.strip().lower())
    if other_than is not None:
        query = query.where(User.id != other_than)
    return bool(query.exists())


def grant_if_listed(user: User, verified_email: str | None, admins: Sequence[str]) -> bool:
    """Make *user* an admin if UPTIME_ADMINS lists *verified_email* and no other
    account holds it; True when granted now. Runs inside the sign-in's transaction.

    *verified_email* is an address someone trustworthy vouched for (the
    provider, or the server's own local sign-in); None grants nothing.
    """
    if user.is_admin or not verified_email or verified_email.strip().lower() not in admins:
        return False
    if email_held(verified_email, other_than=user.id):
        log.warning(
            "user %s signed in with an address UPTIME_ADMINS lists, which another account "
            "holds too: not made an admin (use `uptime server admin grant USER_ID`)",
            user.id,
        )
        return False
    User.update(is_admin=True).where(User.id == user.id).execute()
    user.is_admin = True
    log.info("user %s is an admin: UPTIME_ADMINS lists its verified address", user.id)
    return True


def find_user(ref: str) -> User:
    """The account *ref* names: a user id (digits) or an email address."""
    ref = ref.strip()
    if ref.isdigit():
        user = User.get_or_none(User.id == int(ref)) if 0 < int(ref) <= INT64_MAX else None
        if user is None:
            raise UnknownUser(f"no user with id {ref}")
        return user
    found = holders(ref)
    if not found:
        raise UnknownUser(f"no user with the email address {ref!r}")
    if len(found) > 1:
        ids = ", ".join(str(u.id) for u in found)
        raise AmbiguousUser(f"{len(found)} accounts hold {ref!r} (ids {ids}): name one by its id")
    return found[0]


def set_admin(user: User, flag: bool) -> bool:
    """Set *user*'s admin flag; True if it changed."""
    changed = User.update(is_admin=flag).where(User.id == user.id, User.is_admin != flag).execute()
    user.is_admin = flag
    if changed:
        log.info("user %s: admin %s by hand", user.id, "granted" if flag else "revoked")
    return changed == 1


def list_admins() -> list[User]:
    return list(User.select().where(User.is_admin).order_by(User.id))
