"""The status page in a real browser: Debian's chromium, headless, driven by selenium.

The daemon's HTTP server (waitress, as ``uptime server run`` serves) runs on
127.0.0.1 with a seeded history; the browser opens the page and the test
asserts what a person sees: the banner, one bar cell per day, the colours of
a down day and an up day, and a console free of errors and CSP violations.
A screenshot is left in the test's tmp dir. ``.ci/run`` installs the browser.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live_server import serving
from tests.web.conftest import DAYS

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
UP_GREEN = "rgba(26, 127, 55, 1)"  # --up, #1a7f37
DOWN_RED = "rgba(207, 34, 46, 1)"  # --bad, #cf222e

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


@pytest.fixture
def browser() -> Iterator[Any]:
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        if os.environ.get("CI"):
            pytest.fail(
                "chromium and chromium-driver are required under CI (.ci/run installs them)"
            )
        pytest.skip(
            "chromium / chromium-driver not installed (apt-get install chromium chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=412,915"):
        options.add_argument(arg)
    # Nothing but loopback: no component updates, sync or safe-browsing lookups.
    for arg in (
        "--no-first-run",
        "--disable-background-networking",
        "--disable-sync",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-extensions",
        "--metrics-recording-only",
        "--no-pings",
        "--proxy-server=direct://",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def test_a_person_sees_the_status_page(
    app: Any, alice: Any, make_monitor: Any, history: Any, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    db = history(make_monitor("db-primary"), down=(3,))
    api = history(make_monitor("api-internal"))
    groups = [
        {"heading": "Services", "monitor_ids": [db.id, api.id], "labels": {str(db.id): "Database"}}
    ]
    body = {"slug": "acme", "title": "Acme status", "groups": groups}
    assert alice.post("/api/v1/status-pages", json=body).status_code == 201

    with serving(app) as url:
        browser.get(f"{url}/status/acme")
        banner = browser.find_element(By.ID, "banner")
        shot = tmp_path / "status-page.png"
        browser.save_screenshot(str(shot))
        logs = browser.get_log("browser")

        assert banner.text == "All systems operational"
        assert browser.title == "Acme status"
        bars = browser.find_elements(By.CSS_SELECTOR, "ol.bar")
        assert len(bars) == 2
        cells, others = (bar.find_elements(By.TAG_NAME, "li") for bar in bars)
        assert len(cells) == len(others) == DAYS
        down, up = cells[DAYS - 4], cells[DAYS - 5]
        assert down.get_attribute("title") == "2026-11-19: 0.00% uptime"
        assert down.value_of_css_property("background-color") == DOWN_RED
        assert up.get_attribute("title") == "2026-11-18: 100% uptime"
        assert up.value_of_css_property("background-color") == UP_GREEN
        assert down.size["width"] >= 1 and down.size["height"] > 10  # visible on a phone
        names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".monitor .name")]
        assert names == ["Database", "Services 2"]

    assert shot.stat().st_size > 1000
    problems = [entry for entry in logs if entry["level"] in ("SEVERE", "WARNING")]
    assert problems == [], problems
