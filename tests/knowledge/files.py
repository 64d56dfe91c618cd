"""Real document files made in the test, so the parsers meet bytes as an upload brings them."""

from __future__ import annotations

import html
import io
import json
import struct
import zipfile

import docx
from docx.document import Document
from pypdf import PdfReader, PdfWriter

# One line in each script the parsers must carry through unchanged.
SAMPLES = {
    "chinese": "知识库让智能体检索文档。",
    "japanese": "日本語の文書を検索します。",
    "korean": "한국어 문서를 검색합니다.",
    "russian": "Поиск по документам на русском языке.",
    "arabic": "البحث في المستندات باللغة العربية.",
    "latin": "Crème brûlée, façade, naïve, Ærø, São Paulo, Łódź.",
}


MULTILINGUAL_HEADING = "見出し Заголовок"


def multilingual_file(fmt: str) -> tuple[bytes, str]:
    """A file of format ``fmt`` holding every line of ``SAMPLES`` (and, where headings exist, a heading)."""
    samples = list(SAMPLES.values())
    if fmt == "txt":
        return "\n\n".join(samples).encode(), "notes.txt"
    if fmt == "txt-utf16":
        return "\n\n".join(samples).encode("utf-16"), "notes.txt"  # Python writes the BOM
    if fmt == "md":
        return (f"# {MULTILINGUAL_HEADING}\n\n" + "\n\n".join(samples)).encode(), "notes.md"
    if fmt == "html":
        paragraphs = "".join(f"<p>{html.escape(sample)}</p>" for sample in samples)
        return f"<html><body><h1>{MULTILINGUAL_HEADING}</h1>{paragraphs}</body></html>".encode(), "page.html"
    if fmt == "json":
        return json.dumps(SAMPLES, ensure_ascii=False).encode(), "data.json"
    if fmt == "json-escaped":
        return json.dumps(SAMPLES).encode(), "data.json"  # \uXXXX escapes
    if fmt == "jsonl":
        lines = [json.dumps({"lang": k, "text": v}, ensure_ascii=False) for k, v in SAMPLES.items()]
        return "\n".join(lines).encode(), "d.jsonl"
    if fmt == "csv":
        rows = "".join(f'{k},"{v}"\n' for k, v in SAMPLES.items())
        return ("lang,text\n" + rows).encode("utf-8-sig"), "table.csv"  # Excel writes the BOM
    if fmt == "docx":
        return docx_bytes((1, MULTILINGUAL_HEADING), *samples), "report.docx"
    if fmt == "pptx":
        return pptx_bytes([(MULTILINGUAL_HEADING, samples)]), "deck.pptx"
    if fmt == "xlsx":
        return xlsx_bytes({MULTILINGUAL_HEADING: [["lang", "text"], *([k, v] for k, v in SAMPLES.items())]}), "t.xlsx"
    if fmt == "epub":
        paragraphs = "".join(f"<p>{html.escape(sample)}</p>" for sample in samples)
        return epub_bytes([f"<h1>{MULTILINGUAL_HEADING}</h1>{paragraphs}"]), "book.epub"
    assert fmt == "pdf"
    # Arabic is stored in visual order, as PDF producers store right-to-left text; extraction gives logical order
    # back, but pypdf leaves the final full stop (a neutral character) where it stood, first: it is left out here.
    pages = [samples[:3], [SAMPLES["russian"]], [SAMPLES["arabic"].rstrip(".")[::-1], SAMPLES["latin"]]]
    return pdf_bytes(pages), "scan.pdf"


MULTILINGUAL_FORMATS = [
    "txt",
    "txt-utf16",
    "md",
    "html",
    "json",
    "json-escaped",
    "jsonl",
    "csv",
    "docx",
    "pdf",
    "pptx",
    "xlsx",
    "epub",
]


def _utf16_hex(text: str) -> str:
    return text.encode("utf-16-be").hex().upper()


