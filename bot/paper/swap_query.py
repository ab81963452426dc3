"""Query parameters of `/prices` and `/swap` read the way the real service takes them.

The forms are real evidence (docs/wire-decisions.md, rows from 28 on), not the spec's
reading: `panoraUI=true,false` for every token (SDK 1.3.1 `Token.getTokenList`: "Set as
[true, false] to get all tokens"), source and pool lists joined with commas (every SDK
version: `includeSources?.join(",")`), the route controls `includePools`,
`onlyDirectRoutes`, `maxHops` and `disableSplits` on `POST /swap` (SDK 1.3.1 `SwapParams`),
and include/exclude sources never together (SDK 1.3.1 `checkIncludeExcludeSources`).
"""

from __future__ import annotations

from typing import Literal

from bot import order_rules as rules
from bot.paper.faces.asgi import HttpError, Request

__all__ = ["check_route_controls", "sources_allow", "ui_filter"]


def _bad(message: str) -> HttpError:
    return HttpError(400, message)


def ui_filter(text: str | None, prefix: str) -> frozenset[bool]:
    """`panoraUI` as the real service reads it: which UI flags to list.

    `true` (the default): shown tokens; `false`: hidden ones only; `true,false` (the docs'
    and the SDK's "all tokens"; brackets and spaces allowed): both.
    """
    if text is None or not text.strip():
        return frozenset({True})
    flags = {part.strip().lower() for part in text.strip().strip("[]").split(",")}
    if not flags or not flags <= {"true", "false"}:
        raise _bad(f"{prefix}UI must be true, false or true,false")
    return frozenset(flag == "true" for flag in flags)


def _names(text: str) -> set[str]:
    """A comma-joined list of source names, compared case-insensitively."""
    return {name.strip().lower() for name in text.split(",") if name.strip()}


def sources_allow(request: Request, dex_name: str) -> bool:
    """Whether `includeSources`/`excludeSources` leave the paper DEX in (else: no route).

    Raises:
        HttpError: 400 when both are given (the SDK refuses that before sending).
    """
    dex = dex_name.lower()
    included, excluded = request.param("includeSources"), request.param("excludeSources")
    try:
        rules.one_of_sources(included, excluded)
    except rules.RuleError as exc:
        raise _bad(str(exc)) from None
    if included is not None:
        return dex in _names(included)
    return dex not in _names(excluded or "")


def check_route_controls(request: Request, variant: Literal["current", "legacy"]) -> None:
    """The route controls as SDK 1.3.1 sends them; the legacy variant knows only the first two.

    Raises:
        HttpError: 400 naming the parameter.
    """
    pools = request.param("includePools")
    direct = request.param("onlyDirectRoutes")
    hops, splits = request.param("maxHops"), request.param("disableSplits")
    if variant == "legacy":
        for name, value in (("maxHops", hops), ("disableSplits", splits)):
            if value is not None:
                raise _bad(f"{name} is only accepted by the current swap variant")
    for name, value in (("onlyDirectRoutes", direct), ("disableSplits", splits)):
        if value not in (None, "true", "false"):
            raise _bad(f"{name} must be true or false")
    try:
        if pools is not None:
            rules.include_pools(len([p for p in pools.split(",") if p.strip()]))
        if hops is not None:  # a few digits are read as the number the client sent
            digits = len(hops) <= 3 and hops.isascii() and hops.isdigit()
            rules.max_hops(int(hops) if digits else hops)
    except rules.RuleError as exc:
        raise _bad(str(exc)) from None
