"""Tags and keys of monitors: the rules of each, shared by bodies and query strings.

A tag is a short lowercase label (docs/api.md#tags). Tags are case-folded
and stripped on the way in, rather than refused, because ``Prod`` and
``prod`` meaning two labels would only ever be a mistake; repeats collapse
and the list is kept sorted, so a monitor's tags compare equal however they
were written. A key names a monitor for ``uptime apply``
(docs/monitors-as-code.md): case-sensitive, unique among one user's monitors.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from werkzeug.datastructures import MultiDict

from uptime_server.errors import validation_error
from uptime_server.schemas.requests import Rule

TAG_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,31}$"
MAX_TAGS = 20
KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
TAG_RULE = (
    "each tag must be 1 to 32 characters of a-z, 0-9, '_', '.', '-', "
    "starting with a letter or digit"
)
_TAG = re.compile(TAG_PATTERN)


def fold_tag(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def normalise_tags(value: Any) -> Any:
    """Folded, repeats collapsed, sorted (a non-list of strings is left to the type check)."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return sorted({fold_tag(item) for item in value})
    return value


def empty_is_none(value: Any) -> Any:
    return None if value == "" else value


Tags = Annotated[
    list[Annotated[str, Field(pattern=TAG_PATTERN)]],
    Field(max_length=MAX_TAGS),
    BeforeValidator(normalise_tags),
    Rule(f"must list at most {MAX_TAGS} tags", on=("too_long",)),
    Rule(TAG_RULE, on=("string_pattern_mismatch",)),
]
Key = Annotated[
    Annotated[str, Field(pattern=KEY_PATTERN)] | None,
    BeforeValidator(empty_is_none),
    Rule(
        "must be 1 to 100 characters of A-Z, a-z, 0-9, '_', '.', '-', starting with a letter "
        "or digit",
        on=("string_pattern_mismatch",),
    ),
]


def tag_query(args: MultiDict[str, str], name: str = "tag") -> list[str]:
    """The repeated ``?tag=`` parameters, folded and deduplicated, or a VALIDATION_ERROR."""
    tags = sorted({fold_tag(v) for v in args.getlist(name) if v != ""})
    if len(tags) > MAX_TAGS or not all(_TAG.fullmatch(t) for t in tags):
        raise validation_error({name: [f"{TAG_RULE}; at most {MAX_TAGS} tags"]})
    return tags
