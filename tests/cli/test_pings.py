"""``uptime_cli.pings``: what a ping sends, apart from the network."""

from __future__ import annotations

import threading

from tests.cli.ping_receiver import Receiver
from uptime_cli.pings import Pinger, label, suffix, tail


def test_the_tail_is_the_last_bytes() -> None:
    assert tail(b"0123456789", 4) == b"6789"
    assert tail(b"short", 10) == b"short"


def test_the_tail_does_not_start_inside_a_character() -> None:
    text = "ab€€".encode()  # € is 3 bytes: e2 82 ac
    assert tail(text, 5) == "€".encode()  # not b"\x82\xac" + "€"
    assert tail(text, 6) == "€€".encode()
    assert tail("é".encode() * 3, 3) == "é".encode()


def test_kinds_map_to_paths_and_words() -> None:
    assert [suffix(k) for k in ("success", "start", "fail", "log", "0", "3")] == [
        "",
        "/start",
        "/fail",
        "/log",
        "/0",
        "/3",
    ]
    assert (label("3"), label("start")) == ("exit code 3", "start")


def test_a_cancelled_ping_still_makes_its_first_attempt_and_no_retry(
    receiver: Receiver,
) -> None:
    # exec cancels the start ping when the command ends: one that had not gone
    # out yet still must, or the server would see a finish without its start.
    receiver.answer("/ping/tok/start", 500)
    cancelled = threading.Event()
    cancelled.set()
    result = Pinger(receiver.ping_url(), retries=3).send("start", cancelled=cancelled)
    assert (result.ok, result.attempts, result.status) == (False, 1, 500)
    assert receiver.paths() == ["/ping/tok/start"]