def _to_unicode_cmap(codes: dict[str, int]) -> bytes:
    entries = [f"<{code:04X}> <{_utf16_hex(char)}>" for char, code in codes.items()]
    blocks = "".join(
        f"{len(entries[i : i + 100])} beginbfchar\n" + "\n".join(entries[i : i + 100]) + "\nendbfchar\n"
        for i in range(0, len(entries), 100)  # the CMap format allows at most 100 entries a block
    )
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        f"{blocks}endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    ).encode()


def pdf_bytes(pages: list[list[str]]) -> bytes:
    """A hand-written PDF, one list of lines a page, in a Type0 font whose ToUnicode map gives any script.

    The font embeds no glyphs (a viewer would show boxes), but text extraction
    reads only the ToUnicode map, as it does for real CJK PDFs. Right-to-left
    lines must be given in visual order, as PDF producers store them.
    """
    chars = sorted({char for lines in pages for line in lines for char in line})
    codes = {char: number for number, char in enumerate(chars, start=1)}
    kids = " ".join(f"{6 + 2 * k} 0 R" for k in range(len(pages)))
    cmap = _to_unicode_cmap(codes)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H /DescendantFonts [4 0 R] "
        b"/ToUnicode 5 0 R >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 600 >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"endstream",
    ]
    for k, lines in enumerate(pages):
        shown = "".join("<" + "".join(f"{codes[c]:04X}" for c in line) + "> Tj T*\n" for line in lines)
        content = f"BT /F1 12 Tf 14 TL 72 720 Td\n{shown}ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {7 + 2 * k} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    return pdf_of(objects, header=b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")


def placed_pdf(placed: list[tuple[float, float, str]]) -> bytes:
    """A one-page PDF drawing each ``(x, y, line)`` at that point, in the order given (``pdf_bytes``' font)."""
    codes = {char: number for number, char in enumerate(sorted({c for _, _, line in placed for c in line}), start=1)}
    cmap = _to_unicode_cmap(codes)
    shown = "".join(
        f"1 0 0 1 {x} {y} Tm <" + "".join(f"{codes[c]:04X}" for c in line) + "> Tj\n" for x, y, line in placed
    )
    content = f"BT /F1 10 Tf\n{shown}ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [6 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H /DescendantFonts [4 0 R] "
        b"/ToUnicode 5 0 R >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 500 >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"endstream",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 7 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    return pdf_of(objects)


def two_column_pdf(title: str, left: list[str], right: list[str], footer: str) -> bytes:
    """A page of two columns under a title across them, with a footer, drawn row by row (a line of the left
    column, then the line beside it in the right one), as many producers of multi-column layouts write them."""
    placed = [(230.0, 750.0, title)]
    for row, (one, other) in enumerate(zip(left, right, strict=True)):
        placed += [(72.0, 700.0 - 14 * row, one), (330.0, 700.0 - 14 * row, other)]
    return placed_pdf([*placed, (260.0, 40.0, footer)])


