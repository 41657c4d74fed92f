"""Sweep configs: a YAML file per paper figure, validated, expanded into runs with stable ids.

Format (see docs/sweeps.md, "Config format", for a complete example)::

    name: toy_mdp                 # letters, digits, ``_ . -``; stored with every run
    kind: toy_mdp                 # a run kind of maxminq.experiments.registry
    figure: "Fig. 2"              # free text (optional)
    description: "..."            # free text (optional)
    fixed:    {gamma: 1.0}        # settings shared by every run
    grid:     {mu: [0.1, -0.1]}   # axes: the cartesian product of the value lists
    variants:                     # optional union: each variant is crossed with ``grid``;
      - {algorithm: q_learning, n: 1}           # a list value is one more axis inside the
      - {algorithm: maxmin, n: [2, 4, 6, 8]}    # variant; variant keys override grid/fixed
    scales:                       # required: quick and paper (others allowed)
      quick: {fixed: {runs: 200, episodes: 300}}
      paper: {fixed: {runs: 5000, episodes: 1000}, grid: {...}, variants: [...]}

A scale overlays the top level: its ``fixed`` and ``grid`` entries replace the same keys
(a key moves between ``fixed`` and ``grid`` if the scale says so) and its ``variants``, when
given, replace the list. Each expanded run is then validated by its kind, and gets the id
``<kind>-<first 12 hex of sha256(kind, settings)>``: it depends on what the run does, not
on where it sits in a list, so reordering or extending a grid keeps finished runs (nor on
settings that cannot change its results: a deep run's ``checkpoint_every`` and
``tensorboard``, see :func:`run_id_for`).

Every problem is a :class:`ConfigError` whose message is one line:
``FILE: KEY.PATH: what was expected, got VALUE``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from maxminq.errors import MaxminqError, one_line
from maxminq.experiments.registry import KINDS, SettingsError, options_to_keys, unknown_key
from maxminq.experiments.store import canonical_json

MAX_RUNS = 100_000
MAX_BYTES = 1_000_000
# Values (YAML nodes) a config may hold once its aliases are written out: a file of
# MAX_BYTES holds far fewer without them, and the largest grid's axes (MAX_RUNS values)
# fit. Aliases of aliases multiply ("billion laughs": nine lines that expand to 10^9
# values), which the checks and error messages below then walked (or printed) in full.
MAX_NODES = 1_000_000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
_TOP_KEYS = ("name", "kind", "figure", "description", "fixed", "grid", "variants", "scales")
_SCALE_KEYS = ("fixed", "grid", "variants", "description")


class ConfigError(MaxminqError, ValueError):
    """A sweep config cannot be used; the message is ``FILE: KEY.PATH: expectation``."""


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: a kind and its complete, validated settings."""

    run_id: str
    kind: str
    settings: dict[str, Any]
    config: str


@dataclass
class SweepConfig:
    """A loaded config at one scale, validated, with its expanded ``runs``."""

    name: str
    kind: str
    scale: str
    path: Path
    figure: str = ""
    description: str = ""
    fixed: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    variants: list[dict[str, Any]] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)
    runs: list[RunSpec] = field(default_factory=list)


def run_id_for(kind: str, settings: Mapping[str, Any]) -> str:
    """Stable run id: ``<kind>-`` + 12 hex digits of SHA-256 over kind and settings.

    Settings that cannot change a run's results are hashed at their defaults (the kind's
    ``identity``: for deep runs ``checkpoint_every`` and ``tensorboard``), so changing
    them keeps the run's id and its stored results; a run at the defaults has the id it
    always had."""
    spec = KINDS.get(kind)
    plain = dict(settings)
    if spec is not None and spec.identity is not None:
        plain = spec.identity(plain)
    text = canonical_json({"kind": kind, "settings": plain})
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


