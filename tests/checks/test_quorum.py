"""The pure round and quorum rules of a monitor checked from several locations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from uptime_server.checks import quorum
from uptime_server.checks.quorum import LocationReport, advance, is_fresh, min_failed
from uptime_server.checks.state import AlertRules, MonitorState, Transition, transition

T0 = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
INTERVAL = 60


def test_a_run_is_fresh_up_to_one_and_a_half_intervals():
    assert is_fresh(T0, now=T0 + timedelta(seconds=90), interval=INTERVAL)
    assert not is_fresh(T0, now=T0 + timedelta(seconds=91), interval=INTERVAL)
    # A run from a clock slightly ahead is fresh, not "in the future".
    assert is_fresh(T0 + timedelta(seconds=5), now=T0, interval=INTERVAL)


@pytest.mark.parametrize(
    ("locations", "expected"), [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (10, 6)]
)
def test_the_default_quorum_is_a_majority(locations, expected):
    assert min_failed(None, locations) == expected


def test_an_explicit_quorum_is_capped_at_the_locations():
    assert min_failed(1, 3) == 1
    assert min_failed(3, 3) == 3
    # The monitor lost locations after the setting was stored.
    assert min_failed(3, 2) == 2


@pytest.mark.parametrize(
    ("statuses", "quorum_size", "expected"),
    [
        (["offline", "online", "online"], 2, "warning"),
        (["offline", "offline", "online"], 2, "offline"),
        (["offline", "online", "online"], 1, "offline"),
        (["offline", "offline", "online"], 3, "warning"),
        (["online", "online", "online"], 2, "online"),
        (["online", "warning", "online"], 2, "warning"),
        (["offline"], 1, "offline"),
        (["warning"], 1, "warning"),
    ],
)
def test_quorum_decides_offline_warning_or_online(statuses, quorum_size, expected):
    assert quorum.quorum_status(statuses, quorum_size) == expected


def test_a_round_closes_once_every_fresh_location_has_reported():
    reports = {loc: LocationReport("online", T0) for loc in ("eu", "us", "ap")}
    first = advance(reports, ["eu", "us", "ap"], (), location="eu", now=T0, interval=INTERVAL)
    assert (first.closed, first.reported) == (False, ("eu",))
    second = advance(
        reports, ["eu", "us", "ap"], first.reported, location="ap", now=T0, interval=INTERVAL
    )
    assert (second.closed, second.reported) == (False, ("eu", "ap"))
    third = advance(
        reports, ["eu", "us", "ap"], second.reported, location="us", now=T0, interval=INTERVAL
    )
    assert (third.closed, third.reported, third.stale) == (True, (), ())


def test_a_stale_location_neither_holds_the_round_nor_counts():
    later = T0 + timedelta(seconds=120)
    reports = {
        "eu": LocationReport("offline", later),
        "us": LocationReport("online", later),
        "ap": LocationReport("offline", T0),  # 120 s old: stale
    }
    r = advance(reports, ["eu", "us", "ap"], ("us",), location="eu", now=later, interval=INTERVAL)
    assert r.closed and r.stale == ("ap",)
    assert r.fresh == {"eu": "offline", "us": "online"}
    # Counted, ap's old failure would have made two of three.
    assert r.status(min_failed(None, 3)) == "warning"


def test_a_location_with_no_run_yet_is_awaited_then_stale():
    reports = {"eu": LocationReport("online", T0)}
    first = advance(reports, ["eu", "us"], (), location="eu", now=T0, interval=INTERVAL)
    assert (first.closed, first.stale, first.started_at) == (False, (), T0)
    at = T0 + timedelta(seconds=90)
    reports = {"eu": LocationReport("online", at)}
    held = advance(
        reports,
        ["eu", "us"],
        ("eu",),
        location="eu",
        now=at,
        interval=INTERVAL,
        round_started_at=T0,
    )
    assert not held.closed
    at = T0 + timedelta(seconds=91)
    reports = {"eu": LocationReport("offline", at)}
    late = advance(
        reports,
        ["eu", "us"],
        ("eu",),
        location="eu",
        now=at,
        interval=INTERVAL,
        round_started_at=T0,
    )
    assert late.closed and late.stale == ("us",) and late.status(2) == "warning"


def test_a_run_of_a_location_no_longer_configured_closes_nothing():
    reports = {"eu": LocationReport("online", T0), "gone": LocationReport("offline", T0)}
    r = advance(reports, ["eu"], (), location="gone", now=T0, interval=INTERVAL)
    assert not r.closed


# -- transitions over rounds: what the recorder does, run by run ----------------


class Monitor:
    """Carries a monitor's state from one transition to the next, as the recorder does."""

    def __init__(self, locations: list[str], rules: AlertRules) -> None:
        self.locations, self.rules = locations, rules
        self.state = MonitorState()
        self.active = False
        self.latest: dict[str, str] = {}
        self.checked: dict[str, datetime] = {}
        self.incidents: list[str] = []  # "open" / "resolve", in order

    def run(self, location: str, status: str, at: datetime) -> Transition:
        tr = transition(
            self.state,
            location=location,
            status=status,
            locations=self.locations,
            has_active_incident=self.active,
            location_statuses=self.latest,
            location_checked_at=dict(self.checked),
            rules=self.rules,
            at=at,
            interval=INTERVAL,
        )
        self.checked[location] = at
        if tr.open_incident:
            self.incidents.append("open")
        if tr.resolve_incident:
            self.incidents.append("resolve")
        self.state, self.latest = tr.state, tr.location_statuses
        self.active = (self.active or tr.open_incident) and not tr.resolve_incident
        return tr

    def round(self, at: datetime, **statuses: str) -> list[Transition]:
        return [self.run(loc, status, at) for loc, status in statuses.items()]


