"""Monitor files for ``uptime apply``: read, interpolate, merge defaults, place every field.

A file (YAML, or JSON, which YAML reads too) is a mapping with ``monitors:``,
a list of entries, and optional ``defaults:``, fields every entry of that
file starts from (``alerts`` merged setting by setting). String values may
say ``${NAME}`` for an environment variable (``$${`` is a literal ``${``), of
the ones a file may read: ``UPTIME_VAR_*``, and those the user names with
``--env NAME``, never the CLI's own credentials (``NEVER_EXPANDED``); any
other, or an unset one, is an error naming it. A file is anyone's text (a
pull request, a shared repository): it must not be able to read the token
the CLI runs with into a URL it then has the server fetch. The values read
are kept (``Entry.from_env``) so output can mask them.

YAML aliases (``*name``, ``<<: *name``) are refused where they appear: a few
lines of them expand to billions of nodes, or to a loop (``&a [*a]``), and
``defaults:`` says what they would. Every entry and field keeps the file and
line it came from (PyYAML's node marks), so a refusal by the server can be
reported where the user has to fix it. docs/monitors-as-code.md.

Nothing here talks to the server: this module only turns files into entries
or into a list of problems, all of them at once.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

SUFFIXES = (".yaml", ".yml", ".json")
TOP_LEVEL = ("defaults", "monitors")
_REFERENCE = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STR_TAG = "tag:yaml.org,2002:str"
# Variables a file may always read; others only when named with --env.
VAR_PREFIX = "UPTIME_VAR_"
# The CLI's credentials and server: never read by a file, even when named.
NEVER_EXPANDED = frozenset(("UPTIME_TOKEN", "UPTIME_SESSION", "UPTIME_SERVER", "UPTIME_PING_URL"))


@dataclass(frozen=True)
class Place:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Entry:
    """One monitor as the files state it, defaults merged in."""

    fields: dict[str, Any]
    place: Place
    # "timeout", "alerts.alert_threshold": where each field was written
    places: dict[str, Place] = field(default_factory=dict)
    # The values ${NAME} references put into its file (to be masked when shown).
    from_env: frozenset[str] = frozenset()

    @property
    def identity(self) -> tuple[str, str]:
        key = self.fields.get("key")
        return ("key", key) if key else ("name", str(self.fields.get("name")))

    @property
    def label(self) -> str:
        kind, value = self.identity
        return f"{kind} {value!r}"

    def place_of(self, name: str) -> Place:
        """Where *name* (a field, or ``alerts.<setting>``) was written, else the entry."""
        while name:
            if name in self.places:
                return self.places[name]
            name = name.rpartition(".")[0]
        return self.place


class FileProblems(Exception):
    """The files cannot be applied: every problem found, each naming file and line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def files_of(paths: list[Path]) -> list[Path]:
    """The files named, a directory standing for its *.yaml, *.yml and *.json files."""
    found: list[Path] = []
    problems: list[str] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file())
            if not inside:
                problems.append(f"{path}: no .yaml, .yml or .json files in this directory")
            found.extend(inside)
        elif path.is_file():
            found.append(path)
        else:
            problems.append(f"{path}: no such file or directory")
    if problems:
        raise FileProblems(problems)
    return found


def check_allowed(names: list[str]) -> list[str]:
    """What is wrong with the variable names given with ``--env`` (nothing: [])."""
    problems = []
    for name in names:
        if not _NAME.fullmatch(name):
            problems.append(f"--env {name!r}: not a variable name")
        elif name in NEVER_EXPANDED:
            problems.append(
                f"--env {name}: never expanded in monitor files "
                f"({', '.join(sorted(NEVER_EXPANDED))} are the CLI's own credentials)"
            )
    return problems


def load(
    paths: list[Path],
    environ: Mapping[str, str] | None = None,
    allowed: frozenset[str] | set[str] = frozenset(),
) -> list[Entry]:
    """Every entry of *paths*, in order, or FileProblems listing all that is wrong.

    ``${NAME}`` reads ``UPTIME_VAR_*`` and the names in *allowed* from *environ*.
    """
    env = os.environ if environ is None else environ
    variables = _Variables(env, frozenset(allowed) - NEVER_EXPANDED)
    entries: list[Entry] = []
    problems: list[str] = []
    for path in files_of(paths):
        try:
            entries.extend(_load_file(path, variables))
        except FileProblems as exc:
            problems.extend(exc.problems)
        except RecursionError:  # [[[[...]]]] deeper than Python's stack
            problems.append(f"{path}: nested too deeply to be a monitors file")
    problems.extend(_duplicates(entries))
    if problems:
        raise FileProblems(problems)
    return entries


