"""The root of the bot's errors, and the one meaning the API and chain trees share.

```
BotError
├── NotSent                 certainly not sent: the request never reached the server
│   │                       (connection refused, connect or pool timeout); retrying is safe
│   ├── ApiNotSent          (bot.api.errors) the provider was not reached; also an ApiError
│   └── NodeNotSent         (bot.chain.errors) the node was not reached; also a
│                           NodeUnavailable, hence a ChainError
├── ApiError                (bot.api.errors) the provider's HTTP API, sorted by what to do next
└── ChainError              (bot.chain.errors) the node and the signer, likewise
```

`except NotSent` catches a request that did not leave, whichever service it was for;
`except ApiError` / `except ChainError` still catch their own tree's, so a handler keeps
the scope it had. `NotSent` itself is never raised: each tree raises its own subclass, so
it stays inside that tree's `except` clauses.

An outcome that is not known is never a `NotSent`: the API's `OutcomeUnknown` and the
chain's `SubmitOutcomeUnknown` (sent, no complete answer) are reconciled, never blindly
retried, and neither derives from `NotSent` (a unit test holds that).
"""

from __future__ import annotations

from typing import Any, Self

__all__ = ["BotError", "NotSent"]


class BotError(Exception):
    """Base of the errors the bot's API and chain clients raise."""


class NotSent(BotError):
    """The request certainly never reached the server: retrying it is safe.

    Raised only as its tree's subclass (`bot.api.errors.ApiNotSent`,
    `bot.chain.errors.NodeNotSent`); catch it by this name.

    Attributes:
        endpoint: `METHOD path` of the request (set by the subclass).
    """

    endpoint: str

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """Refuse `NotSent` itself; its subclasses are built as usual."""
        if cls is NotSent:
            raise TypeError(
                "NotSent is raised as its tree's class (ApiNotSent, NodeNotSent), so that "
                "`except ApiError` / `except ChainError` keep catching it"
            )
        return super().__new__(cls, *args, **kwargs)
