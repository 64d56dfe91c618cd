"""DOCX, read with python-docx; the zip is checked first, since a few KB can declare gigabytes inside."""

from __future__ import annotations

import io
import re
import zipfile

import docx
from docx.styles.style import CharacterStyle
from docx.table import Table, _Row
from docx.text.paragraph import Paragraph

from cognizes.access import limits
from knowledge_app.parsed import Outline, Parsed, UnreadableDocument

MAX_ZIP_ENTRIES = 10_000  # a real document has dozens; millions of empty entries would still cost memory and time
_HEADING_STYLE = re.compile(r"heading ([1-9])", re.IGNORECASE)


def check_zip(data: bytes) -> None:
    """Refuse what is not a zip, or a zip that would unpack to more than ``limits.max_expanded_bytes()`` (or to
    more XML than ``limits.max_markup_bytes()``).

    The sizes checked are the ones the zip declares, which is enough: ``zipfile``
    (which python-docx reads with) stops at an entry's declared size and fails its
    CRC check rather than inflate past it. python-docx loads every part, images
    included, so they count.
    """
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise UnreadableDocument(
            "not a .docx file (a .docx is a zip archive; a Word 97-2003 .doc must be saved as .docx first)"
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as error:
        raise UnreadableDocument(f"damaged .docx file ({error})") from None
    if len(entries) > MAX_ZIP_ENTRIES:
        raise UnreadableDocument(f"the .docx holds {len(entries)} files, more than the {MAX_ZIP_ENTRIES} allowed")
    expanded, allowed = sum(entry.file_size for entry in entries), limits.max_expanded_bytes()
    if expanded > allowed:
        raise UnreadableDocument(
            f"the .docx would unpack to {-(-expanded >> 20)} MB, more than the "
            f"{allowed >> 20} MB allowed (COGNIZES_KNOWLEDGE_MAX_EXPANDED_BYTES); remove large images or split "
            "the document"
        )
    markup, most_markup = sum(entry.file_size for entry in entries if _is_markup(entry)), limits.max_markup_bytes()
    if markup > most_markup:
        raise UnreadableDocument(
            f"the .docx holds {-(-markup >> 20)} MB of XML, more than the {most_markup >> 20} MB allowed "
            "(COGNIZES_KNOWLEDGE_MAX_MARKUP_BYTES); split the document"
        )


def _is_markup(entry: zipfile.ZipInfo) -> bool:
    """An XML part (the body, styles, relationships), which python-docx parses into a tree; not a media file."""
    return entry.filename.lower().endswith((".xml", ".rels"))


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
