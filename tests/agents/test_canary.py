"""The connectivity canary: degraded only while every target fails."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest

from tests.e2e.conftest import free_port
from tests.notify.world import Target
from uptime_server.config import ConfigError, load_agent_settings
from uptime_server.probe_agent.canary import Canary, probe_target

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.fixture
def listener():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield f"127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


@pytest.fixture
def web():
    target = Target(status=503).start()
    yield target
    target.stop()


def test_targets_answer_or_not(listener, web):
    closed = f"127.0.0.1:{free_port()}"
    assert probe_target(listener) is True
    assert probe_target(closed) is False
    assert probe_target(web.url) is True  # 503 is an answer: the uplink works
    assert probe_target(f"http://127.0.0.1:{free_port()}/") is False


def test_it_fails_only_while_every_target_fails_and_looks_again_each_interval(listener):
    closed = f"127.0.0.1:{free_port()}"
    canary = Canary((closed,), interval=10)
    assert canary.check(NOW) is True

    canary.targets = (closed, listener)
    assert canary.check(NOW.replace(second=5)) is True  # not looked again yet
    assert canary.check(NOW.replace(second=10)) is False


def test_no_targets_no_canary():
    assert Canary(()).check(NOW) is False and not Canary(()).enabled


def test_the_canary_setting_takes_host_port_and_urls():
    settings = load_agent_settings(
        {"UPTIME_AGENT_CANARY": "1.1.1.1:53, https://example.com/", "UPTIME_AGENT_BUFFER_DIR": "/x"}
    )
    assert settings.canary == ("1.1.1.1:53", "https://example.com/")
    assert str(settings.buffer_dir) == "/x"
    assert load_agent_settings({}).canary == ()
    # The probes' event loop, as the daemon's.
    assert load_agent_settings({}).event_loop == "uvloop"
    assert load_agent_settings({"UPTIME_EVENT_LOOP": "asyncio"}).event_loop == "asyncio"
    with pytest.raises(ConfigError, match="UPTIME_EVENT_LOOP"):
        load_agent_settings({"UPTIME_EVENT_LOOP": "trio"})
    with pytest.raises(ConfigError, match="UPTIME_AGENT_CANARY"):
        load_agent_settings({"UPTIME_AGENT_CANARY": "example.com"})
