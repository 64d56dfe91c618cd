"""A file's bytes into text with structure: ``parse(data, filename=..., mime_type=...) -> Parsed``.

Pure and database-free, so ingestion can run it in a worker and tests can run it
on bytes they make. The format is chosen by the file's extension first, because
a browser's or client's MIME type is often generic (``application/octet-stream``)
or wrong, then by the MIME type. Anything that gives no text raises
``UnreadableDocument`` with a reason meant for the person who uploaded the file.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable

from knowledge_app.formats import markup, pdf, records, word
from knowledge_app.parsed import Parsed, Section, UnreadableDocument, trimmed

__all__ = ["FORMATS", "Parsed", "Section", "UnreadableDocument", "decode_text", "parse"]

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


def _text_format(convert: Callable[[str], Parsed]) -> Callable[[bytes], Parsed]:
    return lambda data: convert(decode_text(data))


# name -> (extensions, MIME types, converter from bytes)
FORMATS: dict[str, tuple[tuple[str, ...], tuple[str, ...], Callable[[bytes], Parsed]]] = {
    "text": ((".txt", ".text"), ("text/plain",), _plain),
    "markdown": ((".md", ".markdown"), ("text/markdown", "text/x-markdown"), _text_format(markup.markdown)),
    "html": ((".html", ".htm", ".xhtml"), ("text/html", "application/xhtml+xml"), _text_format(markup.html)),
    "json": ((".json",), ("application/json", "text/json"), _text_format(records.json_document)),
    "jsonl": (
        (".jsonl", ".ndjson"),
        ("application/jsonl", "application/x-jsonlines", "application/x-ndjson", "application/jsonlines"),
        _text_format(records.json_lines),
    ),
    "csv": ((".csv",), ("text/csv", "application/csv"), _text_format(records.csv_rows)),
    "pdf": ((".pdf",), ("application/pdf",), pdf.pdf),
    "docx": (
        (".docx",),
        ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",),
        word.docx_text,
    ),
}


def _format(filename: str, mime_type: str) -> str:
    extension = os.path.splitext(filename)[1].lower()
    mime = mime_type.split(";")[0].strip().lower()
    for by_extension in (True, False):
        for name, (extensions, mimes, _) in FORMATS.items():
            if (extension in extensions) if by_extension else (mime in mimes):
                return name
    taken = ", ".join(ext for extensions, _, _ in FORMATS.values() for ext in extensions)
    what = f"{extension!r} files" if extension else "files without an extension"
    if mime:
        what += f" of type {mime!r}"
    raise UnreadableDocument(f"{what} are not taken; the formats taken are {taken}")


def parse(data: bytes, *, filename: str, mime_type: str = "") -> Parsed:
    """The text of ``data`` with its sections, or ``UnreadableDocument`` saying why there is none."""
    name = _format(filename, mime_type)
    if not data:
        raise UnreadableDocument("the file is empty (0 bytes)")
    parsed = FORMATS[name][2](data)
    if not parsed.text.strip():
        hint = ": a scanned PDF needs OCR (text recognition) first" if name == "pdf" else ""
        raise UnreadableDocument(f"no text in it{hint}")
    return parsed
