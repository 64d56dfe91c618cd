"""Markdown and HTML: formats whose headings say how the text is organised."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from knowledge_app.parsed import Outline, Parsed, Section, trimmed

_ATX = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)(.*)")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
# Lines that open a block of their own, so a '---' under them is a rule, not a setext heading underline.
_OWN_BLOCK = re.compile(r" {0,3}(?:[-*+>]|\d{1,9}[.)])(?:[ \t]|$)| {4}|\t")


def markdown(text: str) -> Parsed:
    """The Markdown as written (a reader's search hits should quote it verbatim), sectioned by its headings.

    ATX headings (``#`` to ``######``) and setext ones (a line underlined with
    ``===`` or ``---``) count; a ``#`` inside a fenced code block is a comment in
    the code, not a heading. This is not a full CommonMark parser: it finds
    headings, which is all the chunker needs.
    """
    headings: list[tuple[int, str, int, int]] = []  # level, title, where its line starts, where its body starts
    fence = ""
    previous: tuple[int, str] | None = None  # the last line, when it could be a setext heading's text
    position = 0
    for line in text.split("\n"):
        start, position = position, min(position + len(line) + 1, len(text))
        if fence:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
            continue
        if match := _FENCE.match(line):
            fence, previous = match.group(1), None
            continue
        if (match := _ATX.match(line)) and (title := _CLOSING_HASHES.sub("", match.group(2).strip()).strip()):
            headings.append((len(match.group(1)), title, start, position))
            previous = None
            continue
        if (match := _SETEXT.match(line)) and previous:
            headings.append((1 if match.group(1)[0] == "=" else 2, previous[1].strip(), previous[0], position))
            previous = None
            continue
        previous = (start, line) if line.strip() and not _OWN_BLOCK.match(line) else None
    return Parsed(text=text, sections=_sections(text, headings))


def _sections(text: str, headings: list[tuple[int, str, int, int]]) -> list[Section]:
    sections = []
    start, end = trimmed(text, 0, headings[0][2] if headings else len(text))
    if start < end or not headings:
        sections.append(Section((), start, end))
    stack: list[tuple[int, str]] = []
    for index, (level, title, _, body) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        start, end = trimmed(text, body, headings[index + 1][2] if index + 1 < len(headings) else len(text))
        sections.append(Section(tuple(title for _, title in stack), start, end))
    return sections


_SKIPPED = frozenset({"script", "style", "template", "noscript"})
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_BLOCKS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "header",
        "hr",
        "html",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "tfoot",
        "thead",
        "title",
        "tr",
        "ul",
    ]
)
_CELLS = frozenset({"td", "th"})


class _Table:
    """The rows of an HTML table being read, written out when it ends: under a header row (the first, all ``<th>``
    or in ``<thead>``) each row is ``header: value`` lines, as a sheet's or CSV file's are, so a chunk of a long
    table never holds values without their columns' names; without one, a row is its cells joined by `` | ``."""

    def __init__(self) -> None:
        self.rows: list[tuple[list[str], bool]] = []  # cells, and whether the row heads the table
        self.cells: list[str] = []
        self.header_row = True  # every cell of the row so far is a <th> (or the row is in <thead>)
        self.in_head = False

    def end_row(self) -> None:
        if any(self.cells):
            self.rows.append((self.cells, self.header_row))
        self.cells, self.header_row = [], True

    def write(self, outline: Outline) -> None:
        self.end_row()
        header = self.rows[0][0] if len(self.rows) > 1 and self.rows[0][1] else None
        for cells, _ in self.rows[1:] if header else self.rows:
            if header is None:
                outline.paragraph(" | ".join(cell for cell in cells if cell))
                continue
            names = [header[n] if n < len(header) and header[n] else f"column {n + 1}" for n in range(len(cells))]
            outline.paragraph("\n".join(f"{name}: {cell}" for name, cell in zip(names, cells, strict=True) if cell))


class _HtmlText(HTMLParser):
    """Text as a browser lays it out: blocks apart, whitespace collapsed except in ``<pre>``."""

    def __init__(self, outline: Outline | None = None, skipped: frozenset[str] = _SKIPPED) -> None:
        super().__init__(convert_charrefs=True)
        self.outline = outline or Outline()
        self._skipped = skipped
        self._buffer: list[str] = []
        self._skipping = 0
        self._preformatted = 0
        self._heading = 0  # the level of the heading being read, or 0
        self._table: _Table | None = None  # the outermost table being read (one inside a cell is the cell's text)
        self._tables = 0  # how many tables are open
        self._in_cell = False

    def _table_tag(self, tag: str, start: bool) -> bool:
        """Read a tag of the outermost table's structure; whether it was one (else the caller handles it)."""
        if tag == "table":
            self._tables = max(0, self._tables + (1 if start else -1))
            if start and self._tables == 1:
                self._flush()
                self._table = _Table()
            elif not start and self._tables == 0 and self._table is not None:
                self._close_cell()
                self._table.write(self.outline)
                self._table = None
            elif self._in_cell:
                self._buffer.append(" ")
            return True
        table = self._table
        if table is None or self._tables != 1:
            if self._in_cell and (tag in _CELLS or tag in _BLOCKS or tag in _HEADINGS):
                self._buffer.append(" ")  # a block inside a cell (a nested table's cell too) is the cell's text
                return True
            return False
        if tag == "thead":
            table.in_head = start
        elif tag == "tr":
            self._close_cell()
            table.end_row()
        elif tag in _CELLS:
            self._close_cell()
            if start:
                self._in_cell = True
                table.header_row = table.header_row and (tag == "th" or table.in_head)
        elif self._in_cell and (tag in _BLOCKS or tag in _HEADINGS):
            self._buffer.append(" ")
        else:
            return False
        return True

    def _close_cell(self) -> None:
        if self._table is not None and (self._in_cell or "".join(self._buffer).strip()):
            self._table.cells.append(" ".join("".join(self._buffer).split()))
        self._buffer, self._in_cell = [], False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._skipped:
            self._skipping += 1
        elif self._skipping or self._table_tag(tag, start=True):
            return
        elif tag in _HEADINGS:
            self._flush()
            self._heading = _HEADINGS[tag]
        elif tag == "br":
            self._buffer.append("\n")
        elif tag in _BLOCKS:
            self._flush()
            self._preformatted += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag in self._skipped:
            self._skipping = max(0, self._skipping - 1)
        elif self._skipping or self._table_tag(tag, start=False):
            return
        elif tag in _HEADINGS and self._heading:
            title, self._buffer, self._heading = "".join(self._buffer), [], 0
            self.outline.heading(_HEADINGS[tag], title)
        elif tag in _BLOCKS:
            self._flush()
            if tag == "pre":
                self._preformatted = max(0, self._preformatted - 1)

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self._buffer.append(data if self._preformatted else re.sub(r"\s+", " ", data))

    def close(self) -> None:
        super().close()
        self._heading = 0
        if self._table is not None:  # a table never closed ends with the page
            self._close_cell()
            self._table.write(self.outline)
            self._table, self._tables = None, 0
        self._flush()

    def _flush(self) -> None:
        if self._heading:  # a block inside a heading is still the heading
            return
        text, self._buffer = "".join(self._buffer), []
        if not self._preformatted:
            text = "\n".join(" ".join(line.split()) for line in text.split("\n"))
        self.outline.paragraph(text)


def html(text: str) -> Parsed:
    """The visible text of an HTML page, sectioned by ``<h1>``–``<h6>``; scripts and styles are not text."""
    outline = Outline()
    html_into(outline, text)
    return outline.build()


def html_into(outline: Outline, text: str, *, with_head: bool = True) -> None:
    """An HTML page's text added to ``outline``, its headings continuing the outline's (an EPUB's chapters);
    ``with_head=False`` leaves out the ``<head>`` (a chapter's ``<title>`` repeats the book's name)."""
    parser = _HtmlText(outline, _SKIPPED if with_head else _SKIPPED | {"head"})
    parser.feed(text)
    parser.close()
