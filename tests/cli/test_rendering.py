"""Terminal rendering and option parsing, on values shaped like the API's
(docs/api.md#monitor-object, #notification-object)."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from typing import Any

import pytest
import typer
from rich.console import Console

from uptime_cli import charts, output
from uptime_cli.commands.options import monitor_fields, parse_assignment, parse_headers, parse_when


def render(renderable: Any, width: int = 160) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_sparkline_scales_between_bounds_and_leaves_gaps() -> None:
    assert charts.sparkline([0, 50, 100, None], lo=0, hi=100) == "▁▅█ "
    assert charts.sparkline([5, 5, 5]) == "███"
    assert charts.sparkline([None, None]) == "  "


def test_resample_averages_down_to_the_width() -> None:
    assert charts.resample([1, 3, 5, 7], 2) == [2, 6]
    assert charts.resample([None, None, 4, None], 2) == [None, 4]
    assert charts.resample([1, 2], 10) == [1, 2]


def test_bar_length_is_proportional() -> None:
    assert charts.bar(100, 100, width=10) == "█" * 10
    assert charts.bar(50, 100, width=10).rstrip() == "█" * 5
    assert charts.bar(None, 100, width=10) == ""
    assert len(charts.bar(33, 100, width=10)) == 10


def stats_fixture(buckets: int) -> dict[str, Any]:
    series = [
        {
            "start": f"2026-11-22T{h % 24:02d}:00:00Z",
            "checks": 0 if h == 3 else 60,
            "failed": 6 if h == 5 else 0,
            "uptime": None if h == 3 else (90.0 if h == 5 else 100.0),
            "avg_response_time": None if h == 3 else 100 + h * 10,
            "p95_response_time": None if h == 3 else 200 + h * 10,
        }
        for h in range(buckets)
    ]
    return {
        "uptime": {"24h": 99.583, "7d": 99.9, "30d": None},
        "response_times": {"avg": 215, "min": 80, "max": 900, "p95": 420},
        "incidents": {"count": 1, "total_downtime": 252},
        "checks": {"total": 1380, "successful": 1374, "failed": 6},
        "period": "24h",
        "granularity": "1h",
        "series": series,
    }


def test_stats_view_draws_summary_sparklines_and_bars() -> None:
    text = render(charts.stats_view(stats_fixture(24)))
    assert "Statistics over 24h by 1h" in text
    assert "24h 99.58%" in text and "30d —" in text
    assert "p95 420 ms" in text
    assert "1 (down 4m 12s)" in text
    assert "1380 total, 1374 passed, 6 failed" in text
    blocked = stats_fixture(24)
    blocked["incidents"] = {"count": 1, "total_downtime": 252, "blocked_downtime": 120}
    assert "1 (down 4m 12s, 2m blocked)" in render(charts.stats_view(blocked))
    spark = next(line for line in text.splitlines() if line.startswith("Response  "))
    assert "▃▃▄ ▄" in spark  # scaled from 0 ms; a gap where a bucket had no checks
    assert re.search(r"█\s+100 ms–330 ms$", spark.rstrip())
    uptime = next(line for line in text.splitlines() if line.rstrip().endswith("–100%"))
    assert "▁" in uptime  # the 90% hour is the lowest tick: the scale starts at the worst
    assert "90.00%–100%" in uptime
    assert "90.00%" in text  # the bar table shows each bucket
    assert text.count("11-22 ") >= 24  # one compact start label per hourly bucket


def test_a_long_series_gets_sparklines_only() -> None:
    text = render(charts.stats_view(stats_fixture(288)))
    assert "Uptime" in text and "CHECKS" not in text
    spark = next(line for line in text.splitlines() if line.rstrip().endswith("–100%"))
    assert len(spark) < 160


def test_stats_view_without_checks() -> None:
    empty = {"uptime": {"24h": None, "7d": None, "30d": None}, "series": []}
    assert "Statistics over" in render(charts.stats_view(empty))


NOTIFICATION = {
    "id": 4,
    "monitor_id": 2,
    "monitor_name": "api-prod",
    "monitor_url": "https://api.example.com/health",
    "type": "downtime",
    "message": "api-prod is DOWN: expected status in [200], got 503",
    "status": "resolved",
    "started_at": "2026-11-22T11:00:00Z",
    "resolved_at": "2026-11-22T11:04:12Z",
    "duration": 252,
    "notification_method": "email",
    "acknowledged": True,
    "acknowledged_at": "2026-11-22T11:01:00Z",
    "email_sent_at": "2026-11-22T11:00:03Z",
    "error_details": {"status_code": 503, "response_time": 87, "error_message": "got 503"},
}


def test_notification_views() -> None:
    table = render(output.notifications_table([NOTIFICATION]))
    assert "api-prod" in table and "resolved" in table and "4m 12s" in table and "✓" in table
    detail = render(output.notification_view(NOTIFICATION))
    for expected in ("https://api.example.com/health", "503", "87 ms", "2026-11-22 11:04:12Z"):
        assert expected in detail


def test_history_and_test_result_views() -> None:
    record = {
        "id": 1,
        "checked_at": "2026-11-22T12:00:00Z",
        "status": "offline",
        "response_time": None,
        "status_code": None,
        "error": "connection refused",
        "location": "local",
        "attempts": 2,
    }
    text = render(output.history_table([record]))
    assert "offline" in text and "connection refused" in text and "local" in text
    result = {"status": "online", "response_time": 42, "status_code": 200, "error": None,
              "checked_at": "2026-11-22T12:00:00Z", "attempts": 1}  # fmt: skip
    text = render(output.test_result_view(result))
    assert "online" in text and "42 ms" in text and "Attempts" in text


@pytest.mark.parametrize(
    "seconds, text", [(0, "0s"), (59, "59s"), (252, "4m 12s"), (90061, "1d 1h 1m 1s"), (3600, "1h")]
)
def test_durations(seconds: int, text: str) -> None:
    assert output.duration(seconds) == text


def test_percentages_and_times() -> None:
    assert output.pct(None) == "—"
    assert output.pct(99.9512) == "99.95%"
    assert output.pct(100.0) == "100%"
    assert output.ms(12.4) == "12 ms"
    assert output.when("2026-11-22T12:00:00Z") == "2026-11-22 12:00:00Z"


def test_parse_when_accepts_iso_and_spans() -> None:
    now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    assert parse_when("2h", "--from", now=now) == "2026-11-22T10:00:00Z"
    assert parse_when("7d", "--from", now=now) == "2026-11-15T12:00:00Z"
    assert parse_when("2026-11-20T08:00:00Z", "--from") == "2026-11-20T08:00:00Z"
    assert parse_when("2026-11-20T10:00:00+02:00", "--from") == "2026-11-20T08:00:00Z"
    assert parse_when("2026-11-20T08:00:00", "--from") == "2026-11-20T08:00:00Z"
    assert parse_when(None, "--from") is None
    with pytest.raises(typer.BadParameter):
        parse_when("last tuesday", "--from")


def test_parse_assignment_reads_json_else_text() -> None:
    assert parse_assignment("timeout=15") == ("timeout", 15)
    assert parse_assignment("verify_ssl=false") == ("verify_ssl", False)
    assert parse_assignment('headers={"A": "1"}') == ("headers", {"A": "1"})
    assert parse_assignment("name=api prod") == ("name", "api prod")
    assert parse_assignment("body=") == ("body", "")
    with pytest.raises(typer.BadParameter):
        parse_assignment("=x")


def test_headers_and_monitor_fields() -> None:
    assert parse_headers(["A: 1", "B:two: three", ""]) == {"A": "1", "B": "two: three"}
    with pytest.raises(typer.BadParameter):
        parse_headers(["no colon"])
    fields = monitor_fields(
        {"type_": "http", "interval": 30, "header": ["X: y"], "location": [], "verify_ssl": False}
    )
    assert fields == {"type": "http", "check_interval": 30, "headers": {"X": "y"},
                      "verify_ssl": False}  # fmt: skip


# Monitors of each type, shaped like the API's monitor object (docs/api.md#monitor-fields).
HTTP_MONITOR = {"id": 1, "name": "web", "type": "https", "url": "https://example.test/health",
                "status": "online", "status_code": 204, "method": "GET", "expected_status": [204],
                "checks_supported": True}  # fmt: skip
DNS_MONITOR = {"id": 2, "name": "resolver", "type": "dns", "url": "dns://example.test",
               "query_name": None, "record_type": "MX", "resolver": "127.0.0.1:5353",
               "status": "online", "status_code": None, "checks_supported": True}  # fmt: skip
PING_MONITOR = {"id": 3, "name": "gw", "type": "ping", "url": "ping://192.0.2.1",
                "count": 3, "max_packet_loss": 0.0, "status": "offline",
                "status_code": None, "checks_supported": True}  # fmt: skip
TCP_MONITOR = {"id": 4, "name": "redis", "type": "tcp", "url": "tcp://127.0.0.1:6379",
               "tls": False, "status": "online", "status_code": 999}  # fmt: skip


def column(text: str, header: str) -> list[str]:
    """The cells under *header* in a rendered table, one per row (rows are one line each)."""
    lines = text.splitlines()
    start = lines[0].index(header)
    return [line[start : start + len(header)].strip() for line in lines[1:]]


def test_the_list_shows_an_http_status_for_http_monitors_only() -> None:
    text = render(output.monitors_table([HTTP_MONITOR, DNS_MONITOR, PING_MONITOR, TCP_MONITOR]))
    assert column(text, "CODE") == ["204", "—", "—", "—"]  # a stray tcp status_code is not shown
    rows = text.splitlines()[1:]
    assert rows[0].rstrip().endswith("https  https://example.test/health")
    assert rows[1].rstrip().endswith("dns    example.test MX")
    assert rows[2].rstrip().endswith("ping   192.0.2.1")
    assert "ping://" not in text
    assert rows[3].rstrip().endswith("tcp    tcp://127.0.0.1:6379")


def test_a_dns_target_prefers_query_name_and_defaults_to_a() -> None:
    monitor = {**DNS_MONITOR, "query_name": "www.example.test", "record_type": None}
    assert output.target(monitor) == "www.example.test A"


def test_a_list_of_summaries_shows_no_code_column_and_guesses_no_record_type() -> None:
    # Summaries from a server older than status_code, query_name and
    # record_type in GET /monitors (docs/api.md#list-monitors).
    summary = ("id", "name", "url", "type", "status", "paused", "uptime_24h", "response_time")
    items = [{k: m[k] for k in summary if k in m} for m in (HTTP_MONITOR, DNS_MONITOR)]
    text = render(output.monitors_table(items))
    assert "CODE" not in text.splitlines()[0] and "TARGET" in text
    assert text.splitlines()[2].split()[-2:] == ["dns", "example.test"]


def test_show_of_a_dns_monitor_has_its_record_type_and_no_http_status() -> None:
    text = render(output.monitor_view(DNS_MONITOR))
    assert re.search(r"Record type\s+MX", text)
    assert "Status code" not in text and "Method" not in text
    assert "Checks" not in text  # no "not supported" line: every type is checked
    default = render(output.monitor_view({**DNS_MONITOR, "record_type": None}))
    assert re.search(r"Record type\s+A\s*$", default, re.MULTILINE)
    assert re.search(r"Query name\s+example.test\s*$", default, re.MULTILINE)  # from the url
    assert re.search(r"Status code\s+204", render(output.monitor_view(HTTP_MONITOR)))


def test_a_test_run_of_a_dns_monitor_shows_what_was_queried_and_no_http_status() -> None:
    result = {"status": "online", "response_time": 3, "status_code": None, "error": None,
              "checked_at": "2026-11-22T12:00:00Z"}  # fmt: skip
    text = render(output.test_result_view(result, DNS_MONITOR))
    assert re.search(r"Target\s+example.test MX", text)
    assert re.search(r"Type\s+dns", text)
    assert "Status code" not in text and "online" in text and "3 ms" in text
    http = render(output.test_result_view({**result, "status_code": 204}, HTTP_MONITOR))
    assert re.search(r"Status code\s+204", http)
