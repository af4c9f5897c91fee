"""Email address syntax: is this an address a mail server could be handed?

A self-hosted monitor mails people on its own network: ``root@localhost``,
``ops@host.local``, ``admin@corp.internal``. ``email_validator`` (and pydantic's
``EmailStr`` on top of it) judges whether an address is deliverable on the
public Internet and refuses every one of those, even with deliverability
checks off, although the default sender is ``uptime@localhost``. Only the
syntax is judged here (RFC 5321/5322 ``dot-atom@domain``, UTF-8 allowed as in
RFC 6531); whether the address exists is the mail server's business.
"""

from __future__ import annotations

import re
import unicodedata

MAX_ADDRESS = 254  # RFC 5321 path limit, less the angle brackets
MAX_LOCAL = 64

_ATEXT = r"A-Za-z0-9!#$%&'*+/=?^_`{|}~-"
_ATOM = re.compile(rf"[{_ATEXT}]+")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def normalize_email(value: str) -> str:
    """*value* as an address (domain lower-cased, Unicode NFC), or ValueError saying why."""
    address = unicodedata.normalize("NFC", value)
    if len(address.encode()) > MAX_ADDRESS:
        raise ValueError(f"is longer than {MAX_ADDRESS} bytes")
    local, at, domain = address.rpartition("@")
    if not at:
        raise ValueError("needs an @ between the name and the domain")
    if not local:
        raise ValueError("needs a name before the @")
    if len(local.encode()) > MAX_LOCAL:
        raise ValueError(f"has more than {MAX_LOCAL} bytes before the @")
    if not all(_local_atom(atom) for atom in local.split(".")):
        raise ValueError(
            "has characters not allowed before the @ (spaces, quotes, @, control "
            "characters) or an empty part between dots"
        )
    return f"{local}@{_domain(domain)}"


def _local_atom(atom: str) -> bool:
    # RFC 6531 widens atext with any non-ASCII character; space and control
    # characters stay out, whatever their script.
    return bool(atom) and all(
        _ATOM.fullmatch(ch) or (not ch.isascii() and unicodedata.category(ch)[0] not in "CZ")
        for ch in atom
    )


def _domain(domain: str) -> str:
    """The domain lower-cased, checked label by label on its ASCII (IDNA) form."""
    if not domain:
        raise ValueError("needs a domain after the @")
    try:
        ascii_domain = domain.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValueError("has a domain that is not a valid host name") from None
    labels = ascii_domain.split(".")
    if len(ascii_domain) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise ValueError(
            "has a domain that is not a valid host name (letters, digits and hyphens between dots)"
        )
    return domain.lower()
