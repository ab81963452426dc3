"""`bot alerts test`: send one alert through every configured channel, say what arrived."""

from __future__ import annotations

import asyncio

import typer

from bot.cli.common import EXIT_FAILURE, EXIT_USAGE, fail, load_or_exit

app = typer.Typer(help="Alerts: try the configured channels.", no_args_is_help=True)


@app.command("test")
def test(ctx: typer.Context) -> None:
    """Send a test alert through each configured channel; exit 1 if one was not delivered."""
    from bot.clock import RealClock
    from bot.ops.alerts import build_alerter

    settings = load_or_exit(ctx)
    try:
        alerter = build_alerter(settings.alerts, RealClock())
    except ValueError as exc:  # AlertConfigError: names the key, never the secret
        fail(str(exc), EXIT_USAGE)
    if not alerter.enabled:
        fail(
            "no alert channel configured: set [alerts].webhook_url (or webhook_url_file), "
            "or telegram_bot_token (or _file) and telegram_chat_id",
            EXIT_USAGE,
        )
    alerts = settings.alerts
    # Every attempt may take its timeout, plus the back-off between them (capped).
    budget = min(120.0, alerts.timeout_seconds * alerts.max_attempts + 10.0)

    async def send() -> None:
        await alerter.start()
        alerter.emit_test("test alert from `bot alerts test`: this channel works")
        await alerter.aclose(timeout=budget)

    asyncio.run(send())
    failed = []
    for name in alerter.channels:
        stats = alerter.channel_stats(name)
        if stats.sent:
            typer.echo(f"PASS  {name}  delivered")
        else:
            failed.append(name)
            typer.echo(f"FAIL  {name}  not delivered (see the log line above for why)")
    if failed:
        fail(f"alerts test: {', '.join(failed)} did not deliver", EXIT_FAILURE)
