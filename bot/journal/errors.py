"""`JournalError`: every refusal or failure of the journal store."""

from __future__ import annotations

__all__ = ["JournalError"]


class JournalError(Exception):
    """A refused or failed journal operation (illegal move, conflict, closed, read-only…)."""
