"""PDF, read with pypdfium2: PDFium, the PDF engine of Chrome, through its maintained Python binding.

Chosen over pypdf (pure Python, the parser before issue 44), which left ligatures as the one
character a font maps them to ('ﬁ', so "ﬁrst" matched no query for "first") and joined the
lines of two columns side by side; PDFium's text layer resolves ligatures, infers the spaces
that typesetters leave as gaps, flags line-end hyphens, and gives each line's box, from which
``_reading_order`` reads a two-column page column by column. It is a 4 MB wheel with the
library compiled in (Apache-2.0/BSD), fuzzed as part of Chrome; PyMuPDF reads as well but is
AGPL, and pdfminer.six (what markitdown and unstructured use for PDFs) is slower and handles
neither hostile nor scanned files better. A page without text is recognised by OCR when it is
on (``knowledge_app.formats.ocr``).
"""

from __future__ import annotations

import dataclasses
import re
import threading
import unicodedata
from collections.abc import Sequence

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from cognizes.access import limits
from knowledge_app.formats import ocr, signatures
from knowledge_app.parsed import Outline, Parsed, UnreadableDocument

_NEEDS_PASSWORD = "encrypted PDF: it needs a password; save a copy without the password and upload that"
_LIGATURES = re.compile("[\ufb00-\ufb06]")  # ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ, which some fonts map their ligature glyphs to
_SOFT_HYPHEN = re.compile(r"[\x02\xad][^\S\n]*\n[^\S\n]*")  # PDFium marks a hyphen that breaks a word at a line end
OCR_LONGEST_SIDE = 2000
"""Pixels of a scanned page's longest side for OCR: about 200 dpi on A4, the size its detection model works at."""
Box = tuple[float, float, float, float]  # left, bottom, right, top, in points from the page's bottom-left corner

# PDFium keeps global state and is not safe to call from two threads at once (pypdfium2's documentation);
# a worker may parse documents on several threads, so each PDF is read under this lock.
_lock = threading.Lock()


def pdf(data: bytes) -> Parsed:
    """The text of each page, each page (and each block between blank lines on it) a paragraph; one section.

    A PDF's text has no headings, and its outline (bookmarks) points at pages,
    not at places in the extracted text, so it cannot give sections the chunker
    could trust. A PDF locked only against editing (an owner password, no user
    password) opens, as it does in any reader. PDFium raises on a damaged file; every failure becomes a reason,
    not a crash of the ingestion worker.
    """
    if not signatures.is_pdf(data):
        raise UnreadableDocument("not a PDF: it does not begin with a PDF header (%PDF-)")
    with _lock:
        return _read(data)


def _read(data: bytes) -> Parsed:
    outline = Outline()
    length, allowed, most_pages = 0, limits.max_expanded_bytes(), limits.max_pages()
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as error:
        if error.err_code == pdfium_c.FPDF_ERR_PASSWORD:
            raise UnreadableDocument(_NEEDS_PASSWORD) from None
        raise UnreadableDocument(f"damaged or not a PDF ({error})") from None
    try:
        pages = len(document)
        if pages > most_pages:
            raise UnreadableDocument(
                f"the PDF has {pages} pages, more than the {most_pages} a document may have "
                "(COGNIZES_KNOWLEDGE_MAX_PAGES); split it into smaller files"
            )
        for number in range(pages):
            limits.check_deadline()
            text = _page_text(document[number])
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
    except Exception as error:
        raise UnreadableDocument(f"damaged or not a PDF ({type(error).__name__}: {error})") from None
    finally:
        document.close()
    return dataclasses.replace(outline.build(), pages=pages)


def _page_text(page: pdfium.PdfPage) -> str:
    """The page's text in reading order, or what OCR reads on it when it has none (a scan) and OCR is on."""
    textpage = page.get_textpage()
    try:
        boxes = [textpage.get_rect(index) for index in range(textpage.count_rects())]
        regions = _reading_order(boxes, page.get_width())
        if regions:
            text = "\n\n".join(textpage.get_text_bounded(*region) for region in regions)
        else:
            text = textpage.get_text_bounded()
    finally:
        textpage.close()
    text = clean(text)
    if not text.strip() and not ocr.unavailable():
        scale = OCR_LONGEST_SIDE / max(page.get_width(), page.get_height(), 1)
        bitmap = page.render(scale=scale)
        text = "\n".join(ocr.recognise(bitmap.to_numpy()))
    return text


def clean(text: str) -> str:
    """PDFium's text as plain text: newlines for its CRLFs, words a line-end hyphen broke joined, ligatures
    spelled out (NFKC of those characters only: NFKC of all would also turn CJK full-width punctuation
    half-width), and no NULs."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _SOFT_HYPHEN.sub("", text).replace("\x02", "-")
    return _LIGATURES.sub(lambda match: unicodedata.normalize("NFKC", match.group()), text)


def _reading_order(boxes: Sequence[Box], width: float) -> list[Box]:
    """Regions of a page to read in turn: what spans it above, its left column, its right column, what spans it
    below; or [] when the page is not laid out in two columns (its text is then read in PDFium's order).

    Two columns: a vertical gutter in the middle half of the page that no line crosses, with lines on both sides
    beside each other, and every line that does cross it above or below both columns (a title, a footer).
    """
    if len(boxes) < 4:
        return []
    best: list[float] = []
    for step in range(1, 100):
        x = width * (0.25 + 0.5 * step / 100)
        left = [box for box in boxes if box[2] <= x]
        right = [box for box in boxes if box[0] >= x]
        if len(left) < 2 or len(right) < 2:
            continue
        top = max(box[3] for box in (*left, *right))
        bottom = min(box[1] for box in (*left, *right))
        spanning = [box for box in boxes if box[0] < x < box[2]]
        if any(box[1] < top and box[3] > bottom for box in spanning):
            continue
        if not any(r[1] < l[3] and r[3] > l[1] for l in left for r in right):  # noqa: E741  # side by side
            continue
        best.append(x)
    if not best:
        return []
    gutter = best[len(best) // 2]
    columns = [box for box in boxes if box[2] <= gutter or box[0] >= gutter]
    top, bottom = max(box[3] for box in columns), min(box[1] for box in columns)
    far, edge = 1e6, 0.5  # beyond any page; half a point, so a line on a region's edge is read once
    return [
        (-far, top + edge, far, far),
        (-far, bottom - edge, gutter, top + edge),
        (gutter, bottom - edge, far, top + edge),
        (-far, -far, far, bottom - edge),
    ]
