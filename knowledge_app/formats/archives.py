"""Zip-based documents (DOCX, PPTX, XLSX, EPUB): the zip checked before any of it is unpacked, since a few KB can
declare gigabytes inside."""

from __future__ import annotations

import io
import zipfile

from cognizes.access import limits
from knowledge_app.parsed import UnreadableDocument

MAX_ZIP_ENTRIES = 10_000  # a real document has dozens; millions of empty entries would still cost memory and time


_NOT_A_ZIP = {
    ".docx": "a Word 97-2003 .doc must be saved as .docx first",
    ".pptx": "a PowerPoint 97-2003 .ppt must be saved as .pptx first",
    ".xlsx": "an Excel 97-2003 .xls must be saved as .xlsx first",
}


def check_zip(data: bytes, kind: str = ".docx") -> None:
    """Refuse what is not a zip, or a zip that would unpack to more than ``limits.max_expanded_bytes()`` (or to
    more XML than ``limits.max_markup_bytes()``). ``kind`` names the format in the reason (every zip-based format
    taken, OOXML and EPUB, is checked here).

    The sizes checked are the ones the zip declares, which is enough: ``zipfile``
    (which python-docx, python-pptx and openpyxl read with) stops at an entry's declared size and fails its
    CRC check rather than inflate past it. python-docx loads every part, images
    included, so they count.
    """
    if not zipfile.is_zipfile(io.BytesIO(data)):
        older = f"; {_NOT_A_ZIP[kind]}" if kind in _NOT_A_ZIP else ""
        raise UnreadableDocument(f"not a {kind} file (a {kind} is a zip archive{older})")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as error:
        raise UnreadableDocument(f"damaged {kind} file ({error})") from None
    if len(entries) > MAX_ZIP_ENTRIES:
        raise UnreadableDocument(f"the {kind} holds {len(entries)} files, more than the {MAX_ZIP_ENTRIES} allowed")
    expanded, allowed = sum(entry.file_size for entry in entries), limits.max_expanded_bytes()
    if expanded > allowed:
        raise UnreadableDocument(
            f"the {kind} would unpack to {-(-expanded >> 20)} MB, more than the "
            f"{allowed >> 20} MB allowed (COGNIZES_KNOWLEDGE_MAX_EXPANDED_BYTES); remove large images or split "
            "the document"
        )
    markup, most_markup = sum(entry.file_size for entry in entries if _is_markup(entry)), limits.max_markup_bytes()
    if markup > most_markup:
        raise UnreadableDocument(
            f"the {kind} holds {-(-markup >> 20)} MB of XML, more than the {most_markup >> 20} MB allowed "
            "(COGNIZES_KNOWLEDGE_MAX_MARKUP_BYTES); split the document"
        )


def _is_markup(entry: zipfile.ZipInfo) -> bool:
    """An XML part (the body, styles, relationships, an EPUB's chapters), parsed into a tree; not a media file."""
    return entry.filename.lower().endswith((".xml", ".rels", ".xhtml", ".html", ".htm", ".opf", ".ncx"))
