"""PDF, read with pypdf (pure Python: nothing to compile, and no AGPL as with PyMuPDF)."""

from __future__ import annotations

import io
import logging
import re

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError

from knowledge_app.parsed import MAX_EXPANDED_BYTES, Outline, Parsed, UnreadableDocument

_NEEDS_PASSWORD = "encrypted PDF: it needs a password; save a copy without the password and upload that"


def pdf(data: bytes) -> Parsed:
    """The text of each page, each page (and each block between blank lines on it) a paragraph; one section.

    A PDF's text has no headings, and its outline (bookmarks) points at pages,
    not at places in the extracted text, so it cannot give sections the chunker
    could trust. A PDF locked only against editing (an owner password, no user
    password) opens, as it does in any reader. pypdf raises almost anything on a hostile file, hence
    the broad ``except``: every failure of its parsing becomes a reason, not a
    crash of the ingestion worker.
    """
    if b"%PDF-" not in data[:1024]:  # where the PDF standard lets readers look for the header
        raise UnreadableDocument("not a PDF: it does not begin with a PDF header (%PDF-)")
    outline = Outline()
    length = 0
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise UnreadableDocument(_NEEDS_PASSWORD)
        for page in reader.pages:
            text = (page.extract_text() or "").replace("\x00", "")
            length += len(text)
            if length > MAX_EXPANDED_BYTES:
                raise UnreadableDocument(
                    f"the PDF holds more than {MAX_EXPANDED_BYTES >> 20} MB of text; "
                    "split it into smaller files"
                )
            for block in re.split(r"\n\s*\n", text):  # a blank line on a page is a paragraph break
                outline.paragraph(block)
    except UnreadableDocument:
        raise
    except FileNotDecryptedError:
        raise UnreadableDocument(_NEEDS_PASSWORD) from None
    except DependencyError as error:
        logging.getLogger(__name__).error("PDF decryption needs a package this server lacks: %s", error)
        reason = "encrypted PDF that this server cannot decrypt; upload a copy without encryption"
        raise UnreadableDocument(reason) from None
    except Exception as error:  # noqa: BLE001 - see the docstring
        raise UnreadableDocument(f"damaged or not a PDF ({type(error).__name__}: {error})") from None
    return outline.build()
