"""`bot paper serve | fund | status`: run and inspect a paper world over loopback."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
from typing import Annotated, Any

import httpx
import typer

from bot.cli.common import EXIT_USAGE, fail, load_or_exit
from bot.config import Settings
from bot.logging import get_logger

app = typer.Typer(
    help="Run or inspect the paper world (a local simulated market).", no_args_is_help=True
)


@app.command("serve")
def serve(
    ctx: typer.Context,
    host: Annotated[
        str, typer.Option(help="Address to listen on (keep it on loopback).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = 8080,
    clock: Annotated[
        str | None, typer.Option(help="real, accelerated or stepped (default: [paper].clock).")
    ] = None,
) -> None:
    """Serve the provider's API from a paper world until interrupted."""
    import uvicorn

    from bot.paper.world import build_world

    settings = load_or_exit(ctx)
    paper = settings.paper
    if clock is not None:
        if clock not in ("real", "accelerated", "stepped"):
            fail("--clock must be real, accelerated or stepped", EXIT_USAGE)
        paper = paper.model_copy(update={"clock": clock})
    world = build_world(paper, prefix=settings.api.provider_prefix)
    log = get_logger("paper")
    config = uvicorn.Config(
        world.app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    server = uvicorn.Server(config)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, lambda: setattr(server, "should_exit", True))
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.05)
        if server.started:
            # Accepted connections inherit TCP_NODELAY: without it Nagle's algorithm and
            # delayed ACKs add ~45 ms to every request of a client keeping its connection.
            for sock in server.servers[0].sockets:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            bound = server.servers[0].sockets[0].getsockname()
            log.info(
                "paper.serving",
                url=f"http://{bound[0]}:{bound[1]}",
                clock=paper.clock,
                now=str(world.market.now),
            )
            print(f"paper world on http://{bound[0]}:{bound[1]}", flush=True)
        await task

    try:
        asyncio.run(run())
    finally:
        if paper.snapshot_file is not None:
            world.save()
            log.info("paper.snapshot_saved", path=str(paper.snapshot_file))


def _admin(settings: Settings, method: str, path: str, **kwargs: Any) -> Any:
    url = settings.paper.url
    if not url:
        fail(
            "set [paper].url (or BOT_PAPER__URL) to a served paper world "
            "(`bot paper serve` prints it)",
            EXIT_USAGE,
        )
    key = settings.paper.api_keys[0] if settings.paper.api_keys else ""
    try:
        response = httpx.request(
            method, url.rstrip("/") + path, headers={"x-api-key": key}, timeout=10, **kwargs
        )
    except httpx.HTTPError as exc:
        fail(f"paper world at {url} not reachable: {type(exc).__name__}")
    if response.status_code != 200:
        try:
            message = response.json().get("message", response.text)
        except ValueError:
            message = response.text
        code = EXIT_USAGE if response.status_code in (400, 404) else 1
        fail(f"{path}: HTTP {response.status_code}: {message}", code)
    return response.json()


@app.command("fund")
def fund(
    ctx: typer.Context,
    wallet: Annotated[str, typer.Argument(help="Wallet address.")],
    token: Annotated[str, typer.Argument(help="Symbol, coin type or FA address.")],
    amount: Annotated[str, typer.Argument(help="Human amount, e.g. 100.5.")],
) -> None:
    """Mint paper tokens into a wallet of a served paper world ([paper].url)."""
    settings = load_or_exit(ctx)
    result = _admin(
        settings,
        "POST",
        "/paper/v1/fund",
        json={"wallet": wallet, "token": token, "amount": amount},
    )
    typer.echo(f"{result['wallet']}: {result['balance']} {result['symbol']}")


@app.command("status")
def status(
    ctx: typer.Context,
    wallet: Annotated[
        str | None, typer.Option(help="Also show this wallet's balances. Default: none.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show a served paper world's time, live orders and balances."""
    settings = load_or_exit(ctx)
    params = {"wallet": wallet} if wallet else None
    result = _admin(settings, "GET", "/paper/v1/status", params=params)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    typer.echo(f"time        {result['now']}")
    typer.echo(f"next event  {result['nextEvent'] or '-'}")
    typer.echo(f"live orders {result['liveDcaOrders']} DCA, {result['liveLimitOrders']} limit")
    for symbol, balance in result["balances"].items():
        typer.echo(f"  {symbol:<10} {balance}")
