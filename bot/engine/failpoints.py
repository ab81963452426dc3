"""Named crash points for the crash-window tests (`BOT_FAILPOINT=<name>`).

`hit(name)` kills the process with SIGKILL — no cleanup, no flush, exactly like a power
cut — when the environment names that point. Unset (always, in production), it does
nothing. The points: `after_intent` (the intent is committed, nothing sent),
`after_send` (the request is in flight), `after_response` (answered, not yet recorded),
`before_submit` (signed and the hash recorded, bytes not sent), `after_order` (a create's
order journaled, the intent not yet confirmed).
"""

from __future__ import annotations

import os
import signal

__all__ = ["POINTS", "hit"]

POINTS = frozenset({"after_intent", "after_send", "after_response", "before_submit", "after_order"})
_ENV = "BOT_FAILPOINT"


def hit(name: str) -> None:
    """Die here, at once, if `BOT_FAILPOINT` names this point."""
    if os.environ.get(_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def armed(name: str) -> bool:
    """True when `BOT_FAILPOINT` names this point (for points that need setting up)."""
    return os.environ.get(_ENV) == name
