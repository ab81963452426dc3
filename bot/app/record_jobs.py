"""The price recorder's jobs: polling `/prices` on a schedule, and the retention of old ticks.

Shared by `bot record` (which prints each poll) and the daemon, which records as a side job
when `[record].enabled` (`daemon_record_jobs`). Either runs them on the real-time
scheduler, or a paper world's accelerated or stepped clock through our `Driver`.
See docs/price-series.md.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from bot.config import RecordSettings, Schedule, Settings
from bot.engine.scheduling import Job, make_trigger
from bot.logging import get_logger

if TYPE_CHECKING:
    from bot.app.runtime import Runtime
    from bot.history.recorder import PollReport, PriceRecorder
    from bot.history.retention import RetentionReport
    from bot.journal import Journal

__all__ = ["daemon_record_jobs", "record_jobs"]

_DAY_SECONDS = 86_400


def record_jobs(
    recorder: PriceRecorder,
    journal: Journal | None,
    config: RecordSettings,
    start: datetime,
    *,
    on_poll: Callable[[PollReport], None] | None = None,
    on_retention: Callable[[RetentionReport], None] | None = None,
) -> list[Job]:
    """Retention (daily, from `start`, when recording to the journal) and the poll."""
    from bot.history.retention import apply_retention

    log = get_logger("record")
    jobs: list[Job] = []
    if journal is not None and config.retention_days is not None:

        async def retention() -> None:
            try:
                report = apply_retention(
                    journal,
                    recorder.clock.now(),
                    retention_days=config.retention_days,
                    downsample_seconds=config.downsample_seconds,
                )
            except Exception as exc:  # retention failing must not stop the recording
                log.error("record.retention_failed", error=str(exc))
                return
            if report is not None:
                log.info(
                    "record.retention",
                    mode=report.mode,
                    cutoff=report.cutoff.isoformat(),
                    deleted=report.deleted,
                    kept=report.kept,
                )
                if on_retention is not None:
                    on_retention(report)

        daily = Schedule(interval_seconds=_DAY_SECONDS)
        jobs.append(Job("record-retention", make_trigger(daily, start), retention))

    async def poll() -> None:
        report = await recorder.poll()
        if on_poll is not None:
            on_poll(report)

    every = Schedule(interval_seconds=recorder.every_seconds)
    jobs.append(Job("record", make_trigger(every, start), poll))
    return jobs


def daemon_record_jobs(settings: Settings, runtime: Runtime, start: datetime) -> list[Job]:
    """The daemon's side jobs for `[record]` (recording, retention); none when disabled.

    Problems (an unknown token, an unusable file) are logged, never raised: the daemon
    trades on without them.

    Args:
        settings: the `Settings`.
        runtime: the open `Runtime`.
        start: the first fire time.
    """
    from bot.engine.plugins import declared_tokens
    from bot.history.recorder import PriceRecorder, SeriesFile, recording_source
    from bot.history.selection import choose_tokens

    config = settings.record
    if not config.enabled:
        return []
    log = get_logger("record")
    declared = declared_tokens(settings.strategies, settings.scheduler.strategy_dirs)
    choice = choose_tokens(runtime.tokens, config.tokens, declared)
    for problem in choice.problems:
        log.error("record.config", problem=f"[record].tokens: {problem}")
    out = None
    if config.out is not None:
        try:
            out = SeriesFile(config.out)
        except ValueError as exc:
            log.error("record.config", problem=str(exc).replace("--out", "[record].out"))
    journal = runtime.journal if config.to_journal else None
    if not choice.tokens or (journal is None and out is None):
        log.error("record.disabled", reason="no token or nowhere to record to")
        return []
    recorder = PriceRecorder(
        runtime.client,
        runtime.clock,
        choice.tokens,
        every_seconds=config.every_seconds,
        origin=recording_source(settings),
        journal=journal,
        out=out,
    )
    log.info(
        "record.started",
        tokens=[t.symbol for t in choice.tokens],
        source=recorder.origin,
        every_seconds=config.every_seconds,
        journal=journal is not None,
        out=str(config.out) if out is not None else None,
    )
    return record_jobs(recorder, journal, config, start)