def _rules(**kw) -> AlertRules:
    return AlertRules(flap_threshold=None, **kw)


def test_one_location_failing_of_two_is_a_warning_and_no_alert():
    m = Monitor(["eu", "us"], _rules())
    m.round(T0, eu="online", us="online")
    for i in range(1, 5):
        m.round(T0 + timedelta(seconds=60 * i), eu="offline", us="online")
        assert m.state.status == "warning"
    assert m.incidents == []


def test_two_failing_with_a_quorum_of_two_is_offline_with_one_alert_then_recovery():
    m = Monitor(["eu", "us", "ap"], _rules(min_failed_locations=2))
    m.round(T0, eu="online", us="online", ap="online")
    trs = m.round(T0 + timedelta(seconds=60), eu="offline", us="offline", ap="online")
    # Only the run that closes the round moves the status.
    assert [t.round_closed for t in trs] == [False, False, True]
    assert [t.status for t in trs] == ["online", "online", "offline"]
    m.round(T0 + timedelta(seconds=120), eu="offline", us="offline", ap="online")
    assert (m.state.status, m.incidents) == ("offline", ["open"])
    m.round(T0 + timedelta(seconds=180), eu="online", us="offline", ap="online")
    assert (m.state.status, m.incidents) == ("warning", ["open", "resolve"])


def test_an_explicit_quorum_of_all_three():
    m = Monitor(["eu", "us", "ap"], _rules(min_failed_locations=3))
    m.round(T0, eu="offline", us="offline", ap="online")
    assert m.state.status == "warning"
    m.round(T0 + timedelta(seconds=60), eu="offline", us="offline", ap="offline")
    assert (m.state.status, m.incidents) == ("offline", ["open"])


def test_alert_threshold_counts_rounds_not_runs():
    m = Monitor(["eu", "us"], _rules(alert_threshold=2))
    # Four failed runs, but the first two make one round.
    m.round(T0, eu="offline", us="offline")
    assert (m.state.status, m.state.consecutive_failures, m.incidents) == ("offline", 1, [])
    m.round(T0 + timedelta(seconds=60), eu="offline", us="offline")
    assert (m.state.consecutive_failures, m.incidents) == (2, ["open"])


