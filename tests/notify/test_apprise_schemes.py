"""Every scheme Apprise knows is reviewed: fixed host, user's host (judged), or socket-level.

Walks Apprise's own list (``Apprise().details()``), disabled plugins
included, so a new Apprise release that adds a scheme, or a parameter that
names a place, fails here until someone has read what it connects to.
"""

from __future__ import annotations

import re
from typing import Any

import apprise
import pytest
from apprise.manager_plugins import NotificationManager

from uptime_server.notify.channels.apprise_channel import parse
from uptime_server.notify.channels.apprise_schemes import (
    FIXED_HOST,
    READS_FILES,
    SOCKET,
    USER_HOST,
    vet,
)


def apprise_plugins() -> list[dict[str, Any]]:
    return apprise.Apprise().details(show_disabled=True, show_requirements=True)["schemas"]


def schemes_of(plugin: dict[str, Any]) -> set[str]:
    return {*(plugin.get("protocols") or ()), *(plugin.get("secure_protocols") or ())}


def apprise_schemes() -> set[str]:
    return {s.lower() for plugin in apprise_plugins() for s in schemes_of(plugin)}


def test_the_walk_sees_apprise_s_list() -> None:
    # Guards the walk itself: an empty list would pass everything below.
    known = apprise_schemes()
    assert len(known) > 200
    assert {"discord", "json", "mailto", "hassio", "rsyslog"} <= known


def test_every_apprise_scheme_is_in_exactly_one_set() -> None:
    sets = {"FIXED_HOST": FIXED_HOST, "USER_HOST": USER_HOST, "SOCKET": SOCKET}
    unreviewed = sorted(s for s in apprise_schemes() if not any(s in v for v in sets.values()))
    assert unreviewed == [], (
        "schemes no set lists (read the plugin: does it dial a host the user names, "
        f"or open its own sockets?): {unreviewed}"
    )
    twice = sorted(s for s in apprise_schemes() if sum(s in v for v in sets.values()) > 1)
    assert twice == []
    stale = sorted((FIXED_HOST | USER_HOST | SOCKET) - apprise_schemes())
    assert stale == [], f"schemes Apprise no longer has: {stale}"


# Parameters whose name says they point somewhere, as reviewed per plugin:
# "passed on" is a URL or name handed to the service (it fetches it, we do
# not), "reads" a file or URL Apprise reads itself (READS_FILES, refused),
# "host" a second host dialled (SECOND_HOSTS, judged).
PLACE_LIKE = re.compile(r"host|smtp|server|file|url|path|template|xmpp|proxy|href|link|icon|pgp")
REVIEWED: dict[str, dict[str, str]] = {
    "bark": {"icon": "passed on"},
    "discord": {
        **{"avatar_url": "passed on", "href": "passed on", "url": "passed on"},
        "template": "reads",
    },
    "dot": {"icon": "passed on", "link": "passed on"},
    "email.base": {"smtp": "host", "pgppub": "reads", "pgpkey": "reads", "pgpprv": "reads"},
    "fcm": {"image_url": "passed on"},
    "fluxer": {"avatar_url": "passed on", "href": "passed on", "url": "passed on"},
    "guilded": {
        **{"avatar_url": "passed on", "href": "passed on", "url": "passed on"},
        "template": "reads",
    },
    "lametric": {"icon": "passed on", "icon_type": "passed on"},
    "lauther": {"icon": "passed on"},
    "matrix.base": {"path": "passed on"},  # the webhook path on the user's host
    "mattermost": {"icon_url": "passed on"},
    "msg91": {"short_url": "passed on"},  # a flag
    "nextcloud": {"url_prefix": "passed on"},  # a path prefix on the user's host
    "nextcloudtalk": {"url_prefix": "passed on"},
    "notifyre": {"template": "passed on"},  # a template id at Notifyre
    "ntfy": {"avatar_url": "passed on", "filename": "passed on"},
    "one_signal": {"template": "passed on"},
    "pushover": {"url": "passed on", "url_title": "passed on"},
    "revolt": {"icon_url": "passed on", "url": "passed on"},
    "sendgrid": {"template": "passed on"},
    "sendpulse": {"template": "passed on"},
    "streamlabs": {"image_href": "passed on", "sound_href": "passed on"},
    "synology": {"file_url": "passed on"},  # the Synology server fetches it
    "trigv": {"url": "passed on", "image_url": "passed on"},
    "whatsapp": {"template": "passed on"},
    "slack": {"template": "reads"},
    "telegram": {"template": "reads"},
    "workflows": {"template": "reads"},
    "vapid": {"keyfile": "reads", "subfile": "reads"},
    "xmpp.base": {"xmpp": "host"},
}


