"""Where the tests' reference data lives: a copy inside the repository (tests/fixtures).

One constant, so no test reaches outside the clone (`../shared`): see tests/fixtures/README.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

FIXTURES: Final = Path(__file__).resolve().parents[1] / "fixtures" / "shared"
"""The reference data: `aptos/` (ABIs, txData, a signing vector), `panora/` (token list)."""
