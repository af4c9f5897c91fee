"""GET /metrics: per-monitor gauges from the database, engine counters, the token."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.stats.conftest import Run, outcome_of
from uptime_server.app import create_app
from uptime_server.engine import metrics as engine_metrics
from uptime_server.engine.recorder import Recorder
from uptime_server.models import MonitorLocation


def scrape(client, **kw) -> dict[str, dict[tuple, float]]:
    r = client.get("/metrics", **kw)
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(r.get_data(as_text=True)):
        for sample in family.samples:
            key = tuple(sorted(sample.labels.items()))
            out.setdefault(sample.name, {})[key] = sample.value
    return out


def by_monitor(series: dict[tuple, float]) -> dict[str, float]:
    return {dict(k)["name"]: v for k, v in series.items()}


def test_it_reports_each_monitor(anon, alice, bob, new_monitor, feeder, settings, clock):
    up, down, idle = new_monitor(alice, "web"), new_monitor(bob, "db"), new_monitor(alice, "new")
    now = clock.now()
    expires = now + timedelta(days=20)
    feeder.feed(up, [Run(now - timedelta(hours=2), passed=False), Run(now - timedelta(hours=1))])
    with_cert = replace(outcome_of(up, Run(now, rt=250)), cert_expires_at=expires)
    Recorder(settings).record([with_cert], now=now)
    feeder.feed(down, [Run(now - timedelta(minutes=5), passed=False)])
    m = scrape(anon)
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


def test_backlog_and_dispatch_lag_come_from_the_database(anon, alice, new_monitor, feeder, clock):
    m = new_monitor(alice)
    feeder.feed(m, [Run(clock.now(), passed=False)])  # a downtime email waits in the outbox
    MonitorLocation.update(next_check_at=clock.now() - timedelta(seconds=42)).execute()
    figures = scrape(anon)
    assert figures["uptime_outbox_backlog"] == {(): 1.0}
    assert figures["uptime_dispatch_lag_seconds"] == {(): 42.0}


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_engine_counters_are_exposed(anon):
    before = scrape(anon)
    engine_metrics.record_check("online")
    engine_metrics.record_check("offline")
    engine_metrics.record_check("online")
    engine_metrics.record_check_error()
    engine_metrics.record_dispatch_delay(1.5)
    after = scrape(anon)

    def delta(name, **labels):
        key = tuple(sorted(labels.items()))
        return after[name][key] - before.get(name, {}).get(key, 0.0)

    assert delta("uptime_checks_total", status="online") == 2
    assert delta("uptime_checks_total", status="offline") == 1
    assert delta("uptime_check_errors_total") == 1
    assert delta("uptime_dispatch_delay_seconds_count") == 1
    assert delta("uptime_dispatch_delay_seconds_bucket", le="2.0") == 1
    assert "process_cpu_seconds_total" in after


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_token_protects_it_when_set(settings, clock, db):
    app = create_app(
        settings.with_overrides(metrics_token="s3cret"), clock=clock, bind_database=False
    )
    client = app.test_client()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}):
        r = client.get("/metrics", headers=headers)
        assert r.status_code == 401
        assert r.json["error"]["code"] == "UNAUTHORIZED"
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert "uptime_outbox_backlog" in scrape(client, headers={"Authorization": "Bearer s3cret"})


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_openmetrics_is_served_when_asked_for(anon):
    r = anon.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert r.headers["Content-Type"].startswith("application/openmetrics-text")
    body = r.get_data(as_text=True)
    assert body.count("# EOF") == 1 and body.endswith("# EOF\n")
    assert "uptime_outbox_backlog 0.0" in body
