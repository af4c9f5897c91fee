"""What each Apprise scheme connects to, and so how the apprise channel treats it.

Every scheme Apprise knows is in exactly one of three sets.
tests/notify/test_apprise_schemes.py walks Apprise's own list and fails on a
scheme in none of them (or in two), so a new Apprise release cannot bring a
scheme in unreviewed; ``vet`` refuses a scheme in none of them too.

``FIXED_HOST``: the service's own host (discord.com, api.telegram.org, ...).
What stands in the host place of the URL is a token or an id and is never
dialled, so nothing in it is judged.

``USER_HOST``: a server the user names: their ntfy, Gotify, Home Assistant,
Mastodon instance, a ``json://`` endpoint. The host is judged: an IP literal
when the channel is created or edited, a name when a message is sent.

``SOCKET``: plugins that speak their own protocol through smtplib or raw
sockets (email, IRC, syslog, MQTT, XMPP, APRS, SMPP, Growl) or drive the
server's own desktop. They are refused unless the operator lists the scheme
in ``UPTIME_APPRISE_ALLOW``; allowed, their hosts are judged like
``USER_HOST`` ones, including a second host a parameter names (email's
``smtp=``, XMPP's ``xmpp=``).

Whatever the set, every connection a plugin opens while it sends goes
through ``net/socket_guard``: a redirect, a discovery document (Matrix,
Bluesky) or a second request is judged too. The sets decide what can be
refused before anything is sent, and which host an error may name.

Some parameters name a file on this server, or a URL Apprise fetches, whose
content goes into the message (``template=`` of Discord, Slack, Telegram and
Workflows; ``keyfile=`` of FCM; VAPID's key and subscription files; email's
PGP keys). A user must not make the server read its own files, or an
internal URL, into a message they receive: those parameters are refused for
every scheme that has them, whatever ``UPTIME_APPRISE_ALLOW`` says.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from apprise.utils.parse import parse_qsd


def _both(*names: str) -> frozenset[str]:
    """Each name and its TLS form (``json`` and ``jsons``)."""
    return frozenset(n for name in names for n in (name, f"{name}s"))


FIXED_HOST = frozenset(
    {
        *("46elks", "elks", "atalk", "azure", "o365", "bluesky", "bsky", "brevo"),
        *("bulksms", "bulkvs", "burstsms", "chanify", "chime", "clickatell", "clicksend"),
        *("d7sms", "dapnet", "dingtalk", "discord", "dot", "eight00com", "exotel", "fcm"),
        *("feishu", "flock", "freemobile", "gchat", "groupme", "guilded", "httpsms"),
        *("ifttt", "jira", "join", "kavenegar", "kook", "kumulos", "lark", "lauther"),
        *("line", "mailersend", "mailgun", "msg91", "msgbird", "nexmo", "vonage"),
        *("notifiarr", "notifyre", "octopush", "onesignal", "opsgenie", "pagerduty"),
        *("pagertree", "pbul", "pingram", "plivo", "postmark", "pover", "prowl"),
        *("psafer", "psafers", "push", "pushed", "pushme", "pushplus", "wecom"),
        *("pushward", "pushy", "qq", "reddit", "resend", "revolt", "ringc", "ryver"),
        *("schan", "sendgrid", "sendpulse", "serwersms", "ses", "seven", "sfr"),
        *("signalgrid", "signl4", "sinch", "slack", "smsc", "smsmanager", "smsmgr"),
        *("smtp2go", "sns", "sparkpost", "spike", "splunk", "victorops", "spugpush"),
        *("spush", "stackfield", "strmlabs", "tgram", "threema", "tweet", "twitter"),
        *("x", "twilio", "twist", "vapid", "viber", "voipms", "webex", "wxteams"),
        *("wechat", "wecombot", "whatsapp", "wxpusher", "zoom"),
    }
)

USER_HOST = _both(
    *("apprise", "bark", "emby", "jellyfin", "enigma2", "evolution", "flowtriq"),
    *("fluxer", "form", "json", "xml", "gotify", "hassio", "humhub", "kodi", "xbmc"),
    *("lametric", "mastodon", "toot", "matrix", "misskey", "mmost", "ncloud"),
    *("nctalk", "notica", "notifico", "ntfy", "parsep", "pinglet", "pjet"),
    *("pushdeer", "rocket", "signal", "smseagle", "synology", "trigv", "workflow"),
    "session",
) | {"sogs", "zulip"}  # zulip://bot@org.chat.example.com/token names its host too

SOCKET = _both("mailto", "irc", "mqtt", "xmpp", "smpp") | {
    *("rsyslog", "syslog", "aprs", "growl"),
    # The server's own desktop, D-Bus, or a USB light.
    *("dbus", "kde", "qt", "gnome", "glib", "gio", "macosx", "windows", "blink1"),
}

# Parsed plugin attributes holding a second host the plugin connects to.
SECOND_HOSTS = ("smtp_host", "xmpp_host")

# Parameters that name a file here or a URL Apprise fetches (see above).
READS_FILES: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        ("discord", "guilded", "slack", "tgram", "workflow", "workflows"),
        frozenset({"template"}),
    ),
    "fcm": frozenset({"keyfile"}),
    "vapid": frozenset({"keyfile", "subfile"}),
    **dict.fromkeys(("mailto", "mailtos"), frozenset({"pgppub", "pgpkey", "pgpprv"})),
}


def scheme_of(url: str) -> str:
    return url.partition("://")[0].lower()


def vet(url: str, plugin: Any, *, allowed: Iterable[str]) -> list[str]:
    """The hosts of *url* to judge; ValueError when the URL is refused whatever they are.

    *plugin* is Apprise's parse of *url*; *allowed* the operator's
    ``UPTIME_APPRISE_ALLOW``. Nothing is resolved or sent.
    """
    scheme = scheme_of(url)
    if scheme in SOCKET:
        if scheme not in allowed:
            raise ValueError(
                f"uses {scheme}://, which opens its own connections (not HTTP): "
                "this server allows it only when UPTIME_APPRISE_ALLOW lists it"
            )
    elif scheme not in FIXED_HOST and scheme not in USER_HOST:
        raise ValueError(f"uses {scheme[:20]}://, which this server has not reviewed")
    given = set(parse_qsd(url.partition("?")[2], simple=True)["qsd"])
    reads = sorted(given & READS_FILES.get(scheme, frozenset()))
    if reads:
        raise ValueError(
            f"must not set {', '.join(reads)}: it names a file or URL the server would "
            "read into the message"
        )
    if scheme in FIXED_HOST:
        return []
    # ntfy://topic and fluxer://id/token go to the service's cloud: what stands
    # in the host place then is a topic or an id, however much it looks like
    # an address ("12345" is one to inet_aton).
    cloud = str(getattr(plugin, "mode", "")).lower() == "cloud"
    hosts = [
        None if cloud else getattr(plugin, "host", None),
        *(getattr(plugin, a, None) for a in SECOND_HOSTS),
    ]
    return list(dict.fromkeys(h for h in hosts if isinstance(h, str) and h))
