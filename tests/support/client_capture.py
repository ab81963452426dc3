"""A PanoraClient whose every request is captured and answered from a fixture body.

`httpx.MockTransport` stands in for the network: nothing leaves the process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import BaseModel, SecretStr

from bot.api import PanoraClient

__all__ = ["Captured", "capturing_client", "unknown_fields"]

KEY = "contract-test-key"


@dataclass
class Captured:
    """The requests a client sent, in order."""

    requests: list[httpx.Request] = field(default_factory=list)

    @property
    def last(self) -> httpx.Request:
        """The most recent request."""
        return self.requests[-1]


async def _no_wait(seconds: float) -> None:
    return None


def capturing_client(
    answer: Any | Callable[[httpx.Request], Any], *, status: int = 200
) -> tuple[PanoraClient, Captured]:
    """A client answered with `answer` (a JSON body, or a function of the request)."""
    captured = Captured()

    def handler(request: httpx.Request) -> httpx.Response:
        captured.requests.append(request)
        body = answer(request) if callable(answer) else answer
        return httpx.Response(
            status, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )

    client = PanoraClient(
        base_url="http://provider.test",
        api_key=SecretStr(KEY),
        transport=httpx.MockTransport(handler),
        rate_limit_per_second=1e6,
        rate_limit_burst=10**6,
        max_attempts=3,
        sleep=_no_wait,
    )
    return client, captured


def unknown_fields(model: BaseModel, path: str = "") -> list[str]:
    """Every field of a parsed body that no model declares, as dotted paths (recursive)."""
    found = [f"{path}{name}" for name in sorted(model.model_extra or {})]
    for name, info in type(model).model_fields.items():
        found += _unknown_in(getattr(model, name), f"{path}{info.alias or name}")
    return found


def _unknown_in(value: Any, path: str) -> list[str]:
    if isinstance(value, BaseModel):
        return unknown_fields(value, path + ".")
    if isinstance(value, list | tuple):
        return sorted({f for item in value for f in _unknown_in(item, path + "[]")})
    return []
