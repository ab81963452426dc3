"""`BearerAuth` at the ASGI level: what passes, what is answered without the app."""

from __future__ import annotations

from typing import Any

from bot.console.access import BearerAuth, FailedAuthLimit

Message = dict[str, Any]


class App:
    def __init__(self) -> None:
        self.called: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.called.append(scope["type"])


async def _run(scope: Message) -> tuple[App, list[Message]]:
    app = App()
    auth = BearerAuth(app, token="s3cret", limit=FailedAuthLimit(lambda: 0.0))
    sent: list[Message] = []

    async def receive() -> Message:
        raise AssertionError("the middleware never reads a refused request")

    async def send(message: Any) -> None:
        sent.append(message)

    await auth(scope, receive, send)
    return app, sent


def _http(path: str, *headers: tuple[bytes, bytes]) -> Message:
    return {"type": "http", "path": path, "headers": list(headers), "client": ("10.1.2.3", 5)}


async def test_the_right_token_passes() -> None:
    app, sent = await _run(_http("/api/v1/status", (b"authorization", b"Bearer s3cret")))
    assert app.called == ["http"] and sent == []


async def test_anything_else_is_401_without_the_app() -> None:
    for headers in ((), ((b"authorization", b"Bearer s3cre"),), ((b"authorization", b"s3cret"),)):
        app, sent = await _run(_http("/api/v1/status", *headers))
        assert app.called == []
        assert sent[0]["status"] == 401 and sent[1]["body"] == b'{"detail": "unauthorized"}'


async def test_schema_pages_and_lifespan_pass_websockets_are_closed() -> None:
    for path in ("/docs", "/openapi.json"):
        app, _ = await _run(_http(path))
        assert app.called == ["http"]
    app, _ = await _run({"type": "lifespan"})
    assert app.called == ["lifespan"]
    app, sent = await _run({"type": "websocket", "path": "/api/v1/status", "headers": []})
    assert app.called == [] and sent == [{"type": "websocket.close", "code": 1008}]
