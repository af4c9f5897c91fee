"""Monitor files for ``uptime apply``: read, interpolate, merge defaults, place every field.

A file (YAML, or JSON, which YAML reads too) is a mapping with ``monitors:``,
a list of entries, and optional ``defaults:``, fields every entry of that
file starts from (``alerts`` merged setting by setting). String values may
say ``${NAME}`` for an environment variable (``$${`` is a literal ``${``);
an unset one is an error naming it. Every entry and field keeps the file and
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SUFFIXES = (".yaml", ".yml", ".json")
TOP_LEVEL = ("defaults", "monitors")
_REFERENCE = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STR_TAG = "tag:yaml.org,2002:str"


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


def load(paths: list[Path], environ: Mapping[str, str] | None = None) -> list[Entry]:
    """Every entry of *paths*, in order, or FileProblems listing all that is wrong."""
    env = os.environ if environ is None else environ
    entries: list[Entry] = []
    problems: list[str] = []
    for path in files_of(paths):
        try:
            entries.extend(_load_file(path, env))
        except FileProblems as exc:
            problems.extend(exc.problems)
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


def _load_file(path: Path, env: Mapping[str, str]) -> list[Entry]:
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
    _interpolate(root, name, env, problems)
    if problems:
        raise FileProblems(problems)
    return _entries(name, root)


def _compose(name: str, text: str) -> yaml.Node | None:
    """The document's node tree (with marks), or FileProblems at the line of the error."""
    loader = yaml.SafeLoader(text)
    try:
        return loader.get_single_node()
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


def _interpolate(node: yaml.Node | None, name: str, env: Mapping[str, str], out: list[str]) -> None:
    """Replace ``${NAME}`` in every string value, in place (field names are left alone)."""
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


def _substitute(match: re.Match[str], env: Mapping[str, str], where: str, out: list[str]) -> str:
    text = match.group(0)
    if text == "$${":
        return "${"
    var = match.group(1)
    if var is None or not _NAME.fullmatch(var):
        out.append(
            f"{where}: {text!r} is not a variable reference like ${{NAME}} (write $${{ for ${{)"
        )
        return text
    if var not in env:
        out.append(f"{where}: environment variable {var} is not set")
        return text
    return env[var]


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
