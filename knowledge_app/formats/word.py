"""DOCX, read with python-docx; the zip is checked first (``archives.check_zip``)."""

from __future__ import annotations

import io
import re

import docx
from docx.styles.style import CharacterStyle
from docx.table import Table, _Row
from docx.text.paragraph import Paragraph

from cognizes.access import limits
from knowledge_app.formats.archives import MAX_ZIP_ENTRIES, check_zip
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


def _row_text(row: _Row) -> str:
    cells, seen = [], set()
    for cell in row.cells:
        if cell._tc not in seen:  # a merged cell is repeated once per grid column it spans
            seen.add(cell._tc)
            cells.append(" ".join(cell.text.split()))
    return " | ".join(text for text in cells if text)


def docx_text(data: bytes) -> Parsed:
    """Body paragraphs and tables in document order; ``Heading n`` paragraphs head sections, a table row is a
    paragraph of its cells. Headers, footers, footnotes, comments and text boxes are not read."""
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
                for row in block.rows:
                    outline.paragraph(_row_text(row))
    except limits.LimitExceeded:
        raise
    except Exception as error:
        raise UnreadableDocument(f"not a readable Word document ({type(error).__name__}: {error})") from None
    return outline.build()
