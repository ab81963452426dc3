"""The one error the application raises to stop a verb: a usage or configuration problem."""

from __future__ import annotations

__all__ = ["SetupError"]


class SetupError(Exception):
    """A problem the user fixes in the config, a file or the command line; nothing was done.

    Its message is for the person (one line per problem, no secret); the command line
    prints it as `bot: error: …` and exits 2.
    """