def _duplicates(entries: list[Entry]) -> list[str]:
    first: dict[tuple[str, str], Entry] = {}
    problems = []
    for entry in entries:
        seen = first.setdefault(entry.identity, entry)
        if seen is not entry:
            problems.append(
                f"{entry.place}: duplicate {entry.label}: also at {seen.place} "
                f"({seen.place.file} and {entry.place.file})"
            )
    return problems


@dataclass
class _Variables:
    """The environment as a file may read it, and the values it did read."""

    environ: Mapping[str, str]
    allowed: frozenset[str]
    read: set[str] = field(default_factory=set)

    def refusal(self, name: str) -> str | None:
        """Why *name* is not expanded, or None."""
        if name in NEVER_EXPANDED:
            return f"${{{name}}} is never expanded: it holds the CLI's own credentials"
        if not name.startswith(VAR_PREFIX) and name not in self.allowed:
            return (
                f"${{{name}}} is not expanded: name it {VAR_PREFIX}{name}, "
                f"or allow it with --env {name}"
            )
        if name not in self.environ:
            return f"environment variable {name} is not set"
        return None


def _load_file(path: Path, variables: _Variables) -> list[Entry]:
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FileProblems([f"{name}: cannot read: {exc}"]) from None
    if path.suffix == ".json":
        # JSON allows tabs only between tokens (a string holds \t escaped), where
        # YAML refuses them; as spaces, the same JSON reads as YAML.
        text = text.replace("\t", " ")
    root = _compose(name, text)
    problems: list[str] = []
    variables.read = set()
    _interpolate(root, name, variables, problems)
    if problems:
        raise FileProblems(problems)
    read = frozenset(v for v in variables.read if v)
    return [replace(entry, from_env=read) for entry in _entries(name, root)]


class _AliasFound(yaml.MarkedYAMLError):
    pass


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing an alias where it stands (anchors alone are harmless)."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _AliasFound(None, None, f"*{event.anchor}", event.start_mark)
        return super().compose_node(parent, index)  # type: ignore[no-any-return]


