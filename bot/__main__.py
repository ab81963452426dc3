"""`python -m bot`: the same as the `bot` console script."""

from bot.cli import main

main()
