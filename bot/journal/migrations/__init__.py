"""Alembic migrations of the journal (run through `bot.journal.migrate`, no alembic.ini)."""