def test_recovery_threshold_counts_rounds_too():
    m = Monitor(["eu", "us"], _rules(recovery_threshold=2))
    m.round(T0, eu="offline", us="offline")
    m.round(T0 + timedelta(seconds=60), eu="online", us="online")
    assert (m.state.status, m.state.consecutive_successes) == ("offline", 1)
    m.round(T0 + timedelta(seconds=120), eu="online", us="online")
    assert (m.state.status, m.incidents) == ("online", ["open", "resolve"])


def test_a_location_reporting_twice_replaces_its_status_in_the_open_round():
    m = Monitor(["eu", "us"], _rules())
    m.round(T0, eu="online", us="online")
    m.run("eu", "offline", T0 + timedelta(seconds=60))
    m.run("eu", "online", T0 + timedelta(seconds=70))  # us is late, still fresh
    tr = m.run("us", "offline", T0 + timedelta(seconds=75))
    assert tr.round_closed and tr.location_statuses == {"eu": "online", "us": "offline"}
    assert tr.status == "warning"


def test_a_silent_location_goes_stale_and_the_others_decide():
    m = Monitor(["eu", "us", "ap"], _rules())  # majority: 2
    m.round(T0, eu="online", us="online", ap="online")
    # ap stops reporting (its agent is degraded): its runs no longer count.
    t1 = T0 + timedelta(seconds=60)
    trs = m.round(t1, eu="offline", us="offline")
    assert [t.round_closed for t in trs] == [False, False]  # ap is fresh until T0 + 90 s
    t2 = T0 + timedelta(seconds=120)
    tr = m.run("eu", "offline", t2)
    assert tr.round_closed and tr.stale_locations == ("ap",)
    assert (tr.status, m.incidents) == ("offline", ["open"])


def test_too_few_fresh_locations_can_only_warn():
    m = Monitor(["eu", "us"], _rules())  # majority: 2
    m.round(T0, eu="online", us="online")
    for i in range(2, 6):  # us is silent from now on
        tr = m.run("eu", "offline", T0 + timedelta(seconds=60 * i))
        assert tr.round_closed and tr.stale_locations == ("us",)
    assert (m.state.status, m.incidents) == ("warning", [])


def test_one_location_behaves_as_before_rounds():
    m = Monitor(["local"], _rules(alert_threshold=2))
    trs = [m.run("local", "offline", T0 + timedelta(seconds=60 * i)) for i in range(3)]
    assert all(t.round_closed for t in trs)
    assert [t.state.consecutive_failures for t in trs] == [1, 2, 3]
    assert m.incidents == ["open"]
    # Even a run long after the previous one (a stalled daemon) is a round.
    tr = m.run("local", "online", T0 + timedelta(hours=5))
    assert tr.round_closed and tr.status == "online" and m.incidents == ["open", "resolve"]


def test_the_timeline_of_docs_alerts_md():
    m = Monitor(["eu", "us"], _rules())
    minute = timedelta(seconds=60)
    rows = [
        {"eu": "online", "us": "online"},
        {"eu": "offline", "us": "online"},
        {"eu": "offline", "us": "offline"},
        {"eu": "offline", "us": "offline"},
        {"eu": "offline"},
        {"eu": "online"},
    ]
    statuses = []
    for i, runs in enumerate(rows):
        m.round(T0 + i * minute, **runs)
        statuses.append(m.state.status)
    assert statuses == ["online", "warning", "offline", "offline", "offline", "online"]
    assert m.incidents == ["open", "resolve"]


def test_a_round_of_unknown_start_is_aged_from_now():
    # round_locations without round_started_at (written by hand, or by an older writer).
    at = T0 + timedelta(seconds=91)
    reports = {"eu": LocationReport("online", at)}
    r = advance(reports, ["eu", "us"], ("eu",), location="eu", now=at, interval=INTERVAL)
    assert (r.closed, r.started_at) == (False, at)
