"""`bot record` (the price recorder) and `bot series import | synth`.

`bot record` polls `/prices` for the configured tokens on a schedule (real time through
APScheduler; a paper world's accelerated or stepped clock through our `Driver`) into the
journal's `price_ticks` and/or a series file, with retention of old ticks once at start
and daily. The daemon records the same way as a side job (`bot.app.record_jobs`). The
series commands work offline: token symbols are looked up in the packaged token list.
See docs/price-series.md.
"""

from __future__ import annotations

import asyncio
import signal
import time
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from bot.app.record_jobs import record_jobs
from bot.aptos.address import split_names
from bot.cli.common import EXIT_FAILURE, EXIT_USAGE, fail, load_or_exit
from bot.config import RecordSettings, Settings
from bot.engine.scheduling import Driver, start_realtime

if TYPE_CHECKING:
    from bot.app.runtime import Runtime
    from bot.aptos.tokens import Token
    from bot.history.importer import ImportFormat
    from bot.history.recorder import PollReport, SeriesFile
    from bot.history.retention import RetentionReport
    from bot.paper.core.series import SeriesBlock

__all__ = ["record", "series_app"]

series_app = typer.Typer(
    help="Price series: import from elsewhere, synthesise.", no_args_is_help=True
)

_FOREVER = timedelta(days=36_500)


# --- bot record -------------------------------------------------------------------------


def record(
    ctx: typer.Context,
    tokens: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated symbols or addresses (default: [record].tokens, "
            "else the tokens the strategies use)."
        ),
    ] = None,
    every: Annotated[
        str | None,
        typer.Option(help="Poll interval: 30s, 5m, 1h or seconds (default: [record])."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Also append to this .csv or .parquet file (default: [record].out)."),
    ] = None,
    journal: Annotated[
        bool | None,
        typer.Option(
            "--journal/--no-journal",
            help="Record to the journal's price_ticks (default: [record].to_journal).",
        ),
    ] = None,
    count: Annotated[
        int | None, typer.Option(min=1, help="Stop after this many polls (default: run on).")
    ] = None,
) -> None:
    """Record prices of the configured tokens on a schedule until stopped (SIGTERM/SIGINT)."""
    from bot.history.recorder import SeriesFile
    from bot.history.units import parse_seconds

    settings = load_or_exit(ctx)
    config = settings.record
    updates: dict[str, Any] = {}
    if tokens is not None:
        updates["tokens"] = split_names(tokens)
        if not updates["tokens"]:
            fail("--tokens: give at least one symbol or address", EXIT_USAGE)
    if every is not None:
        try:
            updates["every_seconds"] = parse_seconds(every, field="--every")
        except ValueError as exc:
            fail(str(exc), EXIT_USAGE)
    if out is not None:
        updates["out"] = out
    if journal is not None:
        updates["to_journal"] = journal
    config = config.model_copy(update=updates)
    if not config.to_journal and config.out is None:
        fail("nothing to record to: give --out FILE or leave --journal on", EXIT_USAGE)
    series_file = None
    if config.out is not None:
        try:
            series_file = SeriesFile(config.out)
        except ValueError as exc:
            fail(str(exc), EXIT_USAGE)
    source = "--tokens" if tokens is not None else "[record].tokens"
    asyncio.run(_record(settings, config, series_file, count, source))


async def _open_runtime(settings: Settings) -> Runtime:
    from bot.api import ApiError
    from bot.app.runtime import Runtime
    from bot.journal import JournalError
    from bot.secrets import SecretFileError

    try:
        return await Runtime.open(settings, with_signer=False)
    except SecretFileError as exc:
        fail(str(exc), EXIT_USAGE)
    except (ApiError, JournalError, OSError) as exc:
        fail(f"cannot start the recorder: {exc}", EXIT_FAILURE)


def _chosen_tokens(
    settings: Settings, config: RecordSettings, runtime: Runtime, source: str
) -> list[Token]:
    from bot.engine.plugins import declared_tokens
    from bot.history.selection import choose_tokens

    declared = declared_tokens(settings.strategies, settings.scheduler.strategy_dirs)
    choice = choose_tokens(runtime.tokens, config.tokens, declared)
    if choice.problems:
        fail("\n".join(f"{source}: {p}" for p in choice.problems), EXIT_USAGE)
    if not choice.tokens:
        fail(
            "no tokens to record: give --tokens or set [record].tokens "
            "(no enabled strategy names a token)",
            EXIT_USAGE,
        )
    return choice.tokens


