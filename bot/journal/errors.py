"""`JournalError`: every refusal or failure of the journal store."""

from __future__ import annotations

__all__ = ["JournalError", "JournalUnusable"]


class JournalError(Exception):
    """A refused or failed journal operation (illegal move, conflict, closed, read-only…)."""


class JournalUnusable(JournalError):
    """The journal cannot be used by this bot at all.

    Not a SQLite database, damaged, or at a schema revision this code does not know
    (written by a newer bot). Nothing retries it or writes to it; the message is one line
    naming the journal (its file, or its URL without the password) and what to do.
    """
