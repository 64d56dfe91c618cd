"""PDF, read with pypdf (pure Python: nothing to compile, and no AGPL as with PyMuPDF)."""

from __future__ import annotations

import dataclasses
import io
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pypdf import PasswordType, PdfReader, apply_configuration
from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError

from cognizes.access import limits
from knowledge_app.parsed import Outline, Parsed, UnreadableDocument

logger = logging.getLogger(__name__)
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
    with _pypdf_warnings_summed():
        return _read(data)


def _read(data: bytes) -> Parsed:
    outline = Outline()
    length, allowed, most_pages = 0, limits.max_expanded_bytes(), limits.max_pages()
    try:
        # pypdf's own bounds on what a stream may inflate to, held to ours; a page tree that references one page
        # a million times is bounded before it is flattened (a page's dictionary has about ten entries).
        with apply_configuration(
            zlib_maximum_output_length=allowed,
            lzw_maximum_output_length=allowed,
            run_length_maximum_output_length=allowed,
            brotli_maximum_output_length=allowed,
            array_based_stream_maximum_output_length=allowed,
            page_tree_maximum_page_entries=most_pages * 64,
        ):
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
                raise UnreadableDocument(_NEEDS_PASSWORD)
            pages = len(reader.pages)
            if pages > most_pages:
                raise UnreadableDocument(
                    f"the PDF has {pages} pages, more than the {most_pages} a document may have "
                    "(COGNIZES_KNOWLEDGE_MAX_PAGES); split it into smaller files"
                )
            for page in reader.pages:
                # The deadline is checked at each drawing operator too: one page's content can take minutes.
                text = (page.extract_text(visitor_operand_before=_on_time) or "").replace("\x00", "")
                length += len(text)
                if length > allowed:
                    raise UnreadableDocument(
                        f"the PDF holds more than {allowed >> 20} MB of text "
                        "(COGNIZES_KNOWLEDGE_MAX_EXPANDED_BYTES); split it into smaller files"
                    )
                for block in re.split(r"\n\s*\n", text):  # a blank line on a page is a paragraph break
                    outline.paragraph(block)
    except (UnreadableDocument, limits.LimitExceeded):
        raise
    except LimitReachedError as error:
        raise UnreadableDocument(
            f"the PDF asks for more than a document may (split it into smaller files): {error}"
        ) from None
    except FileNotDecryptedError:
        raise UnreadableDocument(_NEEDS_PASSWORD) from None
    except DependencyError as error:
        logger.error("PDF decryption needs a package this server lacks: %s", error)
        reason = "encrypted PDF that this server cannot decrypt; upload a copy without encryption"
        raise UnreadableDocument(reason) from None
    except Exception as error:
        raise UnreadableDocument(f"damaged or not a PDF ({type(error).__name__}: {error})") from None
    return dataclasses.replace(outline.build(), pages=pages)


class _Tally(logging.Handler):
    """pypdf's warnings in one thread (a worker may parse several documents at once): how many, and the first."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread, self.count, self.first = threading.get_ident(), 0, ""

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.count += 1
            self.first = self.first or record.getMessage()


@contextmanager
def _pypdf_warnings_summed() -> Iterator[None]:
    """One log line for all that pypdf read past in a PDF, instead of its line per damaged object.

    A damaged PDF that opens in every viewer made pypdf warn thousands of times (4,236 lines for one file,
    issue 43), though the document was indexed; its warnings go nowhere else (settings.LOGGING's "pypdf").
    """
    tally = _Tally()
    source = logging.getLogger("pypdf")
    source.addHandler(tally)
    try:
        yield
    finally:
        source.removeHandler(tally)
        if tally.count:
            logger.info(
                "PDF read past %d problems pypdf reported (the first: %s)", tally.count, tally.first[:200].strip()
            )


def _on_time(*_: object) -> None:
    limits.check_deadline()
