"""The cause lists its effects on every channel (docs/alerts.md#dependencies).

A parent's DOWN content names the monitors it blocks that are down (up to
50, then how many more); its UP content says how many are still down. The
content is frozen into the outbox payload when queued and read back whole.
"""

from __future__ import annotations

import json

from uptime_server.engine.recorder import MAX_EFFECTS_LISTED, _effects_down, _effects_up
from uptime_server.engine.recorder_sql import Dependencies
from uptime_server.notify.channels.apprise_channel import message_text
from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.channels.pagerduty import event_for
from uptime_server.notify.channels.templates import default_body, webhook_body
from uptime_server.notify.message import slack_text, text_body
from uptime_server.notify.outbox import content_from_json, content_to_json


def test_down_text_lists_the_blocked_monitors_then_and_n_more(make_content):
    content = make_content(blocked_down=("app-a", "app-b"), blocked_more=3)
    text = text_body(content)
    assert "\n\nBlocking 5 monitor(s) that are down:\n- app-a\n- app-b\nand 3 more\n" in text
    assert "- app-a" in slack_text(content)


def test_names_cannot_forge_lines_or_slack_markup(make_content):
    content = make_content(blocked_down=("evil\nStatus: UP", "<!channel>"))
    text = text_body(content)
    assert "- evil Status: UP\n" in text
    assert "&lt;!channel&gt;" in slack_text(content)


def test_up_text_says_how_many_are_still_down(make_content):
    content = make_content(kind="recovery", blocked_still_down=2, duration_seconds=60)
    assert "Monitors it blocks still down: 2" in text_body(content)
    # A monitor that blocks nothing says nothing of it.
    assert "blocks" not in text_body(make_content(kind="recovery", duration_seconds=60))
    assert "Blocking" not in text_body(make_content())


def test_webhook_pagerduty_and_apprise_carry_the_effects(make_content):
    down = ChannelMessage(make_content(blocked_down=("app-a",), blocked_more=0), "<m@x>")
    assert default_body(down)["blocked"] == {"down": ["app-a"], "more": 0}
    body, _ = webhook_body({}, down)
    assert json.loads(body)["blocked"] == {"down": ["app-a"], "more": 0}
    event = event_for({"routing_key": "k"}, down, "trigger")
    assert event["payload"]["custom_details"]["blocked"] == {"down": ["app-a"], "more": 0}
    _title, text = message_text(down)
    assert "Blocking 1 monitor(s) that are down:\n- app-a" in text

    up = ChannelMessage(make_content(kind="recovery", blocked_still_down=4), "<m@x>")
    assert default_body(up)["blocked"] == {"still_down": 4}
    assert "Monitors it blocks still down: 4" in message_text(up)[1]
    plain = ChannelMessage(make_content(), "<m@x>")
    assert default_body(plain)["blocked"] is None


def test_the_payload_keeps_the_effects_as_written(make_content):
    content = make_content(blocked_down=("app-a", "app-b"), blocked_more=1)
    stored = json.loads(json.dumps(content_to_json(content)))
    assert content_from_json(stored) == content
    # A payload queued before this field existed still reads.
    old = {k: v for k, v in stored.items() if not k.startswith("blocked")}
    assert content_from_json(old).blocked_down == ()


def test_at_most_50_names_then_how_many_more():
    parents = {child: {1} for child in range(2, 60)}
    down = {child: (1000 + child, 7) for child in range(2, 60)}
    names = {child: f"app-{child:02d}" for child in range(2, 60)}
    deps = Dependencies(parents, down, names)
    effects = _effects_down(deps, 1, set())
    assert len(effects["blocked_down"]) == MAX_EFFECTS_LISTED
    assert effects["blocked_down"][0] == "app-02"
    assert effects["blocked_more"] == 58 - MAX_EFFECTS_LISTED
    assert _effects_up(deps, 1) == {"blocked_still_down": 58}
    # A monitor without children names no effect.
    assert _effects_down(deps, 5, set()) == {} and _effects_up(deps, 5) == {}
