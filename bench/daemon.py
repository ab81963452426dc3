"""Benchmark of the daemon: `bot run --paper` with the five built-in strategies.

Run from the repository root: `python bench/daemon.py [idle_seconds] [ticks]`.

* Daemon (two real processes): `bot paper serve` on a real clock, and `bot run --paper`
  with a config whose `[paper].url` points at it, a wallet key file and the five
  strategies of docs/strategies.md on hourly intervals (an interval trigger fires at its
  start, so every strategy ticks at once, then nothing is due for an hour but the command
  queue every 2 s). The bot is started through this file (`--child`), which only stamps
  the first `Engine.tick` on stderr (CLOCK_MONOTONIC is shared by the processes) and then
  runs the `bot` command unchanged.
  - RSS: `VmRSS` of the bot's process from /proc, sampled every 0.1 s after the first
    ticks: the maximum (target ≤ 120 MB); `VmHWM` (peak, start-up included) is shown too.
  - idle CPU: `utime + stime` of the bot's process over `idle_seconds` once the first ticks
    and the first tracker poll are over, as a percentage of one core (target ≤ 1 %).
  - start-up to first tick: from spawning the process to the first `Engine.tick`
    (target ≤ 2 s).
* Tick → order request (in-process, no network): an `Engine` with a `LiveBroker` against
  an in-process paper world (`httpx.ASGITransport`), one strategy creating a limit order
  every tick under a fresh key; the transport stamps when the createOrder request is
  issued and how long every earlier request of the tick spent inside it (the paper world
  answering: the network's share). Tick start → createOrder issued, minus that share,
  median over `ticks` ticks after a warm-up (target ≤ 20 ms).

The last line is a one-line summary for CI logs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CHILD_FLAG = "--child"
STAMP = "BENCH-STAMP"


def _child(args: list[str]) -> None:
    """The bot's process: stamp each tick's start and end on stderr, then run `bot`."""
    from bot.cli import main
    from bot.engine.engine import Engine

    tick = Engine.tick
    poll = Engine.poll_orders

    async def stamped_tick(self: Engine, name: str) -> object:
        print(f"{STAMP} tick-start {time.monotonic():.6f} {name}", file=sys.stderr, flush=True)
        try:
            return await tick(self, name)
        finally:
            print(f"{STAMP} tick-end {time.monotonic():.6f} {name}", file=sys.stderr, flush=True)

    async def stamped_poll(self: Engine) -> object:
        print(f"{STAMP} poll-start {time.monotonic():.6f}", file=sys.stderr, flush=True)
        try:
            return await poll(self)
        finally:
            print(f"{STAMP} poll-end {time.monotonic():.6f}", file=sys.stderr, flush=True)

    Engine.tick = stamped_tick  # type: ignore[method-assign,assignment]
    Engine.poll_orders = stamped_poll  # type: ignore[method-assign,assignment]
    sys.argv = ["bot", *args]
    main()


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == CHILD_FLAG:
    _child(sys.argv[2:])
    raise SystemExit(0)

# --- the measuring side ------------------------------------------------------------------

import asyncio  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import timedelta  # noqa: E402
from decimal import Decimal  # noqa: E402
from typing import Any, ClassVar  # noqa: E402

import httpx  # noqa: E402
import structlog  # noqa: E402

from harness.five_strategies import five_strategies_toml  # noqa: E402
from harness.whole_bot import rss_kb  # noqa: E402

TARGET_RSS_MB = 120
TARGET_IDLE_PCT = 1.0
TARGET_STARTUP_S = 2.0
TARGET_TICK_MS = 20.0
PAPER_KEY = "bench-daemon-key"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}


def _cpu_seconds(pid: int) -> float:
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


@dataclass
class Lines:
    """Every line of a process's stream, with the (monotonic) time it was read."""

    lines: list[tuple[float, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def drain(self, stream: Any) -> None:
        for line in iter(stream.readline, ""):
            with self.lock:
                self.lines.append((time.monotonic(), line.rstrip("\n")))

    def snapshot(self) -> list[tuple[float, str]]:
        with self.lock:
            return list(self.lines)


def _stamps(lines: Lines, kind: str) -> list[float]:
    return [
        float(text.split()[2])
        for _, text in lines.snapshot()
        if text.startswith(f"{STAMP} {kind} ")
    ]


def _wait_for(
    predicate: Any, timeout: float, what: str, process: subprocess.Popen[str], err: Lines
) -> None:
    """Wait until `predicate()`; fail with the process's last log lines if it exits first."""
    deadline = time.monotonic() + timeout
    while not predicate():
        exited = process.poll() is not None
        if exited or time.monotonic() > deadline:
            time.sleep(0.2)  # let the reader take the last lines
            tail = "\n".join(t for _, t in err.snapshot()[-20:])
            reason = f"exited ({process.returncode})" if exited else "timed out"
            raise RuntimeError(f"waiting for {what}, the daemon {reason}:\n{tail}")
        time.sleep(0.05)


@dataclass
class DaemonFigures:
    rss_mb: float
    hwm_mb: float
    idle_cpu_pct: float
    idle_window_s: float
    jobs_in_window: int
    startup_s: float
    first_ticks_s: float
    first_tick_outputs: int
    stopped_cleanly: bool


def daemon(idle_seconds: float) -> DaemonFigures:
    """Serve a paper world, run the daemon against it, measure the daemon's process."""
    from bot.chain import new_key_file

    with tempfile.TemporaryDirectory(prefix="bench-daemon-") as tmp:
        folder = Path(tmp)
        key_file = folder / "wallet.key"
        wallet = str(new_key_file(key_file))
        body = (
            f'[journal]\nurl = "sqlite:///{folder / "bot.db"}"\n'
            f'[wallet]\nkey_file = "{key_file}"\n'
            '[log]\nformat = "json"\n'
            "[paper]\n"
            'clock = "real"\n'
            f'api_keys = ["{PAPER_KEY}"]\n'
            f'funding = [{{ wallet = "{wallet}", token = "APT", amount = "400" }},'
            f' {{ wallet = "{wallet}", token = "USDC", amount = "3000" }}]\n'
        )
        config = folder / "bot.toml"
        config.write_text(body)
        serve = subprocess.Popen(
            [sys.executable, "-m", "bot", "-c", str(config), "paper", "serve", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
            env=_env(),
        )
        try:
            assert serve.stdout is not None
            url = None
            while url is None:
                line = serve.stdout.readline()
                if not line:
                    raise RuntimeError("bot paper serve did not start")
                if line.startswith("paper world on "):
                    url = line.split()[-1]
            prices = httpx.get(url + "/prices", headers={"x-api-key": PAPER_KEY}).json()
            entry = next(p["usdPrice"] for p in prices if p.get("symbol") == "APT")
            config.write_text(
                body.replace("[paper]\n", f'[paper]\nurl = "{url}"\n')
                + five_strategies_toml(entry=entry)
            )
            return _measure_bot(config, idle_seconds)
        finally:
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(timeout=15)
            except subprocess.TimeoutExpired:
                serve.kill()


def _measure_bot(config: Path, idle_seconds: float) -> DaemonFigures:
    out, err = Lines(), Lines()
    spawned = time.monotonic()
    bot = subprocess.Popen(
        [sys.executable, __file__, CHILD_FLAG, "-c", str(config), "run", "--paper"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=_env(),
    )
    pid = bot.pid
    for lines, stream in ((out, bot.stdout), (err, bot.stderr)):
        threading.Thread(target=lines.drain, args=(stream,), daemon=True).start()
    samples: list[int] = []
    sampling = threading.Event()
    stop_sampling = threading.Event()

    def sample() -> None:
        while not stop_sampling.is_set():
            kb = rss_kb(pid)
            if kb is not None and sampling.is_set():
                samples.append(kb)
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        _wait_for(lambda: _stamps(err, "tick-start"), 60, "the first tick", bot, err)
        first_tick = _stamps(err, "tick-start")[0]
        _wait_for(lambda: len(_stamps(err, "tick-end")) >= 5, 120, "the first ticks", bot, err)
        _wait_for(lambda: _stamps(err, "poll-end"), 120, "the first tracker poll", bot, err)
        first_ticks_done = max(_stamps(err, "tick-end")[:5])
        sampling.set()  # warm: every strategy has ticked, the tracker has polled
        # Settle: wait until the process has been quiet (no CPU over a second).
        for _ in range(30):
            before = _cpu_seconds(pid)
            time.sleep(1.0)
            if _cpu_seconds(pid) - before <= 0.02:
                break
        jobs_before = len(_stamps(err, "tick-start")) + len(_stamps(err, "poll-start"))
        cpu0, t0 = _cpu_seconds(pid), time.monotonic()
        time.sleep(idle_seconds)
        cpu1, t1 = _cpu_seconds(pid), time.monotonic()
        jobs_in_window = (
            len(_stamps(err, "tick-start")) + len(_stamps(err, "poll-start")) - jobs_before
        )
        hwm = rss_kb(pid, "VmHWM") or 0
    finally:
        stop_sampling.set()
        sampler.join()
        bot.send_signal(signal.SIGTERM)
        try:
            bot.wait(timeout=30)
        except subprocess.TimeoutExpired:
            bot.kill()
            bot.wait()
    time.sleep(0.2)  # let the readers take the last lines
    outputs = [t for _, t in out.snapshot() if "→" in t]
    stopped = bot.returncode == 0 and any(t == "bot stopped" for _, t in out.snapshot())
    if not outputs:
        tail = "\n".join(t for _, t in err.snapshot()[-20:])
        raise RuntimeError(f"the daemon did nothing:\n{tail}")
    return DaemonFigures(
        rss_mb=max(samples) / 1024,
        hwm_mb=hwm / 1024,
        idle_cpu_pct=(cpu1 - cpu0) / (t1 - t0) * 100,
        idle_window_s=t1 - t0,
        jobs_in_window=jobs_in_window,
        startup_s=first_tick - spawned,
        first_ticks_s=first_ticks_done - first_tick,
        first_tick_outputs=len(outputs),
        stopped_cleanly=stopped,
    )


# --- tick → order request, in-process ------------------------------------------------------


class _Stamping(httpx.AsyncBaseTransport):
    """Delegates to a transport; notes when createOrder is issued and time spent inside."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.inside = 0.0
        self.create_issued: float | None = None
        self.inside_before_create = 0.0

    def reset(self) -> None:
        self.inside = 0.0
        self.create_issued = None
        self.inside_before_create = 0.0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        start = time.perf_counter()
        if request.url.path.endswith("/createOrder") and self.create_issued is None:
            self.create_issued = start
            self.inside_before_create = self.inside
        try:
            return await self.inner.handle_async_request(request)
        finally:
            self.inside += time.perf_counter() - start


async def _no_wait(seconds: float) -> None:
    return None


async def tick_to_request(ticks: int, warmup: int = 5) -> tuple[list[float], list[float]]:
    """Per tick: (own ms, ms including the in-process paper world's answers)."""
    from pydantic import SecretStr

    from bot.api import PanoraClient
    from bot.aptos.address import FunctionId
    from bot.chain import NodeClient, Signer, SignerPolicy
    from bot.chain.policy import ROUTER_FUNCTION
    from bot.chain.settings import SignerSettings
    from bot.clock import SteppedClock
    from bot.config import PaperFunding, PaperSettings, RiskSettings
    from bot.engine.brokers import LiveBroker
    from bot.engine.executor import Executor
    from bot.engine.live_ports import live_engine
    from bot.engine.recorder import JournalRecorder
    from bot.engine.risk import RiskChecker
    from bot.engine.strategy import Action, Context, CreateLimit, Strategy, StrategyParams
    from bot.engine.tracker import OrderTracker
    from bot.journal import Journal
    from bot.paper.core.modules import order_function
    from bot.paper.world import build_world
    from harness.paper_signing import address_of, fixed_key

    class BenchParams(StrategyParams):
        sell: str = "APT"
        buy: str = "USDC"

    class OrderEveryTick(Strategy):
        """A far limit sell on every tick, each under a key never used before."""

        name: ClassVar[str] = "order_every_tick"
        Params: ClassVar[type[StrategyParams]] = BenchParams

        async def on_tick(self, ctx: Context) -> list[Action]:
            n = int(ctx.state.get("n", 0))
            ctx.save("n", n + 1)
            return [
                CreateLimit(
                    key=f"{self.instance}:{n}",
                    sell="APT",
                    buy="USDC",
                    amount=Decimal("0.01"),
                    rate=Decimal(1000),
                )
            ]

    key = fixed_key("bench-daemon")
    wallet = address_of(key)
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["k"],
            rate_limit_per_second=1e9,
            rate_limit_burst=10**9,
            funding=[PaperFunding(wallet=wallet, token="APT", amount=Decimal(100))],
        )
    )
    transport = _Stamping(httpx.ASGITransport(app=world.app))
    book = world.market.tokens.book
    clock = world.market.clock
    assert isinstance(clock, SteppedClock)
    with tempfile.TemporaryDirectory(prefix="bench-tick-") as tmp:
        journal = Journal.open(f"sqlite:///{Path(tmp) / 'bot.db'}")
        client = PanoraClient(
            base_url="http://paper",
            api_key=SecretStr("k"),
            transport=transport,
            rate_limit_per_second=1e9,
            rate_limit_burst=10**9,
            sleep=_no_wait,
        )
        node = NodeClient("http://paper/v1", expected_chain_id=4, transport=transport)
        functions = [
            order_function(k, f) for k in ("dca", "limit") for f in ("deposit", "withdraw")
        ]
        policy = SignerPolicy(
            chain_id=4,
            allowed_functions=frozenset({ROUTER_FUNCTION, *map(FunctionId.parse, functions)}),
            max_slippage_percent=Decimal(1),
        )
        signer = Signer(
            node,
            key,
            policy,
            JournalRecorder(journal, clock),
            sleep=_no_wait,
            settings=SignerSettings(poll_interval_seconds=0, first_poll_delay_seconds=0),
        )
        executor = Executor(
            journal=journal, client=client, clock=clock, wallet=wallet, tokens=book, signer=signer
        )
        engine = live_engine(
            client=client,
            journal=journal,
            clock=clock,
            wallet=wallet,
            tokens=book,
            broker=LiveBroker(executor),
            risk=RiskChecker(RiskSettings(max_open_orders=10_000), journal, book),
            strategies=[OrderEveryTick("bench", BenchParams())],
            node=node,
            tracker=OrderTracker(client, journal, clock, wallet),
        )
        own: list[float] = []
        raw: list[float] = []
        try:
            for i in range(warmup + ticks):
                clock.advance_to(clock.now() + timedelta(seconds=1))
                transport.reset()
                start = time.perf_counter()
                report = await engine.tick("bench")
                issued = transport.create_issued
                if not report.ok or issued is None:
                    raise RuntimeError(f"tick {i} sent no createOrder: {report}")
                outcome = report.outcomes[0][1]
                if outcome.state != "confirmed":
                    raise RuntimeError(f"tick {i}: {outcome}")
                if i >= warmup:
                    raw.append((issued - start) * 1000)
                    own.append((issued - start - transport.inside_before_create) * 1000)
        finally:
            await client.aclose()
            await node.aclose()
            journal.close()
    return own, raw


def _profile_tick(ticks: int) -> None:
    """Where a tick's own time goes (cProfile, top functions by cumulative time)."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(tick_to_request(ticks, warmup=0))
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


def main(idle_seconds: float = 30.0, ticks: int = 50) -> int:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    figures = daemon(idle_seconds)
    print(
        f"daemon process: rss_max_mb={figures.rss_mb:.1f} (after the first ticks) "
        f"vm_hwm_mb={figures.hwm_mb:.1f} (peak, start-up included)"
    )
    print(
        f"idle: cpu={figures.idle_cpu_pct:.2f}% of a core over {figures.idle_window_s:.0f} s "
        f"(strategy ticks/tracker polls in the window: {figures.jobs_in_window}; "
        "the command queue is read every 2 s)"
    )
    print(
        f"start-up: first tick {figures.startup_s:.2f} s after spawning; the five first "
        f"ticks took {figures.first_ticks_s:.2f} s ({figures.first_tick_outputs} actions "
        f"carried out, signed and confirmed); stopped cleanly: {figures.stopped_cleanly}"
    )
    own, raw = asyncio.run(tick_to_request(ticks))
    median, p90 = statistics.median(own), statistics.quantiles(own, n=10)[-1]
    print(
        f"tick → createOrder issued, in-process: median {median:.2f} ms, p90 {p90:.2f} ms "
        f"over {len(own)} ticks (network excluded); with the in-process paper world's "
        f"answers: median {statistics.median(raw):.2f} ms"
    )
    checks = {
        "rss": figures.rss_mb <= TARGET_RSS_MB,
        "idle": figures.idle_cpu_pct <= TARGET_IDLE_PCT,
        "startup": figures.startup_s <= TARGET_STARTUP_S,
        "tick": median <= TARGET_TICK_MS,
    }
    if not checks["tick"] or os.environ.get("BENCH_PROFILE"):
        _profile_tick(ticks)
    missed = [name for name, ok in checks.items() if not ok]
    if missed:
        print(f"missed: {', '.join(missed)}")
    ok = "yes" if not missed and figures.stopped_cleanly else "no"
    print(
        f"daemon: rss_mb={figures.rss_mb:.0f} idle_cpu_pct={figures.idle_cpu_pct:.2f} "
        f"startup_to_first_tick_s={figures.startup_s:.2f} tick_to_request_ms={median:.1f} "
        f"targets={TARGET_RSS_MB}MB,{TARGET_IDLE_PCT:g}%,{TARGET_STARTUP_S:g}s,"
        f"{TARGET_TICK_MS:g}ms ok={ok}"
    )
    return 0 if ok == "yes" else 1


if __name__ == "__main__":
    arguments = sys.argv[1:]
    raise SystemExit(
        main(
            float(arguments[0]) if arguments else 30.0,
            int(arguments[1]) if len(arguments) > 1 else 50,
        )
    )
