"""/api/v1/status-pages: create, list, show, change, delete; slugs; two users apart."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create

URL = "/api/v1/status-pages"


def page_body(*monitor_ids: int, **changes: Any) -> dict[str, Any]:
    groups = [{"heading": "API", "monitor_ids": list(monitor_ids)}]
    return {"slug": "acme", "title": "Acme", "groups": groups, **changes}


def test_it_creates_with_the_defaults_and_shows_the_page(alice: Any) -> None:
    mid = create(alice)
    response = alice.post(
        URL,
        json=page_body(mid, groups=[{"heading": " API ", "monitor_ids": [mid], "tags": ["web"]}]),
    )
    assert response.status_code == 201, response.get_json()
    page = response.get_json()["data"]
    assert page == {
        "id": page["id"],
        "team_id": alice.user.personal_team_id,
        "slug": "acme",
        "title": "Acme",
        "description": "",
        "groups": [{"heading": "API", "monitor_ids": [mid], "tags": ["web"], "labels": {}}],
        "show_urls": False,
        "show_names": False,
        "url": "http://127.0.0.1:8080/status/acme",
        "created_at": "2026-11-22T12:00:00Z",
        "updated_at": "2026-11-22T12:00:00Z",
    }
    assert alice.get(f"{URL}/{page['id']}").get_json()["data"] == page
    assert alice.get(f"{URL}/acme").get_json()["data"] == page
    assert alice.get(URL).get_json() == {"data": [page]}


def test_it_changes_a_subset_and_deletes(alice: Any, clock: Any) -> None:
    mid = create(alice)
    alice.post(URL, json=page_body(mid))
    clock.advance(60)
    response = alice.put(f"{URL}/acme", json={"title": "Acme Corp", "show_urls": True})
    page = response.get_json()["data"]
    assert (page["title"], page["show_urls"], page["slug"]) == ("Acme Corp", True, "acme")
    assert page["groups"][0]["monitor_ids"] == [mid]
    assert page["updated_at"] == "2026-11-22T12:01:00Z"
    response = alice.put(f"{URL}/{page['id']}", json={"slug": "acme-corp"})
    assert response.get_json()["data"]["url"].endswith("/status/acme-corp")
    assert alice.delete(f"{URL}/acme-corp").get_json() == {"message": "Status page deleted"}
    assert_error(alice.get(f"{URL}/acme-corp"), 404, "STATUS_PAGE_NOT_FOUND")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"slug": "Acme"}, "slug"),
        ({"slug": "-acme"}, "slug"),
        ({"slug": "a" * 65}, "slug"),
        ({"slug": "2024"}, "slug"),  # would read as an id
        ({"title": ""}, "title"),
        ({"title": "a\nb"}, "title"),
        ({"groups": [{"monitor_ids": []}]}, "groups"),
        ({"groups": [{"heading": "x", "monitor_ids": ["1"]}]}, "groups"),
        ({"groups": [{"heading": "x", "labels": {"api": "API"}}]}, "groups"),
        # Label keys are monitor ids: above INT64, over 19 digits, not ASCII digits.
        ({"groups": [{"heading": "x", "labels": {"9223372036854775808": "x"}}]}, "groups"),
        ({"groups": [{"heading": "x", "labels": {"9" * 20: "x"}}]}, "groups"),
        ({"groups": [{"heading": "x", "labels": {"1" + "0" * 40: "x"}}]}, "groups"),
        ({"groups": [{"heading": "x", "labels": {"\u00b2": "x"}}]}, "groups"),
        ({"groups": [{"heading": "x", "labels": {"01": "x"}}]}, "groups"),
        ({"show_urls": "yes"}, "show_urls"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_it_refuses_invalid_bodies(alice: Any, change: dict[str, Any], field: str) -> None:
    response = alice.post(URL, json={**page_body(), **change})
    assert_error(response, 400, "VALIDATION_ERROR", field, only=True)
    assert alice.get(URL).get_json() == {"data": []}


def test_a_label_key_beyond_an_id_is_refused_on_change_too(alice: Any) -> None:
    mid = create(alice)
    assert alice.post(URL, json=page_body(mid)).status_code == 201
    before = alice.get(f"{URL}/acme").get_json()["data"]
    for key in ("9223372036854775808", "9" * 20, "\u0663"):
        groups = [{"heading": "API", "monitor_ids": [mid], "labels": {key: "x"}}]
        response = alice.put(f"{URL}/acme", json={"groups": groups, "title": "changed"})
        error = assert_error(response, 400, "VALIDATION_ERROR", "groups", only=True)
        assert "monitor id" in error["details"]["groups"][0]
    assert alice.get(f"{URL}/acme").get_json()["data"] == before
    # An id as large as an id can be is a key the page accepts (and finds no monitor for).
    groups = [{"heading": "API", "labels": {"9223372036854775807": "x"}}]
    assert_error(alice.put(f"{URL}/acme", json={"groups": groups}), 400, "VALIDATION_ERROR")


def test_a_page_address_of_other_digits_is_not_found(alice: Any) -> None:
    for key in ("\u00b2", "\u0663", "9" * 30):
        assert_error(alice.get(f"{URL}/{key}"), 404, "STATUS_PAGE_NOT_FOUND")


def test_a_slug_is_unique_across_users(alice: Any, bob: Any) -> None:
    assert alice.post(URL, json=page_body()).status_code == 201
    assert_error(bob.post(URL, json=page_body()), 409, "SLUG_TAKEN", "slug")
    bob.post(URL, json=page_body(slug="bobs"))
    assert_error(bob.put(f"{URL}/bobs", json={"slug": "acme"}), 409, "SLUG_TAKEN", "slug")
    assert bob.get(f"{URL}/bobs").get_json()["data"]["slug"] == "bobs"


def test_only_the_owners_monitors_may_be_named(alice: Any, bob: Any) -> None:
    alices = create(alice)
    foreign = assert_error(bob.post(URL, json=page_body(alices)), 400, "VALIDATION_ERROR", "groups")
    missing = assert_error(bob.post(URL, json=page_body(alices + 100)), 400, "VALIDATION_ERROR")
    # The same words for a monitor of someone else's and for none at all.
    assert foreign["details"]["groups"][0].replace(str(alices), "N") == missing["details"][
        "groups"
    ][0].replace(str(alices + 100), "N")
    labels = [{"heading": "x", "labels": {str(alices): "theirs"}}]
    assert_error(bob.post(URL, json=page_body(groups=labels)), 400, "VALIDATION_ERROR", "groups")
    bob.post(URL, json=page_body(slug="bobs"))
    assert_error(
        bob.put(f"{URL}/bobs", json=page_body(alices, slug="bobs")), 400, "VALIDATION_ERROR"
    )


def test_users_see_and_touch_only_their_own_pages(alice: Any, bob: Any) -> None:
    page = alice.post(URL, json=page_body()).get_json()["data"]
    for key in (page["id"], "acme"):
        assert_error(bob.get(f"{URL}/{key}"), 404, "STATUS_PAGE_NOT_FOUND")
        assert_error(bob.put(f"{URL}/{key}", json={"title": "mine"}), 404, "STATUS_PAGE_NOT_FOUND")
        assert_error(bob.delete(f"{URL}/{key}"), 404, "STATUS_PAGE_NOT_FOUND")
    assert bob.get(URL).get_json() == {"data": []}
    assert alice.get(f"{URL}/acme").get_json()["data"] == page


def test_it_needs_a_session(anon: Any) -> None:
    assert_error(anon.get(URL), 401, "UNAUTHORIZED")
    assert_error(anon.post(URL, json=page_body()), 401, "UNAUTHORIZED")


def test_a_deleted_monitor_leaves_the_page_at_its_next_edit(alice: Any, anon: Any) -> None:
    kept, gone = create(alice, name="kept"), create(alice, name="gone")
    groups = [{"heading": "API", "monitor_ids": [kept, gone], "labels": {str(gone): "Old"}}]
    alice.post(URL, json=page_body(groups=groups))
    alice.delete(f"/api/v1/monitors/{gone}")
    public = anon.get("/status/acme.json").get_json()
    assert [m["name"] for m in public["groups"][0]["monitors"]] == ["API"]
    page = alice.put(f"{URL}/acme", json={"title": "Acme 2"}).get_json()["data"]
    assert page["groups"][0]["monitor_ids"] == [kept] and page["groups"][0]["labels"] == {}
