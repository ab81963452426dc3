from __future__ import annotations

import pytest

from bot.api.errors import (
    ApiError,
    BadRequest,
    NotFound,
    RateLimited,
    RequestRuleError,
    ResponseError,
    ServerError,
    Unauthorized,
    UnexpectedStatus,
    error_for_status,
)
from bot.money import loads_exact


def spec_body(status: int, message: str) -> str:
    return f'{{"statusCode": {status}, "message": "{message}", "status": "fail"}}'


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, BadRequest),
        (401, Unauthorized),
        (404, NotFound),
        (429, RateLimited),
        (500, ServerError),
        (503, ServerError),
        (418, UnexpectedStatus),
    ],
)
def test_status_mapping(status: int, cls: type[ResponseError]) -> None:
    text = spec_body(status, "nope")
    error = error_for_status(status, text, loads_exact(text), endpoint="POST /swap")
    assert type(error) is cls
    assert isinstance(error, ApiError)
    assert error.status_code == status
    assert error.server_message == "nope"
    assert error.endpoint == "POST /swap"
    assert str(error) == f"POST /swap: HTTP {status}: nope"


def test_rate_limited_carries_retry_after() -> None:
    text = spec_body(429, "Too many requests")
    error = error_for_status(429, text, loads_exact(text), endpoint="GET /prices", retry_after=12.0)
    assert isinstance(error, RateLimited)
    assert error.retry_after == 12.0


def test_internal_server_error_message() -> None:
    text = spec_body(500, "internal server error")
    error = error_for_status(500, text, loads_exact(text), endpoint="GET /swap/quote")
    assert error.server_message == "internal server error"
    assert error.body == {"statusCode": 500, "message": "internal server error", "status": "fail"}


@pytest.mark.parametrize(
    ("text", "body", "expected"),
    [
        ("<html>Bad Gateway</html>\n", None, "<html>Bad Gateway</html>"),
        ('{"error": "boom"}', {"error": "boom"}, '{"error": "boom"}'),
        ('{"message": 5}', {"message": 5}, '{"message": 5}'),
        ("   ", None, "(empty body)"),
    ],
)
def test_message_falls_back_to_raw_text(text: str, body: object, expected: str) -> None:
    error = error_for_status(502, text, body, endpoint="POST /dca/v1/getOrders")
    assert isinstance(error, ServerError)
    assert error.server_message == expected


def test_raw_text_message_truncated() -> None:
    error = error_for_status(400, "x" * 5000, None, endpoint="GET /prices")
    assert error.server_message == "x" * 500


def test_request_rule_error_is_value_error() -> None:
    error = RequestRuleError("slippagePercentage", "must be between 0 and 100")
    assert isinstance(error, ValueError)
    assert isinstance(error, ApiError)
    assert error.field == "slippagePercentage"
    assert str(error) == "slippagePercentage: must be between 0 and 100"
    with pytest.raises(ValueError):
        raise error