# --------------------------------------------------------------------------- YAML
class _Loader(yaml.SafeLoader):
    """Safe YAML with YAML 1.2 numbers (``3e-4`` is a float, ``010`` is ten) and no
    duplicate keys; merge keys (``<<: *base``) as in PyYAML's safe loader."""

    def get_single_node(self) -> yaml.Node | None:
        """The document's node graph, refused before anything is built from it when its
        aliases expand too far (:func:`expanded_size`)."""
        node = super().get_single_node()
        if node is not None and expanded_size(node) is None:
            raise _AliasBomb(
                f"its anchors and aliases (&name, *name, <<) expand to more than {MAX_NODES:,} "
                "values (or an alias is used inside its own anchor); write the values out"
            )
        return node


_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
# YAML 1.1's numbers out: ``010`` was octal 8 (a zero-padded seed changed in silence), ``08``
# a string, ``1:30`` the base-60 number 90; in YAML 1.2 they are 10, 8 and a string.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regex) for tag, regex in resolvers if tag not in (_INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(  # decimal, 0o octal, 0x hex (a digit first); ``_`` separates
    _INT,
    re.compile(r"^(?:[-+]?[0-9][0-9_]*|[-+]?0o[0-7][0-7_]*|[-+]?0x[0-9a-fA-F][0-9a-fA-F_]*)$"),
    list("-+0123456789"),
)


class _AliasBomb(yaml.YAMLError):
    """The document's aliases expand to more than :data:`MAX_NODES` values, or refer to
    themselves."""


