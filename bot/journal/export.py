"""Export: journal tables as CSV or JSON, with their stored (exact text) values.

A journal opened for a wallet exports that wallet's rows (and every price tick: market
data is shared); one opened for no wallet, the whole database.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import Any, Final, Literal, TextIO

from sqlalchemy import Select, Table, Text, TypeDecorator, select, type_coerce

from bot.journal.base import JournalBase
from bot.journal.errors import JournalError
from bot.journal.models import journal_metadata

__all__ = ["EXPORT_TABLES", "ExportMixin"]

EXPORT_TABLES: Final = (
    "intents",
    "intent_transitions",
    "orders",
    "order_transitions",
    "fills",
    "transactions",
    "swap_fills",
    "price_ticks",
    "strategy_state",
    "commands",
    "daemons",
)
_OWNER_COLUMN: Final = {
    "intents": "wallet",
    "orders": "wallet",
    "transactions": "sender",
    "strategy_state": "wallet",
    "commands": "wallet",
    "daemons": "wallet",
}
"""The column naming each wallet-owned table's wallet."""
_PARENT: Final = {
    "intent_transitions": ("intent_id", "intents"),
    "swap_fills": ("intent_id", "intents"),
    "order_transitions": ("order_row_id", "orders"),
    "fills": ("order_row_id", "orders"),
}
"""The tables whose wallet is their parent row's: (their key to it, the parent table)."""


class ExportMixin(JournalBase):
    """Writing tables out for people and other tools."""

    def export(
        self,
        format: Literal["csv", "json"],
        out: TextIO,
        tables: Iterable[str] | None = None,
    ) -> dict[str, int]:
        """Write tables with their stored values (exact text) to `out`.

        CSV: per table a line `# table <name>`, a header line, the rows, a blank line;
        NULL is an empty field. JSON: `{"<table>": [{column: value, …}, …], …}`; TEXT
        columns are strings, integer columns numbers, NULL is null.

        Returns:
            rows written per table.

        Raises:
            JournalError: an unknown format or table name.
        """
        names = list(EXPORT_TABLES if tables is None else tables)
        unknown = [n for n in names if n not in EXPORT_TABLES]
        if unknown:
            raise JournalError(f"unknown tables {unknown}; known: {', '.join(EXPORT_TABLES)}")
        if format not in ("csv", "json"):
            raise JournalError(f"export format must be csv or json, got {format!r}")
        counts: dict[str, int] = {}
        data: dict[str, list[dict[str, Any]]] = {}
        writer = csv.writer(out, lineterminator="\n")
        with self.engine.connect() as conn:
            for name in names:
                table = journal_metadata.tables[name]
                columns = [
                    type_coerce(c, Text()).label(c.name) if isinstance(c.type, TypeDecorator) else c
                    for c in table.columns
                ]
                query = self._own_rows(table, select(*columns)).order_by(*table.primary_key.columns)
                rows = conn.execute(query).all()
                counts[name] = len(rows)
                header = [c.name for c in table.columns]
                if format == "csv":
                    out.write(f"# table {name}\n")
                    writer.writerow(header)
                    for row in rows:
                        writer.writerow(["" if v is None else v for v in row])
                    out.write("\n")
                else:
                    data[name] = [dict(zip(header, row, strict=True)) for row in rows]
        if format == "json":
            json.dump(data, out, indent=2, ensure_ascii=False)
            out.write("\n")
        return counts

    def _own_rows(self, table: Table, query: Select[Any]) -> Select[Any]:
        """`query` of `table` limited to this journal's wallet (all rows: no wallet)."""
        wallet = self.wallet
        if wallet is None:
            return query
        owner = _OWNER_COLUMN.get(table.name)
        if owner is not None:
            return query.where(table.c[owner] == wallet)
        if table.name in _PARENT:
            link, parent_name = _PARENT[table.name]
            parent = journal_metadata.tables[parent_name]
            own = select(parent.c.id).where(parent.c[_OWNER_COLUMN[parent_name]] == wallet)
            return query.where(table.c[link].in_(own))
        return query  # market data (price ticks): shared