async def _record(
    settings: Settings,
    config: RecordSettings,
    series_file: SeriesFile | None,
    count: int | None,
    source: str,
) -> None:
    from bot.clock import AcceleratedClock, SteppedClock
    from bot.history.recorder import PriceRecorder, recording_source

    runtime = await _open_runtime(settings)
    async with runtime:
        chosen = _chosen_tokens(settings, config, runtime, source)
        journal = runtime.journal if config.to_journal else None
        recorder = PriceRecorder(
            runtime.client,
            runtime.clock,
            chosen,
            every_seconds=config.every_seconds,
            origin=recording_source(settings),
            journal=journal,
            out=series_file,
        )
        stop = asyncio.Event()

        def on_poll(report: PollReport) -> None:
            typer.echo(report.line())
            if count is not None and recorder.polls >= count:
                stop.set()

        def on_retention(report: RetentionReport) -> None:
            typer.echo(report.line())

        start = runtime.clock.now()
        jobs = record_jobs(
            recorder, journal, config, start, on_poll=on_poll, on_retention=on_retention
        )
        targets = (["journal"] if journal is not None else []) + (
            [str(series_file.path)] if series_file is not None else []
        )
        simulated = ", simulated prices" if recorder.origin == "paper" else ""
        typer.echo(
            f"recording {', '.join(t.symbol for t in chosen)} every {config.every_seconds}s "
            f"to {' and '.join(targets)} (source: {recorder.origin}{simulated})"
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        if isinstance(runtime.clock, SteppedClock | AcceleratedClock):
            driver = Driver(runtime.clock, jobs)
            runner = asyncio.create_task(driver.run_until(runtime.clock.now() + _FOREVER, stop))
            await asyncio.wait(
                [runner, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED
            )
            stop.set()
            await asyncio.gather(runner, return_exceptions=True)
        else:
            scheduler = start_realtime(
                jobs, misfire_grace_seconds=settings.scheduler.misfire_grace_seconds
            )
            await stop.wait()
            scheduler.shutdown(wait=True)
    typer.echo(
        f"recorder stopped: {recorder.polls} poll(s), {recorder.recorded} price(s), "
        f"{recorder.failed} failed poll(s)"
    )


# --- bot series import | synth ----------------------------------------------------------


def _offline_token(name: str, option: str) -> tuple[str, str | None, Token | None]:
    from bot.aptos.tokens import TokenLookupError
    from bot.history.selection import offline_token

    try:
        return offline_token(name)
    except TokenLookupError as exc:
        fail(f"{option} {name!r}: {exc}", EXIT_USAGE)


def _parse_time(text: str, option: str) -> datetime:
    from bot.clock import parse_utc

    try:
        return parse_utc(text)
    except ValueError:
        fail(
            f"{option}: not an ISO-8601 time (e.g. 2025-01-01 or 2025-01-01T00:00:00Z): {text!r}",
            EXIT_USAGE,
        )


def _token_values(items: list[str], option: str) -> dict[str, Decimal]:
    from bot.history.units import parse_token_values

    try:
        return parse_token_values(items, field=option)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)


@series_app.command("import")
def import_series(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A CSV with a header: time and price columns.")],
    token: Annotated[str, typer.Option(help="The token these prices are of (symbol/address).")],
    fmt: Annotated[
        str, typer.Option("--format", help="auto, price (timestamp,price) or ohlcv.")
    ] = "auto",
    column: Annotated[
        str | None, typer.Option(help="The price column (OHLCV default: close).")
    ] = None,
    timestamp_column: Annotated[
        str | None, typer.Option(help="The time column (default: timestamp, time, date…).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Write (or append) to this .csv or .parquet file. "
            "Default: none (give --out and/or --journal)."
        ),
    ] = None,
    journal: Annotated[
        bool, typer.Option("--journal", help="Store in the journal's price_ticks.")
    ] = False,
) -> None:
    """Import one token's prices from a CSV (timestamp,price or OHLCV) into the one format."""
    from bot.history.importer import SeriesImportError, import_price_csv

    if fmt not in ("auto", "price", "ohlcv"):
        fail(f"--format {fmt!r}: must be auto, price or ohlcv", EXIT_USAGE)
    if out is None and not journal:
        fail("give --out FILE and/or --journal", EXIT_USAGE)
    if out is not None and out.suffix.lower() not in (".csv", ".parquet", ".pq"):
        fail(f"--out {out}: the file must end in .csv or .parquet", EXIT_USAGE)
    settings = load_or_exit(ctx) if journal else None
    key, symbol, _token = _offline_token(token, "--token")
    try:
        block, report = import_price_csv(
            file,
            key,
            symbol=symbol,
            fmt=cast("ImportFormat", fmt),
            column=column,
            timestamp_column=timestamp_column,
        )
    except SeriesImportError as exc:
        fail(str(exc), EXIT_USAGE)
    skipped = report.skipped_line()
    if report.imported == 0:
        fail(f"no usable row in {skipped}" if skipped else f"{file}: no usable row", EXIT_USAGE)
    typer.echo(report.line())
    if skipped:
        typer.echo(f"bot: warning: {skipped}", err=True)
    if out is not None:
        typer.echo(_write_block(block, out))
    if settings is not None:
        typer.echo(_store_block(block, settings))


def _write_block(block: SeriesBlock, out: Path) -> str:
    from bot.paper.core.series import append_series, write_series_blocks

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if not out.exists() or out.stat().st_size == 0:
            return f"wrote {write_series_blocks(out, [block])} row(s) to {out}"
        return f"appended {append_series(out, block.rows())} row(s) to {out}"
    except (OSError, ValueError) as exc:
        fail(f"--out {out}: {getattr(exc, 'strerror', None) or exc}", EXIT_FAILURE)


def _store_block(block: SeriesBlock, settings: Settings) -> str:
    from bot.history.ticks import store_block
    from bot.journal import Journal, JournalError

    try:
        with Journal.open(settings.journal.url) as opened:
            inserted, duplicates = store_block(opened, block)
    except JournalError as exc:
        fail(f"journal: {exc}", EXIT_FAILURE)
    return f"journal: {inserted} tick(s) stored, {duplicates} already there"


@series_app.command("synth")
def synth(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option(help="The .csv or .parquet file to write.")],
    tokens: Annotated[str, typer.Option(help="Comma-separated symbols or addresses.")] = "APT",
    start: Annotated[
        str, typer.Option("--from", help="First point (ISO-8601, UTC).")
    ] = "2026-01-01T00:00:00Z",
    end: Annotated[
        str | None, typer.Option("--to", help="End, exclusive (default: --from + 7 days).")
    ] = None,
    step: Annotated[str, typer.Option(help="Spacing: 30s, 5m, 1h or seconds.")] = "60s",
    seed: Annotated[int, typer.Option(help="Seed (the paper world's default is 42).")] = 42,
    start_price: Annotated[
        list[str] | None,
        typer.Option(
            "--start-price",
            help="TOKEN=PRICE (repeatable). Default: the paper world's (APT 5, USD tokens 1).",
        ),
    ] = None,
    volatility: Annotated[
        list[str] | None,
        typer.Option(
            help="TOKEN=annual volatility, e.g. APT=0.8. "
            "Default: the paper world's (APT 0.8, USD tokens 0.02)."
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a seeded synthetic series (the paper world's random walk): same seed, same file."""
    from bot.history.synth import SynthToken, synth_blocks, synth_spec
    from bot.history.units import parse_seconds
    from bot.paper.core.series import write_series_blocks

    if out.suffix.lower() not in (".csv", ".parquet", ".pq"):
        fail(f"--out {out}: the file must end in .csv or .parquet", EXIT_USAGE)
    if out.exists() and not force:
        fail(f"--out {out}: the file exists (use --force to overwrite it)", EXIT_USAGE)
    try:
        step_seconds = parse_seconds(step, field="--step")
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    first = _parse_time(start, "--from")
    last = _parse_time(end, "--to") if end is not None else first + timedelta(days=7)
    if last <= first:
        fail(f"--to {end}: must be after --from {start}", EXIT_USAGE)
    prices = _token_values(start_price or [], "--start-price")
    vols = _token_values(volatility or [], "--volatility")
    names = split_names(tokens)
    if not names:
        fail("--tokens: give at least one symbol or address", EXIT_USAGE)
    for option, given in (("--start-price", prices), ("--volatility", vols)):
        for name in set(given) - set(names):
            fail(f"{option} {name}: not one of --tokens", EXIT_USAGE)
    items = []
    for name in names:
        key, symbol, token = _offline_token(name, "--tokens")
        try:
            spec = synth_spec(
                token, seed, step_seconds, start_price=prices.get(name), volatility=vols.get(name)
            )
        except ValueError as exc:
            fail(f"--tokens {name}: {exc} (--start-price {name}=…)", EXIT_USAGE)
        items.append(SynthToken(key, symbol, spec))
    began = time.perf_counter()
    blocks = synth_blocks(items, first, last, seed)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        written = write_series_blocks(out, blocks)
    except (OSError, ValueError) as exc:
        fail(f"--out {out}: {getattr(exc, 'strerror', None) or exc}", EXIT_FAILURE)
    typer.echo(
        f"wrote {written} row(s) ({len(blocks)} token(s), every {step_seconds}s, seed {seed}) "
        f"to {out} in {time.perf_counter() - began:.1f}s"
    )
