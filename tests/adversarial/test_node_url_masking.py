"""A node URL carrying a key (path segment, query, user info) is never shown in clear.

`bot doctor` against a node on 127.0.0.1 that echoes the request's path and query in its
error message (as a hostile or merely chatty node may), and `bot config show`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_bot
from tests.support.hostile_answers import Receive, Send
from tests.support.loopback import closed_port, serve

PATH_TOKEN = "TOKEN123abcDEF456"
QUERY_TOKEN = "QueryKey987654"
PASSWORD = "Passw0rdSecret"


async def echoing_node(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """Every request: 400 with the path and query quoted back in the message."""
    if scope["type"] != "http":
        return
    query = scope["query_string"].decode()
    body = json.dumps({"message": f"no route {scope['path']}?{query}", "error_code": "x"})
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body.encode()})


@pytest.fixture
def config(tmp_path: Path) -> Iterator[Path]:
    with serve(echoing_node) as url:
        host = url.removeprefix("http://")
        node_url = f"http://user:{PASSWORD}@{host}/v1/{PATH_TOKEN}/?api_key={QUERY_TOKEN}"
        path = tmp_path / "bot.toml"
        path.write_text(
            'mode = "live"\n'
            f'[api]\nbase_url = "http://127.0.0.1:{closed_port()}"\nmax_attempts = 1\n'
            f'[chain]\nnode_url = "{node_url}"\nchain_id = 4\n'
            f'[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n'
        )
        yield path


def assert_no_secret(text: str) -> None:
    for secret in (PATH_TOKEN, QUERY_TOKEN, PASSWORD):
        assert secret not in text


def test_doctor_masks_the_node_url_and_what_the_node_echoes(config: Path) -> None:
    result = run_bot("-c", str(config), "doctor", timeout=60)
    assert_no_secret(result.stdout + result.stderr)
    node_line = next(line for line in result.stdout.splitlines() if "node reachable" in line)
    assert node_line.startswith("FAIL")
    assert "/v1/[REDACTED]/?[REDACTED]: " in node_line  # the URL as doctor prints it
    assert "no route /v1/[REDACTED]/?api_key=[REDACTED]" in node_line  # the echo, redacted


def test_config_show_masks_the_node_url(config: Path) -> None:
    result = run_bot("-c", str(config), "config", "show", timeout=60)
    assert result.returncode == 0, result.stderr
    assert_no_secret(result.stdout + result.stderr)
    shown = json.loads(result.stdout)["chain"]["node_url"]
    assert shown.startswith("http://[REDACTED]@127.0.0.1:")
    assert shown.endswith("/v1/[REDACTED]/?[REDACTED]")
