"""What a ping path's last segment means: the kinds of heartbeat ping.

What each ping does (docs/monitors.md#heartbeat-monitors):

- ``success`` (and exit code 0): a passed run; its response time is the time
  since an open ``start``, if any. The next deadline is the next expected
  time after now, plus grace.
- ``fail`` (and a non-zero exit code): a failed run, offline at once (after
  ``alert_threshold`` such runs, a downtime notification); the deadline
  moves on as for a success: the job did run.
- ``start``: opens a run (its time is kept until a finishing ping); a history
  entry, no state change. Still open at the deadline: "started at T, never
  finished".
- ``log``: a history entry only.
"""

from __future__ import annotations

import re

_EXIT_CODE = re.compile(r"^[0-9]{1,3}$")
MAX_EXIT_CODE = 255
UNKNOWN_KIND = "Unknown ping kind: use start, fail, log or an exit code 0..255"


def kind_of(suffix: str | None) -> tuple[str, int | None] | None:
    """The kind and exit code of a ping path's suffix; None for no kind of ours."""
    if suffix is None:
        return "success", None
    if suffix in ("start", "fail", "log"):
        return suffix, None
    if _EXIT_CODE.match(suffix) and int(suffix) <= MAX_EXIT_CODE:
        return "exit", int(suffix)
    return None
