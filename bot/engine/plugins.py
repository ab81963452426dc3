"""Finding strategy plugins by name and building configured instances of them.

A plugin is a `Strategy` subclass whose `name` is the plugin name used in config. It is
looked for, first match wins:

1. in the top-level `strategies` package, as module `strategies.<name>`;
2. in the `*.py` files of the user folders (`[scheduler].strategy_dirs`), each imported
   by path under a private module name;
3. through the `bot.strategies` entry-point group (entry-point name = plugin name, value =
   the class, e.g. `my_pkg.grid:GridStrategy`).

Every problem is a `PluginError` whose message names the plugin (and the file or entry
point at fault); parameter problems come one line each, naming the strategy and field.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from pydantic import ValidationError

from bot.config import StrategyEntry
from bot.engine.strategy import API_VERSION, Strategy, needed_tokens
from bot.logging import get_logger

__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginError",
    "available_plugins",
    "build_strategies",
    "build_strategy",
    "declared_tokens",
    "load_plugin",
]

ENTRY_POINT_GROUP: Final = "bot.strategies"
BUILTIN_PACKAGE: Final = "strategies"
_NAME_RE: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_USER_PREFIX: Final = "_bot_user_strategies"
_user_modules: dict[tuple[str, int, int], ModuleType] = {}
"""Imported user files by (path, mtime, size): an edited file is imported afresh."""


class PluginError(Exception):
    """A plugin cannot be found, imported, checked or configured.

    `problems` holds one line per problem (parameter errors may give several).
    """

    def __init__(self, problems: str | list[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


def _description(cls: type[Strategy]) -> str:
    doc = inspect.getdoc(cls) or ""
    return next((line.strip() for line in doc.splitlines() if line.strip()), "")


def _strategies_in(module: ModuleType) -> list[type[Strategy]]:
    """Strategy subclasses defined in `module` (not imported into it) with a name."""
    return [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, Strategy)
        and obj is not Strategy
        and obj.__module__ == module.__name__
        and obj.name
    ]


def _builtin_module(name: str) -> ModuleType | None:
    module_name = f"{BUILTIN_PACKAGE}.{name}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name in (module_name, BUILTIN_PACKAGE):
            return None
        raise PluginError(f"plugin {name!r}: cannot import {module_name}: {exc}") from None
    except Exception as exc:
        raise PluginError(
            f"plugin {name!r}: cannot import {module_name}: {type(exc).__name__}: {exc}"
        ) from None


def _builtin_names() -> list[str]:
    try:
        package = importlib.import_module(BUILTIN_PACKAGE)
    except ModuleNotFoundError:
        return []
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__) if not m.ispkg)


def _user_files(user_dirs: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for folder in user_dirs:
        if not folder.is_dir():
            raise PluginError(f"strategy folder {folder}: not a directory")
        files.extend(p for p in sorted(folder.glob("*.py")) if not p.name.startswith("_"))
    return files


def _import_user_file(path: Path) -> ModuleType:
    """Import one user file by path (cached until the file changes)."""
    resolved = path.resolve()
    stat = resolved.stat()
    cache_key = (str(resolved), stat.st_mtime_ns, stat.st_size)
    if cache_key in _user_modules:
        return _user_modules[cache_key]
    digest = hashlib.sha256(repr(cache_key).encode()).hexdigest()[:16]
    module_name = f"{_USER_PREFIX}_{resolved.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise PluginError(f"strategy file {path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # pydantic and dataclasses resolve names through it
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        detail = f"{type(exc).__name__}: {exc}".splitlines()[0]
        raise PluginError(f"strategy file {path}: {detail}") from None
    _user_modules[cache_key] = module
    return module


def _user_plugins(user_dirs: Sequence[Path]) -> dict[str, type[Strategy]]:
    found: dict[str, type[Strategy]] = {}
    for path in _user_files(user_dirs):
        for cls in _strategies_in(_import_user_file(path)):
            found.setdefault(cls.name, cls)
    return found


def _entry_points() -> list[EntryPoint]:
    return list(entry_points(group=ENTRY_POINT_GROUP))


def _load_entry_point(point: EntryPoint) -> type[Strategy]:
    try:
        obj = point.load()
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}".splitlines()[0]
        raise PluginError(
            f"plugin {point.name!r}: entry point {point.value!r} failed to load: {detail}"
        ) from None
    if not (inspect.isclass(obj) and issubclass(obj, Strategy)):
        raise PluginError(
            f"plugin {point.name!r}: entry point {point.value!r} is not a Strategy subclass"
        )
    return obj


def _checked(name: str, cls: type[Strategy], where: str) -> type[Strategy]:
    if cls.name != name:
        raise PluginError(f"plugin {name!r}: {where} names its strategy {cls.name!r}")
    if cls.api_version != API_VERSION:
        raise PluginError(
            f"plugin {name!r} ({where}) targets plugin API v{cls.api_version}; "
            f"this bot supports v{API_VERSION}"
        )
    if cls.on_tick is Strategy.on_tick:
        raise PluginError(f"plugin {name!r} ({where}) does not implement on_tick")
    return cls


def load_plugin(name: str, user_dirs: Sequence[Path] = ()) -> type[Strategy]:
    """The plugin class named `name`: from `strategies`, the user folders, or entry points.

    Args:
        name: the plugin name (`plugin = "…"` of a `[[strategies]]` entry).
        user_dirs: folders of user strategy files (`[scheduler].strategy_dirs`).

    Raises:
        PluginError: unknown name (the message names the closest and lists the available
            ones), a file or entry
            point that fails to import, or a plugin for another API version.
    """
    if _NAME_RE.match(name):
        module = _builtin_module(name)
        if module is not None:
            for cls in _strategies_in(module):
                if cls.name == name:
                    return _checked(name, cls, f"{BUILTIN_PACKAGE}.{name}")
    user = _user_plugins(user_dirs)
    if name in user:
        return _checked(name, user[name], f"file {inspect.getfile(user[name])}")
    for point in _entry_points():
        if point.name == name:
            return _checked(name, _load_entry_point(point), f"entry point {point.value}")
    known = sorted(_names(user_dirs))
    closest = difflib.get_close_matches(name, known, n=1)
    hint = f"closest: {closest[0]}; " if closest else ""
    raise PluginError(
        f"unknown strategy plugin {name!r} ({hint}available: {', '.join(known) or 'none'})"
    )


def _names(user_dirs: Sequence[Path]) -> set[str]:
    names: set[str] = set()
    for module_name in _builtin_names():
        module = _builtin_module(module_name)
        if module is not None:
            names.update(cls.name for cls in _strategies_in(module))
    names.update(_user_plugins(user_dirs))
    names.update(point.name for point in _entry_points())
    return names


def available_plugins(user_dirs: Sequence[Path] = ()) -> dict[str, str]:
    """Every plugin that can be loaded: name → description (its docstring's first line).

    Where one name is found in several places, the first (package, folders, entry points)
    wins, as in `load_plugin`.
    """
    found: dict[str, type[Strategy]] = {}
    for module_name in _builtin_names():
        module = _builtin_module(module_name)
        for cls in _strategies_in(module) if module is not None else []:
            found.setdefault(cls.name, cls)
    for plugin_name, cls in _user_plugins(user_dirs).items():
        found.setdefault(plugin_name, cls)
    for point in _entry_points():
        if point.name not in found:
            found[point.name] = _load_entry_point(point)
    return {n: _description(found[n]) for n in sorted(found)}


def _shown(value: Any) -> str:
    if isinstance(value, Mapping | list | tuple):
        return type(value).__name__
    text = str(value) if isinstance(value, Decimal | int | float | bool) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _param_problems(entry: StrategyEntry, errors: Iterable[Mapping[str, Any]]) -> list[str]:
    lines = []
    for error in errors:
        location = ".".join(["params", *(str(part) for part in error.get("loc", ()))])
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        kind = error.get("type")
        if kind == "extra_forbidden":
            text = f"{location}: unknown parameter (check the spelling; see docs/strategies.md)"
        elif kind == "missing" or not error.get("loc"):
            text = f"{location}: {message}"
        else:
            text = f"{location}: {message} (got {_shown(error.get('input'))})"
        lines.append(f"strategy {entry.name!r} ({entry.plugin}): {text}")
    return lines


def build_strategy(entry: StrategyEntry, user_dirs: Sequence[Path] = ()) -> Strategy:
    """A configured strategy instance: the entry's plugin with its validated `params`.

    Its `tokens()` is asked once here, so a plugin whose declaration fails is refused at
    load (`bot config check`), not on a tick.

    Raises:
        PluginError: the plugin cannot be loaded (`strategy 'NAME': ` and `load_plugin`'s
            message), its `tokens()` fails, or one line per invalid parameter, e.g.
            `strategy 'weekly-apt' (recurring_dca): params.amount_per_order: Input should
            be greater than 0 (got '-5')`.
    """
    try:
        cls = load_plugin(entry.plugin, user_dirs)
    except PluginError as exc:  # name the configured strategy, not only the plugin
        raise PluginError([f"strategy {entry.name!r}: {p}" for p in exc.problems]) from None
    try:
        params = cls.Params.model_validate(entry.params)
    except ValidationError as exc:
        raise PluginError(_param_problems(entry, exc.errors())) from None
    try:
        strategy = cls(entry.name, params)
    except Exception as exc:
        raise PluginError(
            f"strategy {entry.name!r} ({entry.plugin}): cannot be created: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    try:
        needs = needed_tokens(strategy)  # asked for on every tick: a failure is a load error
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}".splitlines()[0]
        raise PluginError(f"strategy {entry.name!r} ({entry.plugin}): tokens(): {detail}") from None
    if not needs and type(strategy).tokens is Strategy.tokens:
        # A plugin written before tokens() whose parameters are named otherwise (`sell`,
        # `buy`) would tick with APT's price alone: say so once, at load.
        get_logger("plugins").warning(
            "strategy.declares_no_tokens",
            strategy=entry.name,
            plugin=entry.plugin,
            hint="override tokens() to name the tokens it trades (docs/strategies.md)",
        )
    return strategy


def build_strategies(
    entries: Iterable[StrategyEntry], user_dirs: Sequence[Path] = ()
) -> list[Strategy]:
    """The enabled entries' strategies, built with `build_strategy`.

    The one check of `[[strategies]]` that every verb shares (`bot config check`,
    `bot strategies check`, `bot once`/`run` and a reload, `bot doctor`): every entry is
    tried, so one error lists all the problems.

    Raises:
        PluginError: one line per problem, of every enabled entry.
    """
    built: list[Strategy] = []
    problems: list[str] = []
    for entry in entries:
        if not entry.enabled:
            continue
        try:
            built.append(build_strategy(entry, user_dirs))
        except PluginError as exc:
            problems.extend(exc.problems)
    if problems:
        raise PluginError(problems)
    return built


def declared_tokens(entries: Iterable[StrategyEntry], user_dirs: Sequence[Path] = ()) -> list[str]:
    """The token names the enabled entries' strategies declare (`Strategy.tokens()`), once each.

    For what is chosen from the strategies without running them (the recorder's default
    tokens). An entry that cannot be built adds nothing and raises nothing: reporting it
    is the strategy check's (`bot config check`, daemon start).
    """
    names: dict[str, None] = {}
    for entry in entries:
        if not entry.enabled:
            continue
        try:
            strategy = build_strategy(entry, user_dirs)
        except PluginError:
            continue
        names.update(dict.fromkeys(needed_tokens(strategy)))
    return list(names)
