"""A file's bytes into text with structure: ``parse(data, filename=..., mime_type=...) -> Parsed``; and what an
upload must be to be taken at all: ``check_upload``.

Pure and database-free, so ingestion can run it in a worker and tests can run it
on bytes they make. The format is chosen by the file's extension first, because
a browser's or client's MIME type is often generic (``application/octet-stream``)
or wrong, then by the MIME type. Anything that gives no text raises
``UnreadableDocument`` with a reason meant for the person who uploaded the file.

``FORMATS`` is the one statement of what is taken: an upload is checked against it in the
request (``check_upload``: a type not taken, or bytes that are not what the name says, are
refused before anything is stored, issue 44), and a worker parses by it. Each format's
parser is imported when a document of it is first parsed, never by the web process, which
only checks signatures (``knowledge_app.formats.signatures``).
"""

from __future__ import annotations

import codecs
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from knowledge_app.formats import ocr, records, signatures
from knowledge_app.parsed import Parsed, Section, UnreadableDocument, trimmed

__all__ = [
    "FORMATS",
    "Parsed",
    "Section",
    "UnreadableDocument",
    "UnsupportedFormat",
    "WrongContent",
    "check_format",
    "check_upload",
    "decode_text",
    "parse",
]


class UnsupportedFormat(UnreadableDocument):
    """A file of a type no parser here takes (an upload answers 415 with the types taken)."""


class WrongContent(UnreadableDocument):
    """A file whose bytes are not the type its name or MIME type declares (an upload answers 400)."""


_NOT_TEXT = (
    "a binary file, not text (or text in an encoding other than UTF-8 or UTF-16: save it as UTF-8 and upload it again)"
)


def decode_text(data: bytes) -> str:
    """Bytes of a text file as ``str``, with line ends made ``\\n``.

    UTF-8 (with or without its BOM) is what nearly every tool writes; UTF-16 and
    UTF-32 are taken only with a BOM, since without one they cannot be told from
    binary. A legacy single-byte encoding is refused rather than guessed: a wrong
    guess would index mojibake that no query ever matches. NUL never occurs in
    text, so it marks a binary file even when the bytes happen to decode.
    """
    boms = (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16: its BOM begins with UTF-16 LE's
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    )
    encoding = next((encoding for bom, encoding in boms if data.startswith(bom)), None)
    if encoding is None:
        encoding = "utf-8"
        if b"\x00" in data:
            raise UnreadableDocument(_NOT_TEXT)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        raise UnreadableDocument(_NOT_TEXT) from None
    if "\x00" in text:
        raise UnreadableDocument(_NOT_TEXT)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _plain(data: bytes) -> Parsed:
    text = decode_text(data)
    start, end = trimmed(text, 0, len(text))
    return Parsed(text=text, sections=[Section((), start, end)], whole_lines=records.are_json_lines(text))


def _is_text(data: bytes) -> bool:
    try:
        decode_text(data)
    except UnreadableDocument:
        return False
    return True


@dataclass(frozen=True)
class Format:
    """One kind of file taken: how it is named, how its bytes begin, and the parser that reads it."""

    label: str
    """What a person calls it, in messages ("a PDF")."""
    extensions: tuple[str, ...]
    mime_types: tuple[str, ...]
    parser: str | Callable[[bytes], Parsed]
    """``module:function`` of ``knowledge_app.formats``, imported when first used (the web process checks uploads
    by ``FORMATS`` and never loads a parser), or the function; it takes the bytes, or their text if ``decoded``."""
    matches: Callable[[bytes], bool] = _is_text
    """Whether bytes are of this format (``signatures``); text formats: UTF-8 or UTF-16/32 with a BOM."""
    needs_ocr: bool = False
    """Taken only when OCR is on (``knowledge_app.formats.ocr``)."""
    decoded: bool = False
    """The parser takes the decoded text rather than the bytes."""

    def parse(self, data: bytes) -> Parsed:
        convert: Any = self.parser  # takes bytes or str, as ``decoded`` says
        if isinstance(convert, str):
            module, _, function = convert.partition(":")
            convert = getattr(importlib.import_module(f"knowledge_app.formats.{module}"), function)
        parsed: Parsed = convert(decode_text(data)) if self.decoded else convert(data)
        return parsed