def _children(node: yaml.Node) -> list[yaml.Node]:
    """A node's child nodes (a mapping's keys and values; a merge key's mappings too)."""
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def expanded_size(root: yaml.Node, limit: int = MAX_NODES) -> int | None:
    """How many nodes the document under ``root`` has with every alias written out (each
    use of an anchored node counts its whole subtree again), or ``None`` when more than
    ``limit`` or endless (an alias inside its own anchor). Linear in the nodes as composed:
    a node used many times is counted once and its size reused."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()  # started, not finished: on the current path
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finish = stack.pop()
        key = id(node)
        if finish:
            open_.discard(key)
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total > limit:
                return None
            sizes[key] = total
        elif key not in sizes:
            if key in open_:  # reached again from inside itself
                return None
            open_.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)]


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> int:
    """A YAML 1.2 integer (a leading zero is no octal prefix: ``010`` is ten)."""
    text = str(loader.construct_scalar(node)).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-")
    base = {"0o": 8, "0x": 16}.get(text[:2], 10)
    return sign * int(text[2:] if base != 10 else text, base)


_Loader.add_constructor(_INT, _construct_int)
_Loader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict:
    """Build a mapping, rejecting duplicate and unhashable keys (a key given after a merge
    key ``<<`` overrides the merged one, as YAML's merge keys mean)."""
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # built by flatten_mapping below
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
            seen.add(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "mapping keys must be plain values", key_node.start_mark
            ) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _short(value: Any, limit: int = 60) -> str:
    """A value's repr on one line, shortened for error messages."""
    text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Check:
    """Builds one-line errors ``FILE: PATH: message`` for one config file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> ConfigError:
        """The error for key path ``where``."""
        return ConfigError(
            f"{self.path}: {where}: {message}" if where else f"{self.path}: {message}"
        )

    def mapping(self, value: Any, where: str, allowed: tuple[str, ...] | None = None) -> dict:
        """Check a mapping with identifier keys (from ``allowed`` when given)."""
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a mapping, got {_short(value)}")
        for key in value:
            if not isinstance(key, str) or not _KEY.fullmatch(key):
                raise self.fail(where, f"expected identifier keys, got {_short(key)}")
            if allowed is not None and key not in allowed:
                raise self.fail(
                    f"{where}.{key}".lstrip("."), unknown_key(key, list(allowed), "key")
                )
        return value

    def value(self, value: Any, where: str, depth: int = 0) -> Any:
        """A setting value: number, string, boolean, null, or a (nested) list or mapping of
        those (mappings: keyword settings such as ``op_kwargs``, ``optimizer_kwargs`` and
        ``env_kwargs``; names are strings)."""
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.fail(where, f"expected a finite number, got {_short(value)}")
            return value
        if isinstance(value, list) and depth < 3:
            return [self.value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        if isinstance(value, dict) and depth < 3:
            for key in value:
                if not isinstance(key, str):
                    raise self.fail(where, f"expected names (strings) as keys, got {_short(key)}")
            # A name that is no identifier (a newline, a space) is quoted in the key path:
            # the error stays one line.
            return {
                k: self.value(
                    v, f"{where}.{k}" if _KEY.fullmatch(k) else f"{where}[{k!r}]", depth + 1
                )
                for k, v in value.items()
            }
        raise self.fail(
            where, f"expected a number, string, boolean, list or mapping, got {_short(value)}"
        )

    def text(self, value: Any, where: str) -> str:
        """Check a string."""
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, got {_short(value)}")
        return value

    def axis(self, value: Any, where: str) -> list[Any]:
        """Check a grid axis: a non-empty list of setting values."""
        if not isinstance(value, list) or not value:
            raise self.fail(where, f"expected a non-empty list of values, got {_short(value)}")
        return self.distinct([self.value(v, f"{where}[{i}]") for i, v in enumerate(value)], where)

    def distinct(self, values: list[Any], where: str) -> list[Any]:
        """Check that no value of an axis repeats: the runs would be merged into one, and a
        repeat is mostly a typo (``mu: [0.1, 0.1]`` for ``[0.1, -0.1]``). Equal as Python
        compares them (``1`` and ``1.0`` repeat), except that a boolean is not a number.

        Linear in the axis length for scalars (a set): pairwise comparison took 1.1 s for a
        ``seed`` axis of 3,000 values. Lists and mappings are compared pairwise among
        themselves (few, short)."""
        seen: set[tuple[bool, Any]] = set()
        compound: list[Any] = []
        for i, v in enumerate(values):
            if isinstance(v, (list, dict)):
                repeat = any(v == w for w in compound)
                compound.append(v)
            else:
                key = (isinstance(v, bool), v)
                repeat = key in seen
                seen.add(key)
            if repeat:
                raise self.fail(f"{where}[{i}]", f"{_short(v)} is given twice; give each once")
        return values


def _read_document(path: Path) -> Any:
    """Read and parse a config file (size-limited, UTF-8)."""
    check = _Check(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise check.fail("", f"expected a config of at most {MAX_BYTES} bytes, got {size}")
        text = path.read_text(encoding="utf-8")
    except ConfigError:
        raise
    except FileNotFoundError:
        raise check.fail("", "no such file") from None
    except IsADirectoryError:
        raise check.fail("", "is a folder; expected a YAML config file") from None
    except UnicodeDecodeError:
        raise check.fail("", "expected UTF-8 text") from None
    except OSError as err:
        raise check.fail("", f"cannot read ({err.strerror or err})") from None
    return parse_document(text, path)


def parse_document(text: str, path: Path | str = "<config>") -> Any:
    """Parse YAML text (safe loader, YAML 1.2 numbers, merge keys, duplicate keys rejected)."""
    check = _Check(Path(path))
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader derives from SafeLoader
    except _AliasBomb as err:
        raise check.fail("", str(err)) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = one_line(err.problem or err.context or "invalid YAML")
        raise check.fail(where, f"invalid YAML: {problem}") from None
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError) as err:
        raise check.fail(
            "", f"invalid YAML: {' '.join(str(err).split()) or type(err).__name__}"
        ) from None


# What a missing top-level key is told, so that its line says what to write.
_REQUIRED = {
    "name": "give the config a name (letters, digits, '_', '.', '-'), e.g. name: my_sweep",
    "kind": "give the run kind, one of {kinds}",
    "scales": "give at least one scale (--scale picks one; quick is its default), e.g. "
    "scales: {quick: {}}",
}


def load_config(path: str | os.PathLike[str], scale: str = "quick") -> SweepConfig:
    """Read, validate and expand a sweep config at ``scale``; raises :class:`ConfigError`."""
    path = Path(path)
    return config_from_document(_read_document(path), path, scale)


def config_from_document(doc: Any, path: Path | str, scale: str = "quick") -> SweepConfig:
    """Validate an already-parsed document (see :func:`load_config`)."""
    path = Path(path)
    check = _Check(path)
    if doc is None:
        raise check.fail("", "empty config; expected a mapping with name, kind, scales")
    top = check.mapping(doc, "", _TOP_KEYS)
    for key in ("name", "kind", "scales"):
        if key not in top:
            kinds = ", ".join(sorted(KINDS))  # read now: kinds may be registered after import
            what = _REQUIRED[key].replace("{kinds}", kinds)
            raise check.fail(key, f"missing required key; {what}")
    name = check.text(top["name"], "name")
    if not _NAME.fullmatch(name):
        raise check.fail("name", f"expected letters, digits, '_', '.', '-', got {_short(name)}")
    kind = check.text(top["kind"], "kind")
    if kind not in KINDS:
        raise check.fail("kind", f"expected one of {', '.join(sorted(KINDS))}, got {_short(kind)}")
    figure = check.text(top.get("figure", ""), "figure")
    description = check.text(top.get("description", ""), "description")

    scales = check.mapping(top["scales"], "scales")
    if not scales:  # any names: `quick` and `paper` are what maxminq reproduce runs
        raise check.fail("scales", "expected at least one scale, e.g. {quick: {}}")
    if scale not in scales:
        raise check.fail(  # named: a one-scale config fails at the default, quick
            "scales", f"no scale {scale!r}; expected one of {', '.join(scales)} (--scale)"
        )
    for other, body in scales.items():
        if body is not None:
            check.mapping(body, f"scales.{other}", _SCALE_KEYS)
    overlay = scales[scale] or {}

    fixed: dict[str, Any] = {}
    grid: dict[str, list[Any]] = {}
    origins: dict[str, str] = {}
    for prefix, body in (("", top), (f"scales.{scale}.", overlay)):
        if "fixed" in body:
            for key, value in check.mapping(body["fixed"] or {}, f"{prefix}fixed").items():
                fixed[key] = check.value(value, f"{prefix}fixed.{key}")
                grid.pop(key, None)
                origins[key] = f"{prefix}fixed.{key}"
        if "grid" in body:
            for key, value in check.mapping(body["grid"] or {}, f"{prefix}grid").items():
                grid[key] = check.axis(value, f"{prefix}grid.{key}")
                if key in (body.get("fixed") or {}):  # a scale may move a key; one level not
                    raise check.fail(
                        f"{prefix}grid.{key}",
                        f"also in {prefix}fixed; give it in one of them (fixed: one value "
                        "for every run; grid: a run for each value)",
                    )
                fixed.pop(key, None)
                origins[key] = f"{prefix}grid.{key}"
    variants_where = f"scales.{scale}.variants" if "variants" in overlay else "variants"
    raw_variants = overlay["variants"] if "variants" in overlay else top.get("variants")
    variants: list[dict[str, Any]] = []
    if raw_variants is not None:
        if not isinstance(raw_variants, list) or not raw_variants:
            raise check.fail(
                variants_where, f"expected a non-empty list of mappings, got {_short(raw_variants)}"
            )
        for i, variant in enumerate(raw_variants):
            where = f"{variants_where}[{i}]"
            body = check.mapping(variant, where)
            if not body:
                raise check.fail(where, "expected a non-empty mapping")
            body = {k: check.value(v, f"{where}.{k}") for k, v in body.items()}
            for k, v in body.items():  # a list is one more axis inside the variant
                if isinstance(v, list):
                    check.distinct(v, f"{where}.{k}")
            variants.append(body)

    config = SweepConfig(
        name=name,
        kind=kind,
        scale=scale,
        path=path,
        figure=figure,
        description=description,
        fixed=fixed,
        grid=grid,
        variants=variants,
        origins=origins,
    )
    config.runs = _expand(config, check, variants_where)
    return config


def _combos(axes: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """The cartesian product of ``axes`` as dicts, in the axes' order."""
    keys = list(axes)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*axes.values())]


