"""Packaging: every source folder is a regular package, so a non-editable install has it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_source_folder_has_an_init() -> None:
    missing = [
        str(folder.relative_to(ROOT))
        for top in ("bot", "strategies")
        for folder in [ROOT / top, *(ROOT / top).rglob("*")]
        if folder.is_dir()
        and folder.name != "__pycache__"
        and any(folder.glob("*.py"))
        and not (folder / "__init__.py").exists()
    ]
    assert missing == []
