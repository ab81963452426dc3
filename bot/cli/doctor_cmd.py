"""`bot doctor [--live]`: read-only checks before going live, a pass/fail line each.

Exit codes: 0 every check passed (warnings and skips allowed), 1 a check failed, 2 the
configuration is invalid. `--live` checks the config as `mode = "live"` would use it
(`[api]`, `[chain]`, the real API key) whatever its `mode` says, so a paper setup can be
checked against the live services before switching. In paper mode the checks look at the
daemon's paper world: its snapshot, restored read-only, or the served one
(`bot.ops.doctor_paper`). The last API checks prove the provider and node answer the way
the bot trades (prices, a quote, the swap's function, the router's ABI:
`bot.ops.doctor_live`), against whichever services the mode means.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli.common import EXIT_USAGE, config_path, fail, load_or_exit, state
from bot.config import ConfigError, Settings, load_settings

if TYPE_CHECKING:
    from bot.ops.doctor import CheckResult
    from bot.paper.world import PaperWorld


def doctor(
    ctx: typer.Context,
    live: Annotated[
        bool,
        typer.Option("--live", help="Check the live settings ([api], [chain]) whatever mode says."),
    ] = False,
) -> None:
    """Check config, key, node, API, a quote, the router, balances, gas, journal and clock."""
    from bot.ops.doctor import check_config, config_failures, exit_code, summary

    cli = state(ctx)
    path = config_path(cli)
    try:
        load_settings(path)
    except ConfigError as exc:
        invalid = config_failures(path, exc.problems)
        for result in invalid:
            typer.echo(result.line())
        typer.echo(summary(invalid))
        fail("the configuration is invalid", EXIT_USAGE)
    settings = load_or_exit(ctx)  # logging set up and secrets registered, as every verb
    checked = settings.model_copy(update={"mode": "live"}) if live else settings
    # One retry absorbs a blip; the daemon's full back-off would only delay the verdict.
    quick = checked.api.model_copy(update={"max_attempts": min(checked.api.max_attempts, 2)})
    checked = checked.model_copy(update={"api": quick})
    results = [check_config(path, settings, live=live), *asyncio.run(_checks(checked))]
    redactor = cli.redactor
    for result in results:
        line = result.line()
        typer.echo(redactor.redact(line) if redactor is not None else line)
    typer.echo(summary(results))
    code = exit_code(results)
    if code:
        names = ", ".join(dict.fromkeys(r.name for r in results if r.failed))
        fail(f"doctor: failed: {names}", code)


def _paper_world(settings: Settings) -> tuple[PaperWorld | None, CheckResult | None]:
    """The embedded world the daemon uses (restored read-only), and the line saying which."""
    from bot.app.runtime import embedded_snapshot, embedded_world
    from bot.ops.doctor_paper import check_paper_world
    from bot.paper.world import SnapshotError

    snapshot = embedded_snapshot(settings)
    if settings.mode != "paper" or settings.paper.url:
        return None, check_paper_world(settings, snapshot, restored=False)
    restored = snapshot is not None and snapshot.exists()
    try:
        world = embedded_world(settings)  # never saved: doctor changes nothing in it
    except SnapshotError as exc:
        return None, check_paper_world(settings, snapshot, restored=False, problem=str(exc))
    return world, check_paper_world(settings, snapshot, restored=restored)


async def _checks(settings: Settings) -> list[CheckResult]:
    """Every check after the config's own, against the services the mode means."""
    from bot.app.runtime import chain_settings, connect
    from bot.clock import RealClock
    from bot.ops.doctor import (
        check_journal,
        check_key,
        check_key_file,
        check_reference,
        check_strategies,
        public_url,
    )
    from bot.ops.doctor_live import LiveDoctor
    from bot.secrets import SecretFileError

    strategies_check, strategies = check_strategies(settings)
    world, world_check = _paper_world(settings)
    first = [strategies_check, check_reference(settings)]
    if world_check is not None:
        first.insert(0, world_check)
        if world_check.failed:  # no world to check: only what needs none
            file_check = check_key_file(settings.wallet)
            key_check, _ = check_key(settings.wallet, file_check)
            return [*first, file_check, key_check, check_journal(settings.journal.url)]
    api_problem = None
    try:
        connection = connect(settings, embedded=world)
    except SecretFileError as exc:  # the API key file is unusable; the node can still be checked
        api_problem = str(exc)
        without_key = settings.api.model_copy(update={"api_key_file": None})
        connection = connect(settings.model_copy(update={"api": without_key}), embedded=world)
    paper = settings.mode == "paper"
    embedded = paper and not settings.paper.url
    chain = chain_settings(settings)
    doctor = LiveDoctor(
        settings=settings,
        client=None if api_problem else connection.client,
        api_problem=api_problem,
        node=connection.node,
        api_url="embedded paper world"
        if embedded
        else public_url(settings.paper.url if paper else settings.api.base_url),
        node_url="embedded paper node" if embedded else public_url(chain.node_url),
        chain_id=chain.chain_id,
        paper_clock=settings.paper.clock if paper and settings.paper.clock != "real" else None,
        clock=RealClock(),
        allowed_functions=chain.allowed_functions,
    )
    try:
        return [*first, *await doctor.run(strategies)]
    finally:
        await connection.client.aclose()
        await connection.node.aclose()
