"""The real material of the contract tests, read from `tests/contract/fixtures/` only.

Each file is described in `tests/contract/PROVENANCE.md` (where from, which version, what
was trimmed). `*.form.json` bodies are forms rebuilt from the SDK's TypeScript types, not
recorded answers; `*.request.json` files are request forms read from the SDK's code and
Panora's docs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.money import loads_exact

__all__ = ["FIXTURES", "PROVENANCE", "fixture", "fixture_exact", "request_form"]

CONTRACT = Path(__file__).resolve().parents[1] / "contract"
FIXTURES = CONTRACT / "fixtures"
PROVENANCE = CONTRACT / "PROVENANCE.md"


def fixture(name: str) -> Any:
    """A fixture body as plain JSON (`prices/docs_example_usdc.json`)."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def fixture_exact(name: str) -> Any:
    """A fixture body parsed the way the client parses answers (numbers exact)."""
    return loads_exact((FIXTURES / name).read_bytes())


def request_form(name: str) -> dict[str, Any]:
    """A request form (`swap/post_swap.request.json`)."""
    form: dict[str, Any] = fixture(name)
    return form
