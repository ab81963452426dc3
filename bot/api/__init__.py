"""The provider's HTTP API: typed models, request rules, errors and the async client."""

from bot.api.client import PanoraClient, SwapResponse
from bot.api.errors import (
    ApiError,
    BadRequest,
    MalformedResponse,
    NoRoute,
    NotFound,
    NotSent,
    OutcomeUnknown,
    RateLimited,
    RequestRuleError,
    ResponseError,
    ServerError,
    Unauthorized,
    UnexpectedStatus,
)
from bot.api.models import OrderFilter
from bot.api.params import (
    CancelOrderRequest,
    DcaCreateRequest,
    GetOrdersRequest,
    LimitCreateRequest,
    SwapRequest,
)

__all__ = [
    "ApiError",
    "BadRequest",
    "CancelOrderRequest",
    "DcaCreateRequest",
    "GetOrdersRequest",
    "LimitCreateRequest",
    "MalformedResponse",
    "NoRoute",
    "NotFound",
    "NotSent",
    "OrderFilter",
    "OutcomeUnknown",
    "PanoraClient",
    "RateLimited",
    "RequestRuleError",
    "ResponseError",
    "ServerError",
    "SwapRequest",
    "SwapResponse",
    "Unauthorized",
    "UnexpectedStatus",
]
