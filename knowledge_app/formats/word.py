"""DOCX, read with python-docx; the zip is checked first (``archives.check_zip``)."""

from __future__ import annotations

import io
import re

import docx
from docx.oxml.ns import qn
from docx.styles.style import CharacterStyle
from docx.table import Table, _Row
from docx.text.paragraph import Paragraph

from cognizes.access import limits
from knowledge_app.formats.archives import MAX_ZIP_ENTRIES, check_zip
from knowledge_app.formats.office import table_rows
from knowledge_app.parsed import Outline, Parsed, UnreadableDocument

__all__ = ["MAX_ZIP_ENTRIES", "docx_text"]

_HEADING_STYLE = re.compile(r"heading ([1-9])", re.IGNORECASE)


def _heading_level(style: CharacterStyle | None) -> int:
    """1-9 for a paragraph in a ``Heading n`` style, or in a custom style based on one; 0 otherwise.

    Word stores built-in style names in English whatever the language of its
    interface, so "Heading 1" is found in a German document too.
    """
    for _ in range(10):  # styles chain through base_style; a cycle in a hostile file must not loop forever
        if style is None:
            return 0
        if match := _HEADING_STYLE.fullmatch(style.name or ""):
            return int(match.group(1))
        style = style.base_style
    return 0


def _grid_cells(row: _Row) -> list[str]:
    """The text of each grid column of the row; a merged cell, which python-docx repeats once per column it spans,
    counts in its first column, the others empty (so values stay under their columns' headers)."""
    cells, seen = [], set()
    for cell in row.cells:
        cells.append("" if cell._tc in seen else " ".join(cell.text.split()))
        seen.add(cell._tc)
    return cells


def _repeats_as_header(row: _Row) -> bool:
    """Word's "Repeat as header row at the top of each page" (``w:tblHeader``): the author's word that it heads."""
    properties = row._tr.trPr
    flag = properties.find(qn("w:tblHeader")) if properties is not None else None
    return flag is not None and flag.get(qn("w:val"), "true") not in ("0", "false", "off")


def docx_text(data: bytes) -> Parsed:
    """Body paragraphs and tables in document order; ``Heading n`` paragraphs head sections, a table row is a
    paragraph of its cells (under a row marked to repeat as the header: ``header: value`` lines, as a sheet's).
    Headers, footers, footnotes, comments and text boxes are not read."""
    check_zip(data)
    try:
        document = docx.Document(io.BytesIO(data))
        outline = Outline()
        for block in document.iter_inner_content():
            if isinstance(block, Paragraph):
                level = _heading_level(block.style)
                if level:
                    outline.heading(level, block.text)
                else:
                    outline.paragraph(block.text)
            elif isinstance(block, Table):
                rows = list(block.rows)
                if len(rows) > 1 and _repeats_as_header(rows[0]):
                    table_rows(map(_grid_cells, rows), outline)  # as a sheet's: each row under its headers
                else:
                    for row in rows:
                        outline.paragraph(" | ".join(text for text in _grid_cells(row) if text))
    except limits.LimitExceeded:
        raise
    except Exception as error:
        raise UnreadableDocument(f"not a readable Word document ({type(error).__name__}: {error})") from None
    return outline.build()