def test_every_parameter_that_names_a_place_is_reviewed() -> None:
    unreviewed = []
    plugins = NotificationManager()
    for scheme in sorted(apprise_schemes()):
        cls = plugins[scheme]
        module = cls.__module__.removeprefix("apprise.plugins.")
        for name, spec in (cls.template_args or {}).items():
            kind = str(spec.get("type"))
            if kind == "bool" or kind.startswith("choice") or not PLACE_LIKE.search(name):
                continue
            verdict = REVIEWED.get(module, {}).get(name)
            if verdict is None:
                unreviewed.append(f"{scheme}: {name}")
            elif verdict == "reads":
                assert name in READS_FILES.get(scheme, ()), f"{scheme}: {name} is not refused"
    assert unreviewed == [], f"parameters nobody has read the use of: {unreviewed}"


@pytest.mark.parametrize(
    "url",
    ["mailto://user:pass@example.com", "irc://irc.example.com/#ops", "rsyslog://logs.example"],
)
def test_socket_level_schemes_are_refused_unless_allowed(url: str) -> None:
    plugin = parse(url)
    with pytest.raises(ValueError, match="UPTIME_APPRISE_ALLOW"):
        vet(url, plugin, allowed=())
    with pytest.raises(ValueError, match="UPTIME_APPRISE_ALLOW"):
        vet(url, plugin, allowed=("json", "mailtos", "ircs"))
    assert vet(url, plugin, allowed=(url.partition(":")[0],))  # allowed: its hosts come back


def test_an_unreviewed_scheme_is_refused() -> None:
    with pytest.raises(ValueError, match="not reviewed"):
        vet("newservice://token", object(), allowed=("newservice",))


@pytest.mark.parametrize(
    "url",
    [
        "discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js?template=/etc/passwd",
        "discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js?TEMPLATE=http://10.0.0.5/x.json",
        "slack://TokenA/TokenB/TokenC/?template=file:///var/lib/uptime/uptime.db",
        "tgram://123456789:abcdefg_hijklmnop/?template=/etc/shadow",
        "fcm://project/device?keyfile=/etc/uptime/service-account.json",
    ],
)
def test_parameters_that_read_a_file_into_the_message_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match="names a file or URL"):
        vet(url, parse(url), allowed=())


def test_pgp_keys_of_email_are_refused_even_when_email_is_allowed() -> None:
    url = "mailto://user:pass@example.com?pgp=yes&pgppub=/root/.gnupg/key.asc"
    with pytest.raises(ValueError, match="pgppub"):
        vet(url, parse(url), allowed=("mailto",))


def test_a_template_id_is_not_a_file() -> None:
    url = "sendgrid://abcd:noreply@example.com/ops@example.com?template=d-1234"
    assert vet(url, parse(url), allowed=()) == []


@pytest.mark.parametrize(
    ("url", "hosts"),
    [
        ("discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js", []),  # a token, never dialled
        ("ntfy://12345", []),  # a topic at ntfy.sh, not 0.0.48.57
        ("ntfy://ntfy.example.com/12345", ["ntfy.example.com"]),
        ("fluxer://1234567890123/" + "t0ken" * 8, []),  # the webhook id at the cloud
        ("hassio://ha.example.com/accesstoken", ["ha.example.com"]),
        ("toot://token@10.0.0.5:8080", ["10.0.0.5"]),
        ("zulip://bot@ops.chat.example.com/" + "t0ken" * 6 + "ab", ["ops.chat.example.com"]),
        ("mailto://user:pass@example.com?smtp=10.0.0.5", ["example.com", "10.0.0.5"]),
        ("rsyslog://10.0.0.5", ["10.0.0.5"]),
    ],
)
def test_the_hosts_to_judge_include_a_second_host(url: str, hosts: list[str]) -> None:
    allowed = ("mailto", "rsyslog")
    assert vet(url, parse(url), allowed=allowed) == hosts
