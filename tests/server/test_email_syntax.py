"""Email address syntax: what a self-hosted network's mail server takes, nothing else."""

from __future__ import annotations

import pytest

from uptime_server.email_syntax import normalize_email

VALID = [
    "root@localhost",
    "ops@host.local",
    "admin@corp.internal",
    "uptime@localhost",
    "a@b",
    "first.last+tag@mail.example.com",
    "!#$%&'*+/=?^_`{|}~-@example.com",
    "ops@10.0.0.1",  # a dotted host name, as a mail server would take it
    "josé@bücher.example",
    "u@xn--bcher-kva.example",
    "x" * 64 + "@example.com",
    "u@" + ".".join(["a" * 63] * 3) + "." + "b" * 57,  # 253 characters of domain
]


@pytest.mark.parametrize("address", VALID)
def test_it_accepts(address: str) -> None:
    assert normalize_email(address) == address


@pytest.mark.parametrize(
    ("address", "normalized"),
    [
        ("Root@LocalHost", "Root@localhost"),
        ("Ops@Corp.INTERNAL", "Ops@corp.internal"),
        ("jose\u0301@example.com", "josé@example.com"),  # NFC
    ],
)
def test_it_lowercases_the_domain_only(address: str, normalized: str) -> None:
    assert normalize_email(address) == normalized


INVALID = [
    ("", "needs an @"),
    ("root", "needs an @"),
    ("@localhost", "needs a name before the @"),
    ("root@", "needs a domain after the @"),
    ("ro ot@localhost", "not allowed before the @"),
    ("root@local host", "not a valid host name"),
    (" root@localhost", "not allowed before the @"),
    ("root@localhost ", "not a valid host name"),
    ("root@localhost\r\nBcc: everyone@example.com", "not allowed before the @"),
    ("root@localhost\r\n", "not a valid host name"),
    ("ro\not@localhost", "not allowed before the @"),
    ("ro\x00ot@localhost", "not allowed before the @"),
    ("ro\u00a0ot@localhost", "not allowed before the @"),  # no-break space
    ("a@b@localhost", "not allowed before the @"),
    ('"quoted"@localhost', "not allowed before the @"),
    ("Name <root@localhost>", "not allowed before the @"),
    ("a,b@localhost", "not allowed before the @"),
    (".root@localhost", "empty part between dots"),
    ("root.@localhost", "empty part between dots"),
    ("ro..ot@localhost", "empty part between dots"),
    ("root@.localhost", "not a valid host name"),
    ("root@localhost.", "not a valid host name"),
    ("root@local..host", "not a valid host name"),
    ("root@-localhost", "not a valid host name"),
    ("root@localhost-", "not a valid host name"),
    ("root@under_score", "not a valid host name"),
    ("root@[127.0.0.1]", "not a valid host name"),
    ("root@" + "a" * 64 + ".example", "not a valid host name"),
    ("x" * 65 + "@example.com", "more than 64 bytes before the @"),
    ("u@" + ".".join(["a" * 63] * 4), "longer than 254 bytes"),
]


@pytest.mark.parametrize(("address", "problem"), INVALID)
def test_it_refuses(address: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        normalize_email(address)
