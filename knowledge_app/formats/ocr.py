"""Text recognition (OCR) for images and scanned PDF pages, offline, with RapidOCR on ONNX Runtime.

Off unless ``COGNIZES_KNOWLEDGE_OCR`` is set: the engine and its dependencies (ONNX Runtime,
OpenCV, Shapely) install to about 400 MB and take ~1 s of CPU a page, where the rest of the
parsers take 40 MB. It is the ``ocr`` extra (``pip install 'cognizes[ocr]'``).
``rapidocr-onnxruntime`` ships its three PP-OCRv4 models (detection, orientation, recognition;
15 MB) inside its wheel, so nothing is downloaded at run time, unlike ``rapidocr`` 3, which
fetches its models on first use, docling's OCR (torch and models from a hub) or Tesseract (a
system package per language). Its recognition model reads Chinese and English (Latin letters,
digits, punctuation); Japanese kana, Korean, Cyrillic and accented letters are not in its
alphabet and come out wrong or not at all.

Nothing here is imported by the web process: an upload only asks ``unavailable()``, which looks
for the package without importing it.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

from django.conf import settings

from cognizes.access import limits
from knowledge_app.parsed import Outline, Parsed, UnreadableDocument

PACKAGE = "rapidocr_onnxruntime"
MIN_SCORE = 0.5
"""Lines recognised with less confidence are left out: noise read as letters would only mislead a search."""

_engine: Any = None
_lock = threading.Lock()  # one engine a process, built once; ONNX Runtime's session runs one call at a time here


def enabled() -> bool:
    return bool(settings.COGNIZES_KNOWLEDGE_OCR)


def unavailable() -> str:
    """Why OCR cannot run on this server ('' when it can), said to the person whose file needs it."""
    if not enabled():
        return "OCR is off on this server (an operator turns it on with COGNIZES_KNOWLEDGE_OCR=1)"
    if importlib.util.find_spec(PACKAGE) is None:
        return "OCR is on but its engine is not installed on this server (pip install 'cognizes[ocr]')"
    return ""


def _get_engine() -> Any:
    global _engine
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR  # 400 MB of libraries: loaded on first use

        _engine = RapidOCR()
    return _engine


def recognise(image: Any) -> list[str]:
    """The lines of text in ``image`` (a numpy array or an encoded image's bytes), top to bottom."""
    limits.check_deadline()
    with _lock:
        found, _ = _get_engine()(image)
    lines = [(box, text) for box, text, score in found or [] if text.strip() and float(score) >= MIN_SCORE]
    lines.sort(key=lambda line: (round(min(y for _, y in line[0]) / 10), min(x for x, _ in line[0])))
    return [text.strip() for _, text in lines]


def image_text(data: bytes) -> Parsed:
    """An image's recognised lines, as one paragraph (OCR gives lines, not the blank lines between paragraphs)."""
    if why := unavailable():
        raise UnreadableDocument(f"an image is read only with OCR (text recognition): {why}")
    try:
        lines = recognise(data)
    except limits.LimitExceeded:
        raise
    except Exception as error:  # a damaged image: OpenCV and the engine raise anything
        raise UnreadableDocument(f"not a readable image ({type(error).__name__}: {error})") from None
    outline = Outline()
    outline.paragraph("\n".join(lines))
    return outline.build()
