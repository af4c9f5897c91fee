"""GET /metrics: the refreshed snapshot, engine counters, and the token.

Per-monitor series need ``UPTIME_METRICS_TOKEN``; a scrape reads the snapshot
``MetricsRefresher`` took, never the tables.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.stats.conftest import Run, outcome_of
from uptime_server.app import create_app
from uptime_server.daemon.process import DaemonOptions, default_components
from uptime_server.engine import counters
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor, MonitorLocation
from uptime_server.services.metrics import MetricsRefresher
from uptime_server.wsgi.context import app_state

TOKEN = "s3cret"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


@pytest.fixture
def settings_env(settings_env):
    return {**settings_env, "UPTIME_METRICS_TOKEN": TOKEN}


@pytest.fixture
def refresher(app, settings):
    """The daemon's refresher, filling the cache this app serves."""
    return MetricsRefresher(settings, app_state(app).services["metrics_cache"])


@pytest.fixture
def scraper(app):
    return app.test_client()


def parse(body: str) -> dict[str, dict[tuple, float]]:
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            key = tuple(sorted(sample.labels.items()))
            out.setdefault(sample.name, {})[key] = sample.value
    return out


def scrape(client, headers=BEARER, **kw) -> dict[str, dict[tuple, float]]:
    r = client.get("/metrics", headers=headers, **kw)
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return parse(r.get_data(as_text=True))


def by_monitor(series: dict[tuple, float]) -> dict[str, float]:
    return {dict(k)["name"]: v for k, v in series.items()}


def test_it_reports_each_monitor(
    scraper, refresher, alice, bob, new_monitor, feeder, settings, clock
):
    up, down, idle = new_monitor(alice, "web"), new_monitor(bob, "db"), new_monitor(alice, "new")
    now = clock.now()
    expires = now + timedelta(days=20)
    feeder.feed(up, [Run(now - timedelta(hours=2), passed=False), Run(now - timedelta(hours=1))])
    with_cert = replace(outcome_of(up, Run(now, rt=250)), cert_expires_at=expires)
    Recorder(settings).record([with_cert], now=now)
    feeder.feed(down, [Run(now - timedelta(minutes=5), passed=False)])
    refresher.loop(now)
    m = scrape(scraper)
    assert by_monitor(m["uptime_monitor_up"]) == {"web": 1.0, "db": 0.0}  # pending: absent
    assert by_monitor(m["uptime_monitor_paused"]) == {"web": 0.0, "db": 0.0, "new": 0.0}
    assert by_monitor(m["uptime_monitor_response_time_seconds"]) == {"web": 0.25}
    uptime = by_monitor(m["uptime_monitor_uptime_24h_ratio"])
    assert uptime == {"web": pytest.approx(2 / 3, abs=1e-5), "db": 0.0}
    assert by_monitor(m["uptime_monitor_cert_expiry_timestamp_seconds"]) == {
        "web": expires.timestamp()
    }
    labels = dict(next(iter(m["uptime_monitor_up"])))
    assert labels["monitor_id"] in {str(up.id), str(down.id)}
    assert idle.id not in {int(dict(k)["monitor_id"]) for k in m["uptime_monitor_up"]}
    assert m["uptime_metrics_snapshot_timestamp_seconds"] == {(): now.timestamp()}


def test_backlog_and_dispatch_lag_come_from_the_snapshot(
    scraper, refresher, alice, new_monitor, feeder, clock
):
    m = new_monitor(alice)
    feeder.feed(m, [Run(clock.now(), passed=False)])  # a downtime email waits in the outbox
    MonitorLocation.update(next_check_at=clock.now() - timedelta(seconds=42)).execute()
    refresher.loop(clock.now())
    figures = scrape(scraper)
    assert figures["uptime_outbox_backlog"] == {(): 1.0}
    assert figures["uptime_dispatch_lag_seconds"] == {(): 42.0}


@sqlite_only
def test_a_running_scheduler_gives_the_dispatch_lag_itself(settings, clock, db):
    app = create_app(
        settings, clock=clock, services={"scheduler_lag": lambda: 1.5}, bind_database=False
    )
    assert scrape(app.test_client())["uptime_dispatch_lag_seconds"] == {(): 1.5}


def test_a_scrape_reads_no_table(scraper, refresher, alice, new_monitor, clock, caplog):
    web = new_monitor(alice, "web")
    caplog.set_level(logging.DEBUG, logger="peewee")  # peewee logs every query it runs
    refresher.loop(clock.now())
    assert any("monitors" in r.getMessage() for r in caplog.records if r.name == "peewee")
    caplog.clear()
    before = scrape(scraper)
    assert [r.getMessage() for r in caplog.records if r.name == "peewee"] == []
    assert by_monitor(before["uptime_monitor_paused"]) == {"web": 0.0}
    # What changes in the database shows at the next refresh, not before.
    Monitor.update(name="web-renamed", paused=True).where(Monitor.id == web.id).execute()
    new_monitor(alice, "api")
    assert by_monitor(scrape(scraper)["uptime_monitor_paused"]) == {"web": 0.0}
    refresher.loop(clock.advance(15))
    after = by_monitor(scrape(scraper)["uptime_monitor_paused"])
    assert after == {"web-renamed": 1.0, "api": 0.0}


def test_the_refresher_reads_the_database_once_per_interval(
    scraper, refresher, alice, new_monitor, clock
):
    assert scrape(scraper).get("uptime_monitor_paused") is None  # nothing read yet
    start = clock.now()
    assert refresher.loop(start) == 15.0
    new_monitor(alice, "late")
    assert refresher.loop(clock.advance(5)) == 10.0  # not due: the snapshot stays
    figures = scrape(scraper)
    assert "uptime_monitor_paused" not in figures
    assert figures["uptime_metrics_snapshot_timestamp_seconds"] == {(): start.timestamp()}
    refresher.loop(clock.advance(10))
    figures = scrape(scraper)
    assert by_monitor(figures["uptime_monitor_paused"]) == {"late": 0.0}
    assert figures["uptime_metrics_snapshot_timestamp_seconds"] == {(): clock.now().timestamp()}