def _compose(name: str, text: str) -> yaml.Node | None:
    """The document's node tree (with marks), or FileProblems at the line of the error."""
    loader = _NoAliasLoader(text)
    try:
        return loader.get_single_node()
    except _AliasFound as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        raise FileProblems(
            [
                f"{name}:{line}: YAML aliases ({exc.problem}) are not allowed in monitor files: "
                "write the value out, or put what entries share in defaults:"
            ]
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise FileProblems([f"{name}:{line}: not valid YAML or JSON: {exc.problem}"]) from None
    except yaml.YAMLError as exc:
        raise FileProblems([f"{name}: not valid YAML or JSON: {exc}"]) from None
    finally:
        loader.dispose()


def _construct(name: str, node: yaml.Node) -> Any:
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        line = _line(node)
        if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark:
            line = exc.problem_mark.line + 1
        raise FileProblems([f"{name}:{line}: {getattr(exc, 'problem', None) or exc}"]) from None
    finally:
        loader.dispose()


def _interpolate(node: yaml.Node | None, name: str, env: _Variables, out: list[str]) -> None:
    """Replace ``${NAME}`` in every string value, in place (field names are left alone).

    A tree, not a graph: the loader refused aliases, so each node is visited once.
    """
    if isinstance(node, yaml.ScalarNode):
        if node.tag != _STR_TAG or "${" not in node.value:
            return
        where = f"{name}:{node.start_mark.line + 1}"
        node.value = _REFERENCE.sub(lambda m: _substitute(m, env, where, out), node.value)
        if node.style is None:
            # A plain scalar is typed by its text: `timeout: ${TIMEOUT}` is a number.
            node.tag = yaml.SafeLoader("").resolve(yaml.ScalarNode, node.value, (True, False))
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _interpolate(item, name, env, out)
    elif isinstance(node, yaml.MappingNode):
        for _, value in node.value:
            _interpolate(value, name, env, out)


def _substitute(match: re.Match[str], env: _Variables, where: str, out: list[str]) -> str:
    text = match.group(0)
    if text == "$${":
        return "${"
    var = match.group(1)
    if var is None or not _NAME.fullmatch(var):
        out.append(
            f"{where}: {text!r} is not a variable reference like ${{NAME}} (write $${{ for ${{)"
        )
        return text
    refusal = env.refusal(var)
    if refusal is not None:
        out.append(f"{where}: {refusal}")
        return text
    value = env.environ[var]
    env.read.add(value)
    return value


def _mapping(node: yaml.Node | None) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """A mapping node's entries by key text (key node, value node)."""
    assert isinstance(node, yaml.MappingNode)
    return {str(k.value): (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _entries(name: str, root: yaml.Node | None) -> list[Entry]:
    if not isinstance(root, yaml.MappingNode):
        line = _line(root) if root is not None else 1
        raise FileProblems([f"{name}:{line}: expected a mapping with `monitors:` (a list)"])
    top = _mapping(root)
    problems = [
        f"{name}:{_line(k)}: unknown top-level field {key!r} (expected defaults, monitors)"
        for key, (k, _) in top.items()
        if key not in TOP_LEVEL
    ]
    defaults, default_places = {}, {}
    if "defaults" in top:
        key_node, node = top["defaults"]
        if isinstance(node, yaml.MappingNode):
            defaults = _construct(name, node)
            default_places = _places(name, node)
        else:
            problems.append(f"{name}:{_line(key_node)}: defaults: expected a mapping")
    monitors = top.get("monitors")
    items: list[yaml.Node] = []
    if monitors is None:
        problems.append(f"{name}:1: monitors: missing (a list of monitors)")
    elif isinstance(monitors[1], yaml.SequenceNode):
        items = monitors[1].value
    else:
        problems.append(f"{name}:{_line(monitors[0])}: monitors: expected a list")
    entries: list[Entry] = []
    for index, node in enumerate(items):
        place = Place(name, _line(node))
        if not isinstance(node, yaml.MappingNode):
            problems.append(f"{place}: monitors[{index}]: expected a mapping of monitor fields")
            continue
        fields = _merge(defaults, _construct(name, node))
        entry = Entry(fields, place, {**default_places, **_places(name, node)})
        problems.extend(_structure_problems(entry))
        entries.append(entry)
    if problems:
        raise FileProblems(problems)
    return entries


def _places(name: str, node: yaml.MappingNode) -> dict[str, Place]:
    places = {}
    for key, (key_node, value) in _mapping(node).items():
        places[key] = Place(name, _line(key_node))
        if key == "alerts" and isinstance(value, yaml.MappingNode):
            for setting, (setting_node, _) in _mapping(value).items():
                places[f"alerts.{setting}"] = Place(name, _line(setting_node))
    return places


def _merge(defaults: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    merged = {**defaults, **fields}
    base, own = defaults.get("alerts"), fields.get("alerts")
    if isinstance(base, dict) and isinstance(own, dict):
        merged["alerts"] = {**base, **own}
    return merged


def _structure_problems(entry: Entry) -> list[str]:
    """What the server could not even be asked about: keys, identity, alerts' shape."""
    problems = []
    fields = entry.fields
    if any(not isinstance(k, str) for k in fields):
        problems.append(f"{entry.place}: field names must be strings")
    if not isinstance(fields.get("name"), str) or not fields["name"].strip():
        problems.append(f"{entry.place_of('name')}: name: is required (a string)")
    if "key" in fields and fields["key"] is not None and not isinstance(fields["key"], str):
        problems.append(f"{entry.place_of('key')}: key: must be a string")
    if fields.get("alerts") is not None and not isinstance(fields["alerts"], dict):
        problems.append(f"{entry.place_of('alerts')}: alerts: must be a mapping of settings")
    return problems


def escape(value: Any) -> Any:
    """*value* with every ``${`` in its strings written ``$${``, so applying it reads it back."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, list):
        return [escape(v) for v in value]
    if isinstance(value, dict):
        return {k: escape(v) for k, v in value.items()}
    return value


def dump(entries: list[dict[str, Any]], *, as_json: bool = False) -> str:
    """*entries* as a monitors file."""
    document = {"monitors": escape(entries)}
    if as_json:
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=1000)
