"""GET /healthz: no auth, database state and scheduler lag."""

from __future__ import annotations

from typing import Any

from tests.api.shapes import create, sqlite_only


def test_it_reports_healthy(anon: Any) -> None:
    response = anon.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "database": "ok", "scheduler_lag_seconds": 0.0}


def test_it_reports_how_late_the_oldest_due_check_is(anon: Any, alice: Any, clock: Any) -> None:
    create(alice)
    paused = create(alice)
    alice.post(f"/api/v1/monitors/{paused}/pause")
    clock.advance(seconds=90)
    assert anon.get("/healthz").get_json()["scheduler_lag_seconds"] == 90.0


def test_it_asks_the_scheduler_when_one_runs(settings: Any, clock: Any, db: Any) -> None:
    from uptime_server.app import create_app

    app = create_app(
        settings, clock=clock, services={"scheduler_lag": lambda: 1.5}, bind_database=False
    )
    assert app.test_client().get("/healthz").get_json()["scheduler_lag_seconds"] == 1.5


@sqlite_only
def test_it_reports_an_unreachable_database(settings: Any, clock: Any) -> None:
    from uptime_server.app import create_app

    # Nothing listens on port 1 of the loopback: the connection is refused at once.
    down = settings.with_overrides(database_url="postgresql://nobody@127.0.0.1:1/none")
    app = create_app(down, clock=clock)
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.get_json() == {
        "status": "error",
        "database": "unavailable",
        "scheduler_lag_seconds": None,
        "reason": "the database cannot be reached",
    }


def test_a_healthy_answer_is_served_again_for_a_second(settings: Any, clock: Any, db: Any) -> None:
    from uptime_server.app import create_app

    asked: list[float] = []

    def lag() -> float:
        asked.append(len(asked) * 2.0)
        return asked[-1]

    app = create_app(settings, clock=clock, services={"scheduler_lag": lag}, bind_database=False)
    client = app.test_client()
    lags = [client.get("/healthz").get_json()["scheduler_lag_seconds"] for _ in range(3)]
    assert (lags, len(asked)) == ([0.0, 0.0, 0.0], 1)
    clock.advance(seconds=1)
    assert client.get("/healthz").get_json()["scheduler_lag_seconds"] == 2.0
    assert len(asked) == 2


def test_a_failed_check_is_not_remembered(settings: Any, clock: Any, db: Any) -> None:
    from uptime_server.app import create_app

    outcomes = iter([RuntimeError("database is down"), 0.5])

    def lag() -> float:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    app = create_app(settings, clock=clock, services={"scheduler_lag": lag}, bind_database=False)
    client = app.test_client()
    assert client.get("/healthz").status_code == 503
    assert client.get("/healthz").get_json()["scheduler_lag_seconds"] == 0.5


def test_a_fresh_answer_is_sent_without_flask_byte_for_byte(
    settings: Any, clock: Any, db: Any
) -> None:
    """fast_paths/health sends the remembered answer with the status, headers and body
    Flask sent for it, and the request never reaches Flask."""
    from uptime_server.app import create_app

    lags = iter([0.25, 4.0])
    app = create_app(
        settings, clock=clock, services={"scheduler_lag": lambda: next(lags)}, bind_database=False
    )
    through_flask: list[str] = []
    app.before_request(lambda: through_flask.append("x") and None)
    client = app.test_client()
    first = client.get("/healthz")
    again = [client.get("/healthz") for _ in range(3)]
    assert len(through_flask) == 1
    assert first.status == "200 OK" and first.get_json()["scheduler_lag_seconds"] == 0.25
    for response in again:
        assert response.status == first.status
        assert list(response.headers.items()) == list(first.headers.items())
        assert response.get_data() == first.get_data()
    assert ("X-Content-Type-Options", "nosniff") in list(first.headers.items())
    assert client.head("/healthz").status_code == 200  # any other method: Flask
    assert len(through_flask) == 2
    clock.advance(seconds=1)  # stale: Flask asks again
    assert client.get("/healthz").get_json()["scheduler_lag_seconds"] == 4.0
    assert len(through_flask) == 3


def test_after_a_failure_nothing_is_sent_from_before_it(settings: Any, clock: Any, db: Any) -> None:
    from uptime_server.app import create_app

    outcomes = iter([0.5, RuntimeError("database is down"), 0.75])

    def lag() -> float:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    app = create_app(settings, clock=clock, services={"scheduler_lag": lag}, bind_database=False)
    client = app.test_client()
    assert client.get("/healthz").get_json()["scheduler_lag_seconds"] == 0.5
    assert client.get("/healthz").get_json()["scheduler_lag_seconds"] == 0.5
    clock.advance(seconds=1)
    assert client.get("/healthz").status_code == 503
    assert client.get("/healthz").get_json()["scheduler_lag_seconds"] == 0.75


def test_an_engine_that_is_not_doing_its_work_makes_it_503_with_the_reason(
    settings: Any, clock: Any, db: Any
) -> None:
    from uptime_server.app import create_app

    verdicts = iter(["no check recorded or claimed for 31 s while checks are due", None])
    services = {"scheduler_lag": lambda: 31.0, "engine_health": lambda: next(verdicts)}
    app = create_app(settings, clock=clock, services=services, bind_database=False)
    client = app.test_client()
    stalled = client.get("/healthz")
    assert stalled.status_code == 503
    assert stalled.get_json() == {
        "status": "error",
        "database": "ok",
        "scheduler_lag_seconds": 31.0,
        "reason": "no check recorded or claimed for 31 s while checks are due",
    }
    # Never remembered: the next poll asks again (and the engine is back).
    assert client.get("/healthz").status_code == 200


@sqlite_only
def test_an_unreachable_database_is_logged_once_not_on_every_poll(
    settings: Any, clock: Any, caplog: Any
) -> None:
    from uptime_server.app import create_app
    from uptime_server.db.outages import OUTAGES

    OUTAGES.recovered()
    caplog.clear()
    down = settings.with_overrides(database_url="postgresql://nobody@127.0.0.1:1/none")
    client = create_app(down, clock=clock).test_client()
    assert [client.get("/healthz").status_code for _ in range(5)] == [503] * 5
    lines = [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert [r.getMessage().split(" (")[0] for r in lines] == ["database unavailable"]
    assert not [r for r in caplog.records if r.exc_info]
