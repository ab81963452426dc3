"""Read a report page back as a user's browser would: its title, headings and tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Table:
    """One `<table>`: its CSS class, header cells and rows (cell texts, row classes)."""

    css: str
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    row_classes: list[str] = field(default_factory=list)


class PageReader(HTMLParser):
    """Collects the text of `<title>`, `<h1>`, `<h2>`, `<li>` in `.warnings`, and tables."""

    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.h1: list[str] = []
        self.h2: list[str] = []
        self.warnings: list[str] = []
        self.tables: list[Table] = []
        self.links: list[str] = []
        self._text: list[str] | None = None
        self._into: str | None = None
        self._in_warnings = False
        self._row: list[str] | None = None
        self._in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Open a collected element."""
        found = dict(attrs)
        if tag == "div" and found.get("class") == "warnings":
            self._in_warnings = True
        if tag == "a" and found.get("href"):
            self.links.append(found["href"] or "")
        if tag == "table":
            self.tables.append(Table(found.get("class") or ""))
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr":
            self._row = []
            if not self._in_head:
                self.tables[-1].row_classes.append(found.get("class") or "")
        elif tag in ("td", "th") and self._row is not None:
            self._text, self._into = [], "cell"
        elif tag in ("title", "h1", "h2") or (tag == "li" and self._in_warnings):
            self._text, self._into = [], tag

    def handle_endtag(self, tag: str) -> None:
        """Close a collected element."""
        if tag == "div":
            self._in_warnings = False
        elif tag == "thead":
            self._in_head = False
        elif tag in ("td", "th") and self._row is not None and self._text is not None:
            self._row.append("".join(self._text).strip())
            self._text = None
        elif tag == "tr" and self._row is not None:
            table = self.tables[-1]
            if self._in_head:
                table.header = self._row
            else:
                table.rows.append(self._row)
            self._row = None
        elif self._text is not None and tag == self._into:
            text = "".join(self._text).strip()
            if tag == "title":
                self.title = text
            elif tag == "h1":
                self.h1.append(text)
            elif tag == "h2":
                self.h2.append(text)
            else:
                self.warnings.append(text)
            self._text = None

    def handle_data(self, data: str) -> None:
        """Text inside a collected element."""
        if self._text is not None:
            self._text.append(data)


def read_page(text: str) -> PageReader:
    """The page's collected parts."""
    reader = PageReader()
    reader.feed(text)
    reader.close()
    return reader