def _expand(config: SweepConfig, check: _Check, variants_where: str) -> list[RunSpec]:
    """Expand grid x variants, validate each run with its kind, dedupe by run id."""
    count = math.prod(len(v) for v in config.grid.values())
    blocks: list[tuple[int, dict[str, list[Any]]]] = []
    for i, variant in enumerate(config.variants or [{}]):
        axes = {k: (v if isinstance(v, list) else [v]) for k, v in variant.items()}
        for key, values in axes.items():
            if not values:
                raise check.fail(
                    f"{variants_where}[{i}].{key}", "expected a value or a non-empty list, got []"
                )
        blocks.append((i, axes))
    total = count * sum(math.prod(len(v) for v in axes.values()) for _, axes in blocks)
    if total > MAX_RUNS:
        raise check.fail("grid", f"expected at most {MAX_RUNS} runs, the grid gives {total}")
    kind = KINDS[config.kind]
    runs: dict[str, RunSpec] = {}
    made_by: dict[str, str] = {}  # run id -> the variant (or the grid) that made it first
    for grid_combo in _combos(config.grid):
        for i, axes in blocks:
            source = f"{variants_where}[{i}]" if config.variants else "grid"
            # A variant's key overrides that grid axis (documented): the grid's values of it
            # give this variant's runs once, on purpose; only the first is expanded.
            shadowed = [k for k in grid_combo if k in axes]
            if any(grid_combo[k] != config.grid[k][0] for k in shadowed):
                continue
            for variant_combo in _combos(axes):
                settings = {**config.fixed, **grid_combo, **variant_combo}
                origins = dict(config.origins)
                origins.update({k: f"{variants_where}[{i}].{k}" for k in variant_combo})
                try:
                    clean = kind.validate(dict(settings))
                except SettingsError as err:
                    # a key another variant gives and this one lacks is this variant's slip
                    # ({algorithm: q_learning} without the n the others give)
                    lacks = (
                        source
                        if config.variants and any(err.key in v for v in config.variants)
                        else None
                    )
                    raise _settings_failure(
                        check, err, settings, origins, config.grid, lacks
                    ) from None
                for key, value in settings.items():  # the kind took true as 1 (``runs: yes``)
                    if isinstance(value, bool) and not isinstance(clean.get(key, value), bool):
                        raise check.fail(origins[key], f"expected a number, got {value}")
                run_id = run_id_for(config.kind, clean)
                if run_id in runs:
                    # Merged away in silence before: the config ran fewer runs than it
                    # lists (two equal variants, or a value equal to the default it sets).
                    shown = {k: v for k, v in grid_combo.items() if k not in axes}
                    # Settings that differ and still give one id: those the run id leaves
                    # out (a deep run's checkpoint_every, tensorboard), said by name.
                    first = runs[run_id].settings
                    neutral = [k for k in clean if k not in first or clean[k] != first[k]]
                    where = origins.get(neutral[0], source) if len(neutral) == 1 else source
                    raise check.fail(
                        where,
                        _repeat_message(
                            source, made_by[run_id], {**shown, **variant_combo}, neutral
                        ),
                    )
                made_by[run_id] = source
                runs[run_id] = RunSpec(run_id, config.kind, clean, config.name)
    if not runs:
        raise check.fail("grid", "expected at least one run")
    return list(runs.values())


