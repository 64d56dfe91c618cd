"""What a file's first bytes say it is: the checks an upload's content must pass for the format it declares.

Magic numbers rather than a sniffing library: every binary format taken has a fixed
signature (PDF's ``%PDF-``, a zip's ``PK``, PNG's and JPEG's), and the three zip-based
ones (DOCX, PPTX, XLSX, EPUB) are told apart by the parts their standards require, which
a general sniffer (``filetype``, ``puremagic``) reads the same way or not at all. Only the
standard library is imported: the web process runs these at every upload and must not load
a parser to do it (``tests/test_lazy_imports.py``).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

PDF_HEADER_WINDOW = 1024
"""How far into the file the PDF standard lets a reader look for ``%PDF-`` (after a byte-order mark or junk)."""


def is_pdf(data: bytes) -> bool:
    return b"%PDF-" in data[:PDF_HEADER_WINDOW]


def zip_members(data: bytes) -> set[str] | None:
    """The names in a zip's central directory (no entry is inflated), or None if ``data`` is not a zip."""
    if not data.startswith(b"PK"):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return set(archive.namelist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
        return None


def zip_with(*required: str) -> Callable[[bytes], bool]:
    """A check that the bytes are a zip holding each of ``required`` (the parts that make an OOXML or EPUB file)."""

    def check(data: bytes) -> bool:
        members = zip_members(data)
        return members is not None and all(name in members for name in required)

    return check


IMAGE_SIGNATURES = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",  # JPEG
    b"II*\x00",  # TIFF, little-endian
    b"MM\x00*",  # TIFF, big-endian
    b"BM",  # BMP
)


def is_image(data: bytes) -> bool:
    """A raster image OCR reads: PNG, JPEG, TIFF, BMP or WebP."""
    return data.startswith(IMAGE_SIGNATURES) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")