def pdf_of(objects: list[bytes], *, header: bytes = b"%PDF-1.7\n") -> bytes:
    """A PDF file of these numbered objects (the first is the catalog), with its cross-reference table."""
    out = bytearray(header)
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def encrypted_pdf(
    data: bytes, user_password: str, owner_password: str | None = None, algorithm: str = "RC4-128"
) -> bytes:
    """``data`` encrypted by pypdf's writer, as a PDF program with a password set would save it."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password, owner_password, algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(*blocks: str | tuple[int | str, str] | list[list[str]], document: Document | None = None) -> bytes:
    """A DOCX made by python-docx: a ``str`` is a paragraph, ``(level, text)`` a heading, ``(style name, text)``
    a paragraph in that style, a list of rows a table."""
    document = document or docx.Document()
    for block in blocks:
        if isinstance(block, str):
            document.add_paragraph(block)
        elif isinstance(block, tuple) and isinstance(block[0], int):
            document.add_heading(block[1], level=block[0])
        elif isinstance(block, tuple):
            document.add_paragraph(block[1], style=block[0])
        else:
            table = document.add_table(rows=len(block), cols=len(block[0]))
            for row, values in zip(table.rows, block, strict=True):
                for cell, value in zip(row.cells, values, strict=False):  # a shorter row leaves cells empty
                    cell.text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def pptx_bytes(slides: list[tuple[str, list[str]]], *, table: list[list[str]] | None = None, notes: str = "") -> bytes:
    """A PPTX made by python-pptx: each slide a title and a text box of paragraphs; ``table`` and ``notes`` go on
    the last slide. The text box is added before the title's text is set, lower on the slide: read by position."""
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    for index, (title, paragraphs) in enumerate(slides):
        slide = presentation.slides.add_slide(presentation.slide_layouts[5])  # "Title Only"
        box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(8), Inches(3)).text_frame
        box.text = paragraphs[0] if paragraphs else ""
        for paragraph in paragraphs[1:]:
            box.add_paragraph().text = paragraph
        slide.shapes.title.text = title
        if index == len(slides) - 1 and table:
            shape = slide.shapes.add_table(len(table), len(table[0]), Inches(1), Inches(5), Inches(8), Inches(2))
            for row, values in zip(shape.table.rows, table, strict=True):
                for cell, value in zip(row.cells, values, strict=True):
                    cell.text = value
        if index == len(slides) - 1 and notes:
            slide.notes_slide.notes_text_frame.text = notes
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def xlsx_bytes(sheets: dict[str, list[list[object]]], *, hidden: tuple[str, ...] = ()) -> bytes:
    """An XLSX made by openpyxl: a sheet per name, its rows as given (None: an empty cell)."""
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
        if name in hidden:
            sheet.sheet_state = "hidden"
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def epub_bytes(chapters: list[str], *, spine: list[int] | None = None) -> bytes:
    """An EPUB 3 as the standard lays it out: the ``mimetype`` entry first and stored, the container, a package
    document in a subfolder listing the chapters (XHTML bodies given), read in ``spine`` order (default: as given)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        items = "".join(
            f'<item id="c{n}" href="text/chapter%20{n}.xhtml" media-type="application/xhtml+xml"/>'
            for n in range(len(chapters))
        )
        order = "".join(f'<itemref idref="c{n}"/>' for n in (spine if spine is not None else range(len(chapters))))
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Book</dc:title></metadata>'
            f'<manifest><item id="css" href="style.css" media-type="text/css"/>{items}</manifest>'
            f"<spine>{order}</spine></package>",
        )
        archive.writestr("OEBPS/style.css", "h1 { color: red }")
        for n, body in enumerate(chapters):
            archive.writestr(
                f"OEBPS/text/chapter {n}.xhtml",
                '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
                f"<title>Chapter {n}</title><style>p {{ margin: 0 }}</style></head><body>{body}</body></html>",
            )
    return out.getvalue()


def zip_bomb(expanded: int) -> bytes:
    """A small zip that declares (truthfully) ``expanded`` bytes of zeros, laid out like a DOCX."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as entry:
            block = b"\0" * (1 << 20)
            for _ in range(expanded // len(block)):
                entry.write(block)
            entry.write(b"\0" * (expanded % len(block)))
    return out.getvalue()


def lying_zip(expanded: int, declared: int) -> bytes:
    """A real DOCX whose ``word/document.xml`` inflates to ``expanded`` bytes while its headers declare ``declared``."""
    name = "word/document.xml"
    original = zipfile.ZipFile(io.BytesIO(docx_bytes("x")))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry in original.infolist():
            archive.writestr(entry.filename, b"\0" * expanded if entry.filename == name else original.read(entry))
    data = bytearray(out.getvalue())
    for signature, name_at, size_at in ((b"PK\x03\x04", 30, 22), (b"PK\x01\x02", 46, 24)):  # local, central headers
        header = data.index(signature)
        while data[header + name_at : header + name_at + len(name)] != name.encode():
            header = data.index(signature, header + 1)  # raises, rather than loops, if the entry is not found
        data[header + size_at : header + size_at + 4] = struct.pack("<I", declared)
    return bytes(data)
