"""The engine as the commands run it: ``server run`` drains on SIGTERM, ``check --once``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import acting_of
from uptime_cli.main import app as cli
from uptime_server.models import CheckRun, MonitorLocation
from uptime_server.schemas.monitor_config import MonitorConfig
from uptime_server.services import monitors

sqlite_only = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


@pytest.fixture
def make_monitor(db, alice, settings, target):
    def make(key, kind="ok", *, due, **fields):
        body = {
            "name": key,
            "url": target.url(kind, key),
            "type": "http",
            "timeout": 5,
            "check_interval": 60,
            **fields,
        }
        cfg = MonitorConfig.model_validate(body, context={"settings": settings})
        m = monitors.create_monitor(alice.acting, cfg, now=due, settings=settings)
        MonitorLocation.update(next_check_at=due).where(MonitorLocation.monitor == m.id).execute()
        return m

    return make


def _env(settings_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UPTIME_")}
    return {**env, **settings_env, "UPTIME_LOG_LEVEL": "INFO"}


@pytest.mark.slow
@sqlite_only
def test_sigterm_lets_the_running_check_finish_and_exits_0(
    make_monitor, settings_env, target, tmp_path
):
    now = datetime.now(UTC)
    m = make_monitor("slow", due=now, url=target.url("slow", "slow") + "?s=1.5")
    uptime = Path(sys.executable).with_name("uptime")
    log = (tmp_path / "daemon.log").open("w+")
    proc = subprocess.Popen(
        [str(uptime), "server", "run", "--no-api"],
        env=_env(settings_env),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        assert target.arrived["slow"].wait(30), "the daemon never started the check"
        # As systemd or a terminal would: the whole process group (the
        # recorder's child process included) gets the signal.
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        log.seek(0)
        output = log.read()
    [run] = CheckRun.select().where(CheckRun.monitor == m.id)
    assert run.status == "online", output
    row = MonitorLocation.get(MonitorLocation.monitor == m.id)
    assert row.lease_owner is None and row.next_check_at > now


@sqlite_only
def test_check_once_runs_every_due_check_once_and_exits_0(
    make_monitor, settings_env, target, monkeypatch, clock
):
    now = datetime.now(UTC)
    due = [make_monitor(f"due{i}", due=now - timedelta(seconds=i)) for i in range(3)]
    later = make_monitor("later", due=now + timedelta(hours=1))
    paused = make_monitor("paused", due=now - timedelta(seconds=5))
    monitors.pause_monitor(acting_of(paused.user), paused, None, now=now)
    for key, value in settings_env.items():
        monkeypatch.setenv(key, value)

    result = CliRunner().invoke(cli, ["server", "check", "--once"])

    assert result.exit_code == 0, result.output
    for i, m in enumerate(due):
        [run] = CheckRun.select().where(CheckRun.monitor == m.id)
        assert run.status == "online"
        assert target.hits[f"due{i}"] == 1
    assert target.hits["later"] == 0 and target.hits["paused"] == 0
    assert CheckRun.select().where(CheckRun.monitor.in_([later.id, paused.id])).count() == 0
    assert MonitorLocation.select().where(MonitorLocation.lease_owner.is_null(False)).count() == 0
    # A second run right after finds nothing due.
    assert CliRunner().invoke(cli, ["server", "check", "--once"]).exit_code == 0
    assert sum(target.hits[f"due{i}"] for i in range(3)) == 3


@sqlite_only
def test_check_without_once_is_a_usage_error(settings_env, monkeypatch):
    for key, value in settings_env.items():
        monkeypatch.setenv(key, value)
    assert CliRunner().invoke(cli, ["server", "check"]).exit_code == 2
    result = CliRunner().invoke(cli, ["server", "check", "--once", "--location", "mars"])
    assert result.exit_code == 2