_OOXML = "application/vnd.openxmlformats-officedocument"
FORMATS: dict[str, Format] = {
    "text": Format("a text file", (".txt", ".text"), ("text/plain",), _plain),
    "markdown": Format(
        "a Markdown file", (".md", ".markdown"), ("text/markdown", "text/x-markdown"), "markup:markdown", decoded=True
    ),
    "html": Format(
        "an HTML page",
        (".html", ".htm", ".xhtml"),
        ("text/html", "application/xhtml+xml"),
        "markup:html",
        decoded=True,
    ),
    "json": Format("a JSON file", (".json",), ("application/json", "text/json"), "records:json_document", decoded=True),
    "jsonl": Format(
        "a JSON Lines file",
        (".jsonl", ".ndjson"),
        ("application/jsonl", "application/x-jsonlines", "application/x-ndjson", "application/jsonlines"),
        "records:json_lines",
        decoded=True,
    ),
    "csv": Format("a CSV file", (".csv",), ("text/csv", "application/csv"), "records:csv_rows", decoded=True),
    "pdf": Format("a PDF", (".pdf",), ("application/pdf",), "pdf:pdf", signatures.is_pdf),
    "docx": Format(
        "a Word document (.docx)",
        (".docx",),
        (f"{_OOXML}.wordprocessingml.document",),
        "word:docx_text",
        signatures.zip_with("[Content_Types].xml", "word/document.xml"),
    ),
    "pptx": Format(
        "a PowerPoint presentation (.pptx)",
        (".pptx",),
        (f"{_OOXML}.presentationml.presentation",),
        "office:pptx_text",
        signatures.zip_with("[Content_Types].xml", "ppt/presentation.xml"),
    ),
    "xlsx": Format(
        "an Excel workbook (.xlsx)",
        (".xlsx", ".xlsm"),
        (f"{_OOXML}.spreadsheetml.sheet", "application/vnd.ms-excel.sheet.macroenabled.12"),
        "office:xlsx_text",
        signatures.zip_with("[Content_Types].xml", "xl/workbook.xml"),
    ),
    "epub": Format(
        "an EPUB book",
        (".epub",),
        ("application/epub+zip",),
        "epub:epub_text",
        signatures.zip_with("META-INF/container.xml"),
    ),
    "image": Format(
        "an image",
        (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp"),
        ("image/png", "image/jpeg", "image/tiff", "image/bmp", "image/webp"),
        "ocr:image_text",
        signatures.is_image,
        needs_ocr=True,
    ),
}


def _taken() -> str:
    extensions = [ext for fmt in FORMATS.values() if not fmt.needs_ocr or ocr.enabled() for ext in fmt.extensions]
    return ", ".join(extensions)


def check_format(*, filename: str, mime_type: str = "") -> str:
    """The name of the format a file of this name and MIME type is read as; ``UnsupportedFormat`` if none."""
    return _format(filename, mime_type)


def _format(filename: str, mime_type: str) -> str:
    extension = os.path.splitext(filename)[1].lower()
    mime = mime_type.split(";")[0].strip().lower()
    for by_extension in (True, False):
        for name, fmt in FORMATS.items():
            if extension in fmt.extensions if by_extension else mime in fmt.mime_types:
                if fmt.needs_ocr and (why := ocr.unavailable()):
                    raise UnsupportedFormat(
                        f"{fmt.label} is read only with OCR (text recognition): {why}; the formats taken are {_taken()}"
                    )
                return name
    what = f"{extension!r} files" if extension else "files without an extension"
    if mime:
        what += f" of type {mime!r}"
    raise UnsupportedFormat(f"{what} are not taken; the formats taken are {_taken()}")


def _looks_like(data: bytes, declared: Format) -> str:
    """What the bytes are, by the formats' own signatures, said in a refusal."""
    for fmt in FORMATS.values():
        if fmt.matches is not _is_text and fmt.matches(data):
            return f"its content is {fmt.label}"
    if signatures.zip_members(data) is not None:
        return "its content is a zip archive of another kind"
    if _is_text(data):
        return "its content is plain text"
    if declared.matches is _is_text:
        return "its content is not text in UTF-8 (it is binary, or text in another encoding: save it as UTF-8)"
    return f"its content is not {declared.label}: binary data of no format taken"


def check_upload(data: bytes, *, filename: str, mime_type: str = "") -> str:
    """The name of the format ``data`` is taken as; ``UnsupportedFormat`` for a type not taken, ``WrongContent``
    for bytes that are not what their name (or MIME type) declares. Reads signatures only: nothing is parsed."""
    name = _format(filename, mime_type)
    fmt = FORMATS[name]
    if data and not fmt.matches(data):
        raise WrongContent(f"{filename or 'the file'} is declared as {fmt.label} but {_looks_like(data, fmt)}")
    return name


def parse(data: bytes, *, filename: str, mime_type: str = "") -> Parsed:
    """The text of ``data`` with its sections, or ``UnreadableDocument`` saying why there is none."""
    name = _format(filename, mime_type)
    if not data:
        raise UnreadableDocument("the file is empty (0 bytes)")
    parsed = FORMATS[name].parse(data)
    if not parsed.text.strip():
        hint = ""
        if name == "pdf" and (why := ocr.unavailable()):
            hint = f": a scanned PDF needs OCR (text recognition), and {why}"
        raise UnreadableDocument(f"no text in it{hint}")
    return parsed
