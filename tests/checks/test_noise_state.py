"""Noise control in the pure transitions: recovery_threshold and flapping (docs/alerts.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from uptime_server.checks.state import AlertRules, MonitorState, Transition, transition

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def run(
    prev: MonitorState,
    status: str,
    rules: AlertRules,
    at: datetime,
    *,
    active: bool = False,
    latest: dict[str, str] | None = None,
) -> Transition:
    return transition(
        prev,
        location="local",
        status=status,
        locations=["local"],
        has_active_incident=active,
        location_statuses=latest,
        rules=rules,
        at=at,
    )


def drive(statuses: str, rules: AlertRules, *, every: int = 60) -> list[Transition]:
    """Evaluate a string of u(p)/d(own) runs *every* seconds apart from T0.

    Each run starts from the state the recorder would store after the one
    before (incidents as it would write them).
    """
    state, active, latest = MonitorState(), False, {}
    out = []
    for i, ch in enumerate(statuses):
        tr = run(
            state,
            "online" if ch == "u" else "offline",
            rules,
            T0 + timedelta(seconds=i * every),
            active=active,
            latest=latest,
        )
        out.append(tr)
        state, latest = tr.state, tr.location_statuses
        active = (active or tr.open_incident) and not tr.resolve_incident
    return out


def test_recovery_threshold_holds_offline_until_met():
    trs = drive("udduuu", AlertRules(recovery_threshold=3))
    assert [t.status for t in trs] == [
        "online",
        "offline",
        "offline",
        "offline",
        "offline",
        "online",
    ]
    assert [t.open_incident for t in trs] == [False, True, False, False, False, False]
    assert [t.resolve_incident for t in trs] == [False] * 5 + [True]
    assert [t.state.consecutive_successes for t in trs] == [0, 0, 0, 1, 2, 0]


def test_a_failure_during_the_hold_starts_the_count_again():
    trs = drive("uduuduuu", AlertRules(recovery_threshold=3))
    assert [t.status for t in trs][-4:] == ["offline", "offline", "offline", "online"]
    assert sum(t.open_incident for t in trs) == 1  # the same downtime all along
    assert sum(t.resolve_incident for t in trs) == 1


def test_recovery_threshold_1_is_the_old_behaviour():
    trs = drive("udu", AlertRules())
    assert [t.status for t in trs] == ["online", "offline", "online"]
    assert trs[2].resolve_incident


def test_flapping_starts_after_more_than_threshold_changes_and_holds_alerts():
    rules = AlertRules(flap_threshold=4, flap_window=3600)
    trs = drive("ududud" + "d" * 3, rules)
    # Changes at runs 1..5: the fifth (> 4) starts flapping; earlier ones alert.
    assert [t.flapping_started for t in trs].index(True) == 5
    assert [t.open_incident for t in trs][:5] == [False, True, False, True, False]
    assert [t.resolve_incident for t in trs][:5] == [False, False, True, False, True]
    assert not trs[5].open_incident  # held: the DOWN of the fifth change
    assert all(t.state.flapping_since == T0 + timedelta(minutes=5) for t in trs[5:])
    assert not any(t.open_incident or t.resolve_incident for t in trs[5:])


def test_flapping_settles_when_changes_in_window_drop_to_half_and_opens_the_held_downtime():
    rules = AlertRules(flap_threshold=4, flap_window=600)
    trs = drive("ududud" + "d" * 20, rules)
    settled = [t.flapping_settled for t in trs]
    # Changes at minutes 1..5; at minute 13 those of minutes 1..3 are out of
    # the 10-minute window: 2 left = 4 // 2, so it settles, DOWN.
    assert settled.index(True) == 13 and settled.count(True) == 1
    assert trs[13].state.flapping_since is None and trs[13].status == "offline"
    assert trs[13].open_incident  # the held downtime opens once
    assert not any(t.open_incident for t in trs[14:])


def test_settling_up_resolves_a_downtime_open_since_before_the_flapping():
    rules = AlertRules(flap_threshold=3, flap_window=600)
    trs = drive("udud" + "u" * 15, rules)
    # Changes at minutes 1..4: the fourth, an UP, starts flapping while the
    # downtime opened at minute 3 is open; its resolve is held.
    assert trs[3].open_incident
    assert trs[4].flapping_started and not trs[4].resolve_incident
    i = [t.flapping_settled for t in trs].index(True)
    assert trs[i].status == "online" and trs[i].resolve_incident
    assert not any(t.resolve_incident for t in trs[4:i])


def test_steady_flapping_does_not_settle():
    rules = AlertRules(flap_threshold=4, flap_window=600)
    trs = drive("ud" * 30, rules, every=120)
    assert sum(t.flapping_started for t in trs) == 1
    assert not any(t.flapping_settled for t in trs)


def test_flap_threshold_none_turns_detection_off_and_settles_a_flapping_monitor():
    trs = drive("ud" * 10, AlertRules(flap_threshold=None))
    assert not any(t.flapping_started for t in trs)
    assert all(t.state.state_changes == () for t in trs)
    flapping = MonitorState("online", flapping_since=T0, state_changes=(1, 2))
    tr = run(flapping, "online", AlertRules(flap_threshold=None), T0)
    assert tr.flapping_settled and tr.state.flapping_since is None


def test_the_change_ring_stays_short():
    trs = drive("ud" * 50, AlertRules(flap_threshold=3, flap_window=86400))
    assert max(len(t.state.state_changes) for t in trs) == 4
