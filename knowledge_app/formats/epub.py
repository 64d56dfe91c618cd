"""EPUB: a zip of XHTML chapters, read in the order of the book's spine, each chapter by the HTML parser.

Read with the standard library and lxml rather than EbookLib, the one maintained EPUB
library, which is AGPL-3.0 (tests/test_licences.py refuses it); what reading needs is three
steps of the EPUB standard: ``META-INF/container.xml`` names the package document, whose
manifest and spine list the chapters in reading order. Headings run on across chapters, so
a chapter's ``<h2>`` sits under the book's ``<h1>`` before it.
"""

from __future__ import annotations

import codecs
import io
import posixpath
import zipfile
from urllib.parse import unquote

from lxml import etree

from cognizes.access import limits
from knowledge_app.formats.archives import check_zip
from knowledge_app.formats.markup import html_into
from knowledge_app.parsed import Outline, Parsed, UnreadableDocument

_CONTAINER = "META-INF/container.xml"
_XHTML = {"application/xhtml+xml", "text/html", "application/x-dtbook+xml"}
# No entities expanded, no DTD or network read: a book's XML is data, and hostile XML must not grow or reach out.
_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=True)


def _decode(data: bytes) -> str:
    """An XHTML chapter's text: UTF-8 or UTF-16, the two encodings EPUB allows (UTF-16 only with its BOM)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def _xml(archive: zipfile.ZipFile, name: str) -> etree._Element:
    try:
        root = etree.fromstring(archive.read(name), _XML)
    except KeyError:
        raise UnreadableDocument(f"not a readable EPUB book: it has no {name}") from None
    if root is None:
        raise UnreadableDocument(f"not a readable EPUB book: {name} is not XML")
    return root


def _joined(folder: str, href: str) -> str:
    """A manifest's ``href`` (relative to the package document, percent-encoded) as a name in the zip."""
    return posixpath.normpath(posixpath.join(folder, unquote(href)))


def _chapters(archive: zipfile.ZipFile) -> list[str]:
    """The zip names of the book's XHTML documents, in the spine's order."""
    rootfile = next(iter(_xml(archive, _CONTAINER).iterfind(".//{*}rootfile")), None)
    package_path = unquote(rootfile.get("full-path", "")) if rootfile is not None else ""
    if not package_path:
        raise UnreadableDocument("not a readable EPUB book: its container names no package document")
    package = _xml(archive, package_path)
    folder = posixpath.dirname(package_path)
    manifest = {
        item.get("id"): (_joined(folder, item.get("href", "")), item.get("media-type"))
        for item in package.iterfind(".//{*}manifest/{*}item")
    }
    chapters = []
    for reference in package.iterfind(".//{*}spine/{*}itemref"):
        path, media_type = manifest.get(reference.get("idref"), ("", ""))
        if path and media_type in _XHTML and path not in chapters:
            chapters.append(path)
    return chapters


def epub_text(data: bytes) -> Parsed:
    """The book's chapters in reading order, sectioned by their headings. Images, styles and the navigation
    document's table of contents (not in the spine, or marked non-linear only in some books) are not text."""
    check_zip(data, ".epub")
    outline = Outline()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for path in _chapters(archive):
                limits.check_deadline()
                try:
                    chapter = archive.read(path)
                except KeyError:
                    continue  # listed but missing: readers skip it too
                html_into(outline, _decode(chapter), with_head=False)
    except (UnreadableDocument, limits.LimitExceeded):
        raise
    except Exception as error:
        raise UnreadableDocument(f"not a readable EPUB book ({type(error).__name__}: {error})") from None
    return outline.build()