def _repeat_message(
    source: str, first: str, settings: Mapping[str, Any], neutral: list[str] | None = None
) -> str:
    """Why a run is made twice: by which part of the config, with the grid and variant
    settings of the second making (the fixed ones are the same for every run). ``neutral``:
    the settings in which the two makings differ although their run id is one, as it
    leaves out settings that cannot change results (:func:`run_id_for`); named, since
    the runs do not look the same."""
    given = ", ".join(f"{k}: {_short(v, 30)}" for k, v in settings.items())
    also = "another of its combinations" if first == source else first
    head = f"makes the same run as {also} ({{{given}}}, with the defaults filled in)"
    if not neutral:
        return f"{head}; give each run once"
    names = " and ".join(neutral)
    them, each = ("it", "it one value") if len(neutral) == 1 else ("them", "each one value")
    return (
        f"{head}: {names} cannot change a run's results, so its run id leaves {them} out; "
        f"give {each} for all runs (in fixed)"
    )


_LEADING_OPTION = re.compile(r"^--[a-z][a-z0-9-]*:?\s+")
# Command-line syntax in a shared check's message -> the same in a config's YAML.
_CLI_EXAMPLES = {"e.g. 0-4": "e.g. [0, 1, 2, 3, 4]"}


def _config_message(message: str, value: Any = None, *, has_value: bool = False) -> str:
    """A kind's error message worded for a config: no command-line option names, and the
    offending value exactly once (``, got VALUE`` at the end, unless the message already
    quotes the string value, e.g. ``unknown agent 'foo'``).

    Run kinds reuse the run functions' own checks, which speak to the command line
    (``--steps: must be >= 1, got 0``); the config names the key path itself.
    """
    message = " ".join(message.split())
    message = _LEADING_OPTION.sub("", message)
    message = options_to_keys(message)
    for cli, yaml_text in _CLI_EXAMPLES.items():
        message = message.replace(cli, yaml_text)
    head, sep, _ = message.rpartition(", got ")
    message = head if sep else message
    if not has_value or _quotes(message, value):
        return message
    return f"{message}, got {_short(value)}"