@sqlite_only
def test_a_refresh_encodes_the_formats_scrapers_asked_for(
    scraper, refresher, alice, new_monitor, clock
):
    new_monitor(alice, "web")
    refresher.loop(clock.now())
    cache = refresher.cache
    assert cache.snapshot.encoded_formats == frozenset()  # nobody asked yet
    scrape(scraper)  # text format 0.0.4
    refresher.loop(clock.advance(15))
    assert cache.snapshot.encoded_formats == {generate_latest}  # before any scrape of it
    assert by_monitor(scrape(scraper)["uptime_monitor_paused"]) == {"web": 0.0}


@sqlite_only
def test_without_a_token_it_serves_no_monitor_series(settings, clock, db, alice, new_monitor):
    open_settings = settings.with_overrides(metrics_token=None)
    app = create_app(open_settings, clock=clock, bind_database=False)
    new_monitor(alice, "secret-intranet-host")
    MetricsRefresher(open_settings, app_state(app).services["metrics_cache"]).loop(clock.now())
    r = app.test_client().get("/metrics")
    assert r.status_code == 200
    body = r.get_data(as_text=True)
    assert "secret-intranet-host" not in body
    assert "monitor_id" not in body
    figures = parse(body)
    assert not [name for name in figures if name.startswith("uptime_monitor_")]
    # The process and engine series stay.
    assert "process_cpu_seconds_total" in figures
    assert figures["uptime_outbox_backlog"] == {(): 0.0}


@sqlite_only
def test_engine_counters_are_exposed(scraper):
    before = scrape(scraper)
    counters.record_check("online")
    counters.record_check("offline")
    counters.record_check("online")
    counters.record_check_error()
    counters.record_dispatch_delay(1.5)
    after = scrape(scraper)

    def delta(name, **labels):
        key = tuple(sorted(labels.items()))
        return after[name][key] - before.get(name, {}).get(key, 0.0)

    assert delta("uptime_checks_total", status="online") == 2
    assert delta("uptime_checks_total", status="offline") == 1
    assert delta("uptime_check_errors_total") == 1
    assert delta("uptime_dispatch_delay_seconds_count") == 1
    assert delta("uptime_dispatch_delay_seconds_bucket", le="2.0") == 1
    assert "process_cpu_seconds_total" in after


@sqlite_only
def test_the_engine_says_when_it_last_wrote_and_claimed_and_how_often_it_reconnected(
    scraper, settings, clock, alice, new_monitor
):
    from uptime_server.engine.scheduler import CheckScheduler
    from uptime_server.engine.worker import InProcess

    new_monitor(alice, "web")  # nothing listens on its port: a failing check, written
    before = scrape(scraper)["uptime_engine_db_reconnects_total"][()]
    here = InProcess(settings)
    scheduler = CheckScheduler(settings, claims=here, records=here, clock=clock)
    try:
        scheduler.loop(clock.now())
        assert scheduler.settle(30)
    finally:
        scheduler.close()
    after = scrape(scraper)
    assert after["uptime_engine_last_claim_timestamp_seconds"][()] == clock.now().timestamp()
    assert after["uptime_engine_last_write_timestamp_seconds"][()] == clock.now().timestamp()
    counters.record_db_reconnects(2)  # what the database worker reports with its answers
    assert scrape(scraper)["uptime_engine_db_reconnects_total"][()] == before + 2


@sqlite_only
def test_a_token_protects_it_when_set(scraper, refresher, alice, new_monitor, clock):
    new_monitor(alice, "web")
    refresher.loop(clock.now())
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        r = scraper.get("/metrics", headers=headers)
        assert r.status_code == 401
        assert r.json["error"]["code"] == "UNAUTHORIZED"
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
        assert "web" not in r.get_data(as_text=True)
    figures = scrape(scraper)
    assert "uptime_outbox_backlog" in figures
    assert by_monitor(figures["uptime_monitor_paused"]) == {"web": 0.0}


@sqlite_only
def test_openmetrics_is_served_when_asked_for(scraper, refresher, alice, new_monitor, clock):
    new_monitor(alice, "web")
    refresher.loop(clock.now())
    accept = {"Accept": "application/openmetrics-text; version=1.0.0"}
    for _ in range(2):  # the second from the snapshot's encoded series
        r = scraper.get("/metrics", headers={**BEARER, **accept})
        assert r.headers["Content-Type"].startswith("application/openmetrics-text")
        body = r.get_data(as_text=True)
        assert body.count("# EOF") == 1 and body.endswith("# EOF\n")
        assert "uptime_outbox_backlog 0.0" in body
        assert 'uptime_monitor_paused{monitor_id="' in body
    # The text format next to it is encoded on its own.
    assert by_monitor(scrape(scraper)["uptime_monitor_paused"]) == {"web": 0.0}


@sqlite_only
def test_the_api_process_runs_the_refresher(settings):
    def names(options):
        return {c.name for c in default_components(settings, options)}

    assert "metrics-cache" in names(DaemonOptions(scheduler=False))
    assert "metrics-cache" not in names(DaemonOptions(api=False, scheduler=False))
    [part] = [
        c for c in default_components(settings, DaemonOptions(scheduler=False))
        if c.name == "metrics-cache"
    ]  # fmt: skip
    assert "metrics_cache" in part.services
