"""`bot run` with `[console]` on: the real daemon serves its REST API and obeys its controls.

The daemon runs as a subprocess on an embedded paper world (accelerated clock); the test
talks to its console over loopback as an operator's browser or script would: no token,
no answer; with it, the orders the DCA placed, and a pause and a reload that the daemon
itself carries out from its command queue. The token never shows in the daemon's output.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.cli import clean_env
from tests.support.loopback import closed_port
from tests.support.user_folder import HOURLY_DCA, new_user_folder, wait_for

TOKEN = "console-token-5e1f0c2a9b"
DCA = HOURLY_DCA.replace("interval_seconds = 3600", "interval_seconds = 600")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    new_user_folder(
        tmp_path,
        paper='clock = "accelerated"\nspeed = 600',
        daemon="heartbeat_seconds = 1",
        strategies=DCA,
    )
    port = closed_port()
    with (tmp_path / "config.toml").open("a") as config:
        config.write(f"\n[console]\nenabled = true\nport = {port}\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "-c", "config.toml", "run"],
        stdout=(tmp_path / "out.txt").open("w"),
        stderr=(tmp_path / "err.txt").open("w"),
        text=True,
        env=clean_env(BOT_CONSOLE__TOKEN=TOKEN),
        cwd=tmp_path,
    )
    try:
        yield process, f"http://127.0.0.1:{port}/api/v1", tmp_path
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def _get(client: httpx.Client, url: str) -> Any:
    answer = client.get(url)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _answered(client: httpx.Client, url: str) -> bool:
    try:
        return client.get(url).status_code == 200
    except httpx.TransportError:
        return False


def _finished(client: httpx.Client, base: str, command_id: int) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def done() -> bool:
        found.update(_get(client, f"{base}/commands/{command_id}"))
        return found["state"] in ("done", "failed")

    wait_for(done, f"command {command_id} finished by the daemon")
    return found


def test_the_daemon_serves_its_console_and_carries_out_its_controls(
    daemon: tuple[subprocess.Popen[str], str, Path],
) -> None:
    process, base, folder = daemon
    authorised = httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    with authorised, httpx.Client(timeout=10) as anonymous:
        wait_for(lambda: _answered(authorised, f"{base}/health"), "the console up")
        refused = anonymous.get(f"{base}/orders")
        assert (refused.status_code, refused.json()) == (401, {"detail": "unauthorized"})

        wait_for(lambda: _get(authorised, f"{base}/orders")["total"] > 0, "the DCA order")
        page = _get(authorised, f"{base}/orders")
        assert page["items"][0]["strategy"] == "dca" and page["items"][0]["kind"] == "dca"
        # Named by the daemon's token book (its price convention), the identity kept.
        first = page["items"][0]
        assert (first["from_symbol"], first["to_symbol"]) == ("USDC", "APT")
        assert first["from_token"].startswith("0x") and "::" in first["to_token"]

        paused = authorised.post(f"{base}/strategies/dca/pause")
        assert paused.status_code == 202, paused.text
        pause = _finished(authorised, base, paused.json()["command_id"])
        assert pause["state"] == "done" and pause["payload"]["source"] == "console"
        strategies = _get(authorised, f"{base}/strategies")
        assert [s["paused"] for s in strategies["items"] if s["name"] == "dca"] == [True]

        ghost = authorised.post(f"{base}/strategies/ghost/pause")
        assert ghost.status_code == 404

        reload = authorised.post(f"{base}/reload")
        assert reload.status_code == 202, reload.text
        reloaded = _finished(authorised, base, reload.json()["command_id"])
        assert reloaded["state"] == "done", reloaded
        assert reloaded["result"].startswith("reload requested"), reloaded

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    output = (folder / "out.txt").read_text() + (folder / "err.txt").read_text()
    assert "console on http://127.0.0.1:" in output
    assert TOKEN not in output
