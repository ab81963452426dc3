"""`bot alerts test`: one test alert through each configured channel, a line per channel."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.cli import run_bot
from tests.support.loopback import closed_port, serve

TOKEN = "7312345678:AAE-cli-secret-token"


class Receiver:
    """Records the JSON bodies it is sent and answers 200."""

    def __init__(self) -> None:
        self.bodies: list[tuple[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.bodies.append((scope["path"], json.loads(body)))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def alerts_test(tmp_path: Path, alerts: str, **env: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "bot.toml"
    config.write_text(f"[alerts]\ntimeout_seconds = 2.0\nmax_attempts = 1\n{alerts}")
    return run_bot("-c", str(config), "alerts", "test", env=env, cwd=tmp_path, timeout=60)


def test_a_test_alert_reaches_every_channel_even_if_events_leave_it_out(tmp_path: Path) -> None:
    receiver = Receiver()
    with serve(receiver) as url:
        done = alerts_test(
            tmp_path,
            f'events = ["order_filled"]\ntelegram_chat_id = "42"\ntelegram_api_url = "{url}"\n',
            BOT_ALERTS__WEBHOOK_URL=url + "/hook",
            BOT_ALERTS__TELEGRAM_BOT_TOKEN=TOKEN,
        )
    assert done.returncode == 0, done.stderr
    assert "PASS  webhook  delivered" in done.stdout
    assert "PASS  telegram  delivered" in done.stdout
    paths = sorted(path for path, _ in receiver.bodies)
    assert paths == [f"/bot{TOKEN}/sendMessage", "/hook"]
    hook = next(body for path, body in receiver.bodies if path == "/hook")
    assert hook["kind"] == "alerts_test"
    assert TOKEN not in done.stdout + done.stderr


def test_a_dead_channel_fails_with_its_line_and_exit_1(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{closed_port()}/hook"
    done = alerts_test(tmp_path, "", BOT_ALERTS__WEBHOOK_URL=dead)
    assert done.returncode == 1
    assert "FAIL  webhook  not delivered" in done.stdout
    assert "/hook" not in done.stdout + done.stderr  # the URL is a secret


def test_no_channel_is_a_usage_error(tmp_path: Path) -> None:
    done = alerts_test(tmp_path, "")
    assert done.returncode == 2
    assert "no alert channel configured" in done.stderr
