"""Plain rows of bulk journal reads (pure: no database library).

`FillRow` is a fill as `bot.journal.fills_read` reads many at once: the fields of
`bot.journal.views.FillView`, in its order, as a named tuple (a tenth of the cost of a
frozen dataclass to make, for a year of fills).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import NamedTuple

__all__ = ["FillRow"]


class FillRow(NamedTuple):
    """One stored fill (`FillView`'s fields, in its order; a test keeps them equal)."""

    tx_id: str
    type: str
    tx_number: int | None
    from_amount: Decimal | None
    to_amount: Decimal | None
    fee_amount: Decimal | None
    time: datetime | None
    keeper: str | None
    price_to_per_from: Decimal | None
    from_amount_usd: Decimal | None
    to_amount_usd: Decimal | None
    fee_amount_usd: Decimal | None
    recorded_at: datetime
