from __future__ import annotations

import logging
from email import policy
from email.parser import BytesParser

import pytest

from uptime_server.notify.message import build_email
from uptime_server.notify.transports import (
    FileTransport,
    PermanentDeliveryError,
    TemporaryDeliveryError,
    eml_filename_stem,
)


def email_for(content, message_id):
    return build_email(
        content, sender="uptime@example.com", recipients=["ops@example.com"], message_id=message_id
    )


def test_it_writes_one_eml_named_after_the_message_id(tmp_path, make_content, caplog):
    caplog.set_level(logging.INFO)
    outbox = tmp_path / "data" / "outbox"  # created on first use
    msg = email_for(make_content(), "<uptime-outbox-42@uptime.local>")
    FileTransport(outbox).send(msg)

    path = outbox / "uptime-outbox-42@uptime.local.eml"
    assert [p.name for p in outbox.iterdir()] == [path.name]
    parsed = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
    assert parsed["Subject"] == "[Uptime] DOWN: api-prod"
    assert parsed["Message-ID"] == "<uptime-outbox-42@uptime.local>"
    assert [r.getMessage() for r in caplog.records] == [
        f"email <uptime-outbox-42@uptime.local> written to {path}"
    ]


def test_sending_the_same_message_id_again_overwrites(tmp_path, make_content):
    transport = FileTransport(tmp_path)
    message_id = "<uptime-outbox-7@uptime.local>"
    transport.send(email_for(make_content(error="first"), message_id))
    transport.send(email_for(make_content(error="second"), message_id))

    [path] = tmp_path.iterdir()  # no duplicates, no leftover temp files
    assert b"second" in path.read_bytes()
    assert b"first" not in path.read_bytes()


def test_different_message_ids_get_different_files(tmp_path, make_content):
    transport = FileTransport(tmp_path)
    transport.send(email_for(make_content(), "<uptime-outbox-1@uptime.local>"))
    transport.send(email_for(make_content(), "<uptime-outbox-2@uptime.local>"))
    assert len(list(tmp_path.iterdir())) == 2


def test_unsafe_message_ids_stay_inside_the_directory_and_do_not_collide():
    a = eml_filename_stem("<../../etc/passwd@x>")
    b = eml_filename_stem("<.._.._etc_passwd@x>")
    assert "/" not in a and not a.startswith(".")
    assert a != b
    assert eml_filename_stem("<uptime-outbox-1@uptime.local>") == "uptime-outbox-1@uptime.local"


def test_message_without_id_is_permanent(tmp_path, make_content):
    msg = email_for(make_content(), "<a@b>")
    del msg["Message-ID"]
    with pytest.raises(PermanentDeliveryError):
        FileTransport(tmp_path).send(msg)


def test_unwritable_directory_is_temporary(tmp_path, make_content):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    with pytest.raises(TemporaryDeliveryError):
        FileTransport(blocker / "outbox").send(email_for(make_content(), "<a@b>"))
