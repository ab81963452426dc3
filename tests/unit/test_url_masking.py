"""Node/provider URLs with a key in the path, the query or the user info are masked.

`mask_url` for what is printed (`bot doctor`, `bot config show`), `register_url_secrets`
for the log redactor.
"""

from __future__ import annotations

import io
import json

import pytest

from bot.logging import configure_logging, get_logger, mask_url, register_url_secrets, url_secrets

TOKEN = "TOKEN123abcDEF456"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"https://fullnode.example/v1/{TOKEN}/", "https://fullnode.example/v1/[REDACTED]/"),
        ("https://fullnode.example/v1/TOKEN123/", "https://fullnode.example/v1/[REDACTED]/"),
        (
            f"https://rpc.example/http/aptos/{'ab12' * 16}/v1",
            "https://rpc.example/http/aptos/[REDACTED]/v1",
        ),
        (f"https://node.example/v1?api_key={TOKEN}", "https://node.example/v1?[REDACTED]"),
        (
            f"https://user:{TOKEN}@node.example:8443/v1",
            "https://[REDACTED]@node.example:8443/v1",
        ),
        ("https://api.mainnet.aptoslabs.com/v1", "https://api.mainnet.aptoslabs.com/v1"),
        ("http://127.0.0.1:8080/aptos-mainnet/v1/", "http://127.0.0.1:8080/aptos-mainnet/v1/"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
        ("http://node.example:99999/v1", "[REDACTED]"),  # unreadable: shown as nothing
    ],
)
def test_mask_url_hides_credentials_and_keeps_the_service(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_url_secrets_names_each_credential_as_written_and_decoded() -> None:
    url = f"https://me:{TOKEN}@node.example/v1/{TOKEN}%2Fx/?key={TOKEN}Q&flag"
    found = url_secrets(url)
    assert {TOKEN, f"{TOKEN}%2Fx", f"{TOKEN}/x", f"{TOKEN}Q", "flag", "me"} <= set(found)
    assert "v1" not in found and "node.example" not in found


def test_a_registered_node_url_never_reaches_the_logs() -> None:
    url = f"https://fullnode.example/v1/{TOKEN}/?api_key=QueryKey987654"
    register_url_secrets(url)
    out = io.StringIO()
    configure_logging(fmt="json", level="info", stream=out)
    get_logger("test").warning("node.down", url=url, error=f"GET {url}accounts failed")
    line = json.loads(out.getvalue())
    assert TOKEN not in out.getvalue() and "QueryKey987654" not in out.getvalue()
    assert line["url"].startswith("https://fullnode.example/v1/[REDACTED]/")