def _quotes(message: str, value: Any) -> bool:
    """Whether ``message`` already quotes ``value``: a string as its repr (``unknown agent
    'foo'``), a list or mapping as JSON (``... refused {"lenght": 5}: ...``, the check of
    an environment's keywords)."""
    if isinstance(value, str):
        return repr(value) in message
    if isinstance(value, (list, dict)):
        try:
            return json.dumps(value) in message or json.dumps(value, sort_keys=True) in message
        except (TypeError, ValueError):
            return False
    return False


def _settings_failure(
    check: _Check,
    err: SettingsError,
    settings: Mapping[str, Any],
    origins: Mapping[str, str],
    grid: Mapping[str, list[Any]] | None = None,
    lacks: str | None = None,
) -> ConfigError:
    """Point a kind's settings error at the config key the offending value came from
    (``grid``: the config's grid axes, for an algorithm on one; ``lacks``: the variant that
    lacks a required key other variants give)."""
    if err.key is None:
        return check.fail("settings", _config_message(err.message))
    if err.key in settings:
        # the value of an unknown key is not what is wrong with it
        known = not err.message.startswith("unknown setting")
        message = _config_message(err.message, settings[err.key], has_value=known)
        where = origins.get(err.key, err.key)
        if err.key == "seeds" and not isinstance(settings["seeds"], list) and "[" not in where:
            # `grid: {seeds: [0, 1, 2]}` meant one run per seed: each value of the axis is
            # the seed list of one (vectorised) run
            message += "; a grid or variant axis of seeds is a list of seed lists, e.g. [[0], [1]]"
        return check.fail(where, message)
    message = _config_message(err.message)
    if err.key == "op_kwargs" and "algorithm" in origins:
        # required by the algorithm (bias_corrected's sigma): said where that is set, not
        # as a missing 'fixed.op_kwargs', which would give it to every algorithm
        where = origins["algorithm"]
        axis = list((grid or {}).get("algorithm", []))
        if where.rpartition(".")[0].endswith("grid") and len(axis) > 1:
            # 'grid.op_kwargs' would give it to the axis' other algorithms too (q_learning
            # takes no parameters): each algorithm a variant, this one with its parameter
            from maxminq.operators import operator_params

            own = settings["algorithm"]
            needs = [k for k, required in operator_params(own).items() if required]
            params = "{" + ", ".join(f"{k}: 1" for k in needs) + "}"  # the operator's own list
            listed = ", ".join(
                f"{{algorithm: {a}, op_kwargs: {params}}}" if a == own else f"{{algorithm: {a}}}"
                for a in axis
            )
            return check.fail(
                where,
                f"{message}; an op_kwargs beside this axis would go to its other algorithms "
                f"too: give each algorithm as a variant instead, e.g. variants: [{listed}]",
            )
        return check.fail(f"{where.rpartition('.')[0]}.op_kwargs".lstrip("."), message)
    if message.lower() in ("field required", "required setting missing"):
        if lacks is not None:
            return check.fail(
                f"{lacks}.{err.key}",
                "required setting missing (other variants give it; give it here too, or in "
                "fixed for all)",
            )
        return check.fail(f"fixed.{err.key}", "required setting missing")
    return check.fail(f"fixed.{err.key}", f"{message} (required setting missing)")
