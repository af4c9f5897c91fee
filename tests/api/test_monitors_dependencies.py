"""Monitor dependencies: the depends_on field, its checks, blocked, and the deps endpoint."""

from __future__ import annotations

from typing import Any

from tests.api.shapes import assert_error, create
from tests.notification_rows import add_notification
from uptime_server.models import Monitor, MonitorDependency

URL = "/api/v1/monitors"


def _get(user: Any, monitor_id: int) -> dict[str, Any]:
    response = user.get(f"{URL}/{monitor_id}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def _put(user: Any, monitor_id: int, **body: Any) -> Any:
    return user.put(f"{URL}/{monitor_id}", json=body)


def _deps_error(response: Any) -> str:
    error = assert_error(response, 400, "VALIDATION_ERROR", "depends_on", only=True)
    (message,) = error["details"]["depends_on"]
    return message


def _chain(user: Any, length: int) -> list[int]:
    """*length* monitors, each depending on the one before: ids[0] is the top."""
    ids = [create(user, name="m0")]
    for i in range(1, length):
        ids.append(create(user, name=f"m{i}", depends_on=[ids[-1]]))
    return ids


def test_it_stores_depends_on_on_create_and_shows_it_sorted(alice: Any) -> None:
    router, db = create(alice, name="router"), create(alice, name="db")
    response = alice.post(URL, json={**_body("web"), "depends_on": [db, router, db]})
    assert response.status_code == 201, response.get_json()
    web = response.get_json()["data"]["id"]
    assert response.get_json()["data"]["depends_on"] == sorted([router, db])

    shown = _get(alice, web)

    assert shown["depends_on"] == sorted([router, db])
    assert (shown["blocked"], shown["blocked_by"]) == (False, [])
    assert _get(alice, router)["depends_on"] == []


def _body(name: str, **changes: Any) -> dict[str, Any]:
    return {"name": name, "url": "http://127.0.0.1:9/health", "type": "http", **changes}


def test_an_update_replaces_the_list_and_leaves_it_when_omitted(alice: Any) -> None:
    a, b = create(alice, name="a"), create(alice, name="b")
    child = create(alice, name="child", depends_on=[a])

    assert _put(alice, child, name="renamed").get_json()["data"]["depends_on"] == [a]
    assert _put(alice, child, depends_on=[b]).get_json()["data"]["depends_on"] == [b]
    assert _put(alice, child, depends_on=[]).get_json()["data"]["depends_on"] == []
    assert MonitorDependency.select().count() == 0


def test_a_cycle_is_refused_with_its_path(alice: Any) -> None:
    a = create(alice, name="a")
    b = create(alice, name="b", depends_on=[a])
    c = create(alice, name="c", depends_on=[b])

    message = _deps_error(_put(alice, a, depends_on=[c]))

    assert message == f"would make a cycle: {a} → {c} → {b} → {a}"
    assert _get(alice, a)["depends_on"] == []


def test_a_two_monitor_cycle_is_refused(alice: Any) -> None:
    a = create(alice, name="a")
    b = create(alice, name="b", depends_on=[a])

    assert _deps_error(_put(alice, a, depends_on=[b])) == f"would make a cycle: {a} → {b} → {a}"


def test_a_monitor_cannot_depend_on_itself(alice: Any) -> None:
    a = create(alice, name="a")

    assert _deps_error(_put(alice, a, depends_on=[a])) == "a monitor cannot depend on itself"


def test_an_unknown_id_and_another_teams_monitor_read_the_same(alice: Any, bob: Any) -> None:
    theirs = create(bob, name="bob's")
    mine = create(alice, name="mine")
    unknown = theirs + 1000

    on_create = alice.post(URL, json=_body("web", depends_on=[theirs]))
    on_update = _put(alice, mine, depends_on=[unknown])

    assert _deps_error(on_create) == f"no monitor of yours has the id {theirs}"
    assert _deps_error(on_update) == f"no monitor of yours has the id {unknown}"
    assert Monitor.select().where(Monitor.name == "web").count() == 0
    assert MonitorDependency.select().count() == 0


def test_more_than_20_ids_are_refused(alice: Any) -> None:
    ids = [create(alice, name=f"p{i}") for i in range(21)]

    message = _deps_error(alice.post(URL, json=_body("web", depends_on=ids)))
    allowed = alice.post(URL, json=_body("web", depends_on=ids[:20]))

    assert message == "must list at most 20 monitor ids"
    assert allowed.status_code == 201
    assert _get(alice, allowed.get_json()["data"]["id"])["depends_on"] == sorted(ids[:20])


def test_ids_must_be_positive_integers(alice: Any) -> None:
    for bad in (["1"], [0], 5, [True]):
        _deps_error(alice.post(URL, json=_body("web", depends_on=bad)))


def test_a_chain_of_10_is_allowed_and_of_11_refused(alice: Any) -> None:
    ids = _chain(alice, 11)  # 10 links: m10 → m9 → … → m0

    refused = alice.post(URL, json=_body("deep", depends_on=[ids[-1]]))
    top = create(alice, name="top")
    refused_above = _put(alice, ids[0], depends_on=[top])

    message = _deps_error(refused)
    assert message.startswith("would make a chain of 11 dependencies, deeper than 10: ")
    assert message.endswith(" → ".join(str(i) for i in reversed(ids)))
    assert _deps_error(refused_above).startswith("would make a chain of 11 dependencies")
    assert _get(alice, ids[-1])["depends_on"] == [ids[-2]]


def test_deleting_a_parent_takes_it_out_of_its_childrens_lists(alice: Any) -> None:
    a, b = create(alice, name="a"), create(alice, name="b")
    child = create(alice, name="child", depends_on=[a, b])

    assert alice.delete(f"{URL}/{a}").status_code == 200

    assert _get(alice, child)["depends_on"] == [b]
    assert MonitorDependency.select().count() == 1


def test_a_parent_down_blocks_its_children_and_grandchildren(alice: Any, clock: Any) -> None:
    router = create(alice, name="router")
    db = create(alice, name="db", depends_on=[router])
    web = create(alice, name="web", depends_on=[db])
    other = create(alice, name="other")

    add_notification(router, alice.user.id, clock.now(), "router down")

    assert (_get(alice, db)["blocked"], _get(alice, db)["blocked_by"]) == (True, [router])
    assert (_get(alice, web)["blocked"], _get(alice, web)["blocked_by"]) == (True, [router])
    assert _get(alice, router)["blocked"] is False
    listed = {m["id"]: m["blocked"] for m in alice.get(URL).get_json()["data"]}
    assert listed == {router: False, db: True, web: True, other: False}


def test_a_warning_parent_or_a_resolved_downtime_does_not_block(alice: Any, clock: Any) -> None:
    router = create(alice, name="router")
    web = create(alice, name="web", depends_on=[router])
    Monitor.update(status="warning").where(Monitor.id == router).execute()
    add_notification(router, alice.user.id, clock.now(), "was down", status="resolved")

    assert _get(alice, web)["blocked"] is False
    assert [m["blocked"] for m in alice.get(URL).get_json()["data"]] == [False, False]


def test_blocked_by_names_every_parent_that_is_down(alice: Any, clock: Any) -> None:
    a, b = create(alice, name="a"), create(alice, name="b")
    mid = create(alice, name="mid", depends_on=[a])
    child = create(alice, name="child", depends_on=[mid, b])
    for parent in (a, b, mid):
        add_notification(parent, alice.user.id, clock.now(), "down")

    assert _get(alice, child)["blocked_by"] == [a, b, mid]


def test_the_dependencies_endpoint_shows_the_chains_up_and_down(alice: Any, clock: Any) -> None:
    router = create(alice, name="router")
    db = create(alice, name="db", depends_on=[router])
    web = create(alice, name="web", depends_on=[db, router])
    api = create(alice, name="api", depends_on=[web])
    add_notification(router, alice.user.id, clock.now(), "router down")
    Monitor.update(status="offline").where(Monitor.id == router).execute()

    response = alice.get(f"{URL}/{web}/dependencies")

    assert response.status_code == 200, response.get_json()

    def node(mid: int, name: str, status: str, blocked: bool, **more: Any) -> dict[str, Any]:
        return {"id": mid, "name": name, "status": status, "blocked": blocked, **more}

    assert response.get_json() == {
        "data": {
            "monitor": node(web, "web", "pending", True),
            "parents": [
                node(router, "router", "offline", False, repeated=False, parents=[]),
                node(
                    db,
                    "db",
                    "pending",
                    True,
                    repeated=False,
                    parents=[node(router, "router", "offline", False, repeated=True, parents=[])],
                ),
            ],
            "children": [node(api, "api", "pending", True, repeated=False, children=[])],
        }
    }


def test_the_dependencies_of_another_teams_monitor_are_not_found(alice: Any, bob: Any) -> None:
    theirs = create(bob, name="bob's")

    assert_error(alice.get(f"{URL}/{theirs}/dependencies"), 404, "MONITOR_NOT_FOUND")
    assert bob.get(f"{URL}/{theirs}/dependencies").status_code == 200


APPLY = "/api/v1/monitors/apply"
EXPORT = "/api/v1/monitors/export"


def _entry(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "type": "http", "url": f"http://127.0.0.1:9/{name}", **fields}


def _apply(user: Any, *entries: dict[str, Any], **flags: Any) -> dict[str, Any]:
    response = user.post(APPLY, json={"monitors": list(entries), **flags})
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def _by_name() -> dict[str, Monitor]:
    return {m.name: m for m in Monitor.select()}


def _parents(monitor: Monitor) -> list[int]:
    return sorted(
        r.depends_on_id
        for r in MonitorDependency.select().where(MonitorDependency.monitor == monitor)
    )


def test_apply_resolves_keys_names_and_ids_of_entries_and_monitors(alice: Any) -> None:
    existing = create(alice, name="dns")
    result = _apply(
        alice,
        _entry("web", depends_on=["db-key", "router"]),
        _entry("database", key="db-key", depends_on=["router", existing]),
        _entry("router"),
        _entry("dns", url="http://127.0.0.1:9/health"),
    )

    m = _by_name()
    assert _parents(m["web"]) == sorted([m["database"].id, m["router"].id])
    assert _parents(m["database"]) == sorted([m["router"].id, existing])
    changes = {s["name"]: s["changes"] for s in result["plan"]}
    assert {"field": "depends_on", "old": None, "new": ["db-key", "router"]} in changes["web"]
    assert (result["plan"][3]["action"], result["plan"][3]["name"]) == ("unchanged", "dns")


def test_export_names_parents_by_key_else_name_and_round_trips(alice: Any, bob: Any) -> None:
    router = create(alice, name="router")
    db = create(alice, name="db", key="db-key", depends_on=[router])
    create(alice, name="web", depends_on=[db, router])
    create(bob, name="bob's")

    exported = alice.get(EXPORT).get_json()["data"]["monitors"]

    by_name = {e["name"]: e for e in exported}
    assert "depends_on" not in by_name["router"]
    assert by_name["db"]["depends_on"] == ["router"]
    assert by_name["web"]["depends_on"] == ["router", "db-key"]  # by parent id
    again = _apply(alice, *exported, prune=True)
    assert [s["action"] for s in again["plan"]] == ["unchanged"] * 3
    assert again["applied"] is False


def test_an_export_applied_to_an_empty_team_rebuilds_the_graph(alice: Any, bob: Any) -> None:
    router = create(alice, name="router")
    db = create(alice, name="db", key="db-key", depends_on=[router])
    create(alice, name="web", depends_on=[db])
    exported = alice.get(EXPORT).get_json()["data"]["monitors"]

    _apply(bob, *exported)

    mine = {m.name: m for m in Monitor.select().where(Monitor.team == bob.user.personal_team_id)}
    assert _parents(mine["web"]) == [mine["db"].id]
    assert _parents(mine["db"]) == [mine["router"].id]


def test_apply_may_turn_a_dependency_round_in_one_go(alice: Any) -> None:
    a = create(alice, name="a", url="http://127.0.0.1:9/a")
    b = create(alice, name="b", url="http://127.0.0.1:9/b", depends_on=[a])

    result = _apply(alice, _entry("a", depends_on=["b"]), _entry("b"))

    assert [s["action"] for s in result["plan"]] == ["update", "update"]
    assert (_parents(Monitor.get_by_id(a)), _parents(Monitor.get_by_id(b))) == ([b], [])


def test_apply_refuses_a_cycle_among_new_entries_and_writes_nothing(alice: Any) -> None:
    response = alice.post(
        APPLY,
        json={
            "monitors": [
                _entry("a", depends_on=["b"]),
                _entry("b", key="bee", depends_on=["a"]),
                _entry("c", depends_on=["nowhere"]),
            ]
        },
    )

    error = assert_error(response, 400, "VALIDATION_ERROR", "monitors[2].depends_on", only=True)
    assert "'nowhere'" in error["details"]["monitors[2].depends_on"][0]
    cycle = alice.post(
        APPLY,
        json={
            "monitors": [_entry("a", depends_on=["bee"]), _entry("b", key="bee", depends_on=["a"])]
        },
    )
    error = assert_error(cycle, 400, "VALIDATION_ERROR", "monitors[0].depends_on")
    assert error["details"]["monitors[0].depends_on"] == ["would make a cycle: 'a' → 'bee' → 'a'"]
    assert Monitor.select().count() == 0


def test_apply_refuses_another_teams_id_and_a_parent_it_prunes(alice: Any, bob: Any) -> None:
    theirs = create(bob, name="bob's")
    create(alice, name="old")

    other = alice.post(APPLY, json={"monitors": [_entry("web", depends_on=[theirs])]})
    pruned = alice.post(
        APPLY, json={"monitors": [_entry("web", depends_on=["old"])], "prune": True}
    )

    error = assert_error(other, 400, "VALIDATION_ERROR", "monitors[0].depends_on", only=True)
    assert error["details"]["monitors[0].depends_on"] == [
        f"no monitor of yours has the id {theirs}"
    ]
    error = assert_error(pruned, 400, "VALIDATION_ERROR", "monitors[0].depends_on", only=True)
    assert "deletes" in error["details"]["monitors[0].depends_on"][0]
    for bad in ("x", [1.5], [True], [""], list(range(1, 23))):
        response = alice.post(APPLY, json={"monitors": [_entry("web", depends_on=bad)]})
        assert_error(response, 400, "VALIDATION_ERROR", "monitors[0].depends_on", only=True)


def test_the_list_reads_blocked_with_two_queries_however_long_the_page(
    alice: Any, clock: Any
) -> None:
    from tests.stats.test_monitor_uptime import queries_run

    root = create(alice, name="root")
    add_notification(root, alice.user.id, clock.now(), "down")
    parent = root
    for i in range(10):
        parent = create(alice, name=f"c{i}", depends_on=[parent])

    with queries_run() as seen:
        items = alice.get(f"{URL}?limit=100").get_json()["data"]

    assert [i["blocked"] for i in items] == [False] + [True] * 10
    texts = [sql for sql, _params in seen]
    assert sum("monitor_dependencies" in sql for sql in texts) == 1
    assert sum('FROM "notifications"' in sql for sql in texts) == 1


def test_two_edits_at_once_cannot_make_a_cycle_together(
    app: Any, alice: Any, monkeypatch: Any
) -> None:
    """Each edit is held just before it writes its links until the other got that far
    or a moment has passed: without the team lock both would check the graph
    without the other's link, and commit a cycle together."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from uptime_server.services import dependencies

    a, b = create(alice, name="a"), create(alice, name="b")
    arrived = 0
    both_checked = threading.Condition()
    write = dependencies.write

    def write_after_the_other_checked(wanted: Any) -> None:
        nonlocal arrived
        with both_checked:
            arrived += 1
            both_checked.notify_all()
            both_checked.wait_for(lambda: arrived >= 2, timeout=0.5)
        write(wanted)

    monkeypatch.setattr(dependencies, "write", write_after_the_other_checked)
    start = threading.Barrier(2)

    def put(edge: tuple[int, int]) -> int:
        client = app.test_client()
        client.set_cookie("session_cookie", alice.token)
        start.wait()
        return client.put(f"{URL}/{edge[0]}", json={"depends_on": [edge[1]]}).status_code

    with ThreadPoolExecutor(2) as pool:
        codes = sorted(pool.map(put, [(a, b), (b, a)]))

    assert codes == [200, 400]
    assert MonitorDependency.select().count() == 1
