"""PowerPoint (PPTX) with python-pptx and Excel (XLSX) with openpyxl: the standard readers of each format.

Both are small pure-Python libraries on lxml (which python-docx brings already): python-pptx
gives each slide's title placeholder, so a slide is a section under its title; openpyxl
gives the cells' values (``data_only``: a formula's last computed value, as Excel shows it).
markitdown (Microsoft's converter) wraps these same two and writes Markdown, at the cost of
magika and ONNX Runtime for its file-type guess; docling and unstructured add torch or
dozens of packages for layout models these formats do not need.

A table, a slide's or a sheet's, is written as the CSV parser writes one
(``records.csv_rows``): a paragraph per row of ``header: value`` lines. The chunker keeps a
paragraph whole when it fits, so a row is never cut from its header, and each chunk of a
long table carries the header names it needs with every value.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
from collections.abc import Iterable, Iterator
from typing import Any

from cognizes.access import limits
from knowledge_app.formats.archives import check_zip
from knowledge_app.parsed import Outline, Parsed, UnreadableDocument


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return " ".join(str(value).split())


def table_rows(rows: Iterable[Iterable[Any]], outline: Outline) -> None:
    """A table into ``outline``: its first row with text is the header, each row after it a paragraph of
    ``header: value`` lines (a column without a header is named by its letter, ``column C``)."""
    header: list[str] | None = None
    for row in rows:
        values = [_cell(value) for value in row]
        if header is None:
            if any(values):
                header = values
            else:
                limits.check_deadline()  # a sheet of a million empty rows still ends
            continue
        pairs = []
        for index, value in enumerate(values):
            if value:
                name = header[index] if index < len(header) and header[index] else f"column {_letters(index)}"
                pairs.append(f"{name}: {value}")
        outline.paragraph("\n".join(pairs))


def _letters(index: int) -> str:
    """A column's letters as Excel names it: 0 is A, 26 is AA."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


def xlsx_text(data: bytes) -> Parsed:
    """Each visible sheet a section under its name, each table row a paragraph with its header (``table_rows``).
    Hidden sheets, charts, comments and images are not read."""
    check_zip(data, ".xlsx")
    import openpyxl  # imported by the worker when a workbook comes, never by the web process

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        outline = Outline()
        try:
            for sheet in workbook.worksheets:
                if sheet.sheet_state != "visible":
                    continue
                outline.heading(1, sheet.title)
                sheet.reset_dimensions()  # its declared size may be stale or hostile: read only the cells there
                table_rows(sheet.iter_rows(values_only=True), outline)
        finally:
            workbook.close()
    except limits.LimitExceeded:
        raise
    except Exception as error:
        raise UnreadableDocument(f"not a readable Excel workbook ({type(error).__name__}: {error})") from None
    return outline.build()


def pptx_text(data: bytes) -> Parsed:
    """Each slide a section under its title (else "Slide n"): its text boxes top to bottom, left to right, its
    tables as ``table_rows``, then its speaker notes. Charts, images and SmartArt are not read."""
    check_zip(data, ".pptx")
    import pptx  # imported by the worker when a presentation comes, never by the web process

    try:
        presentation = pptx.Presentation(io.BytesIO(data))
        outline = Outline()
        for number, slide in enumerate(presentation.slides, start=1):
            title_shape = slide.shapes.title
            title = title_shape.text_frame.text if title_shape is not None and title_shape.has_text_frame else ""
            outline.heading(1, title if title.strip() else f"Slide {number}")
            for shape in _in_reading_order(slide.shapes):
                if title_shape is not None and shape.shape_id == title_shape.shape_id:
                    continue
                if shape.has_text_frame:
                    for paragraph in shape.text_frame.paragraphs:
                        outline.paragraph(paragraph.text)  # a line break inside it is "\v", a line to splitlines
                elif getattr(shape, "has_table", False) and shape.has_table:
                    table_rows(([cell.text for cell in row.cells] for row in shape.table.rows), outline)
            if slide.has_notes_slide and (notes := slide.notes_slide.notes_text_frame) is not None:
                outline.paragraph(notes.text)
    except limits.LimitExceeded:
        raise
    except Exception as error:
        raise UnreadableDocument(f"not a readable PowerPoint presentation ({type(error).__name__}: {error})") from None
    return dataclasses.replace(outline.build(), pages=len(presentation.slides))  # its slides, shown as pages parsed


def _in_reading_order(shapes: Iterable[Any], depth: int = 0) -> Iterator[Any]:
    """The shapes, those of groups included, top to bottom then left to right (a slide's own order is the order
    they were drawn in, not read in)."""
    placed = sorted(shapes, key=lambda shape: (shape.top or 0, shape.left or 0))
    for shape in placed:
        if shape.shape_type is not None and int(shape.shape_type) == 6 and depth < 10:  # MSO_SHAPE_TYPE.GROUP
            yield from _in_reading_order(shape.shapes, depth + 1)
        else:
            yield shape
