"""Issue 44 item 3: the formats people have (PPTX, XLSX, EPUB, scanned PDFs and images) read into text with their
structure, PDFs with their ligatures and columns, and tables chunked whole with their headers. Every script through
each new format: test_parsing.py's test_every_script_survives_every_format."""

from __future__ import annotations

import datetime
import io
import time
import zipfile

import docx
import pytest
from django.test import override_settings

from cognizes.access import limits
from knowledge_app.chunking import chunk
from knowledge_app.parsing import UnreadableDocument, UnsupportedFormat, parse
from tests.knowledge import files
from tests.knowledge.files import epub_bytes, pptx_bytes, xlsx_bytes


def _sections(data: bytes, filename: str) -> dict[tuple[str, ...], str]:
    parsed = parse(data, filename=filename)
    return {section.heading_path: parsed.text[section.start : section.end] for section in parsed.sections}


def test_a_presentation_is_a_section_per_slide_under_its_title_read_top_to_bottom():
    data = pptx_bytes(
        [("Quarterly review", ["Revenue grew 12%.", "Costs fell."]), ("", ["Untitled slide text."])],
        table=[["Region", "Sales"], ["North", "120"], ["South", "95"]],
        notes="Mention the new office.",
    )
    assert parse(data, filename="deck.pptx").pages == 2
    assert _sections(data, "deck.pptx") == {
        ("Quarterly review",): "Revenue grew 12%.\n\nCosts fell.",
        ("Slide 2",): "Untitled slide text.\n\nRegion: North\nSales: 120\n\nRegion: South\nSales: 95\n\n"
        "Mention the new office.",
    }


def test_a_workbook_is_a_section_per_sheet_each_row_with_its_headers():
    data = xlsx_bytes(
        {
            "Staff": [
                [None, None],  # a table need not begin in the first row
                ["Name", "Joined", "Days", None],
                ["Zoë", datetime.datetime(2024, 3, 1), 25, "remote"],
                [None, None, None],
                ["Анна", datetime.datetime(2023, 1, 9), 27.5, None],
            ],
            "Secret": [["key"], ["hunter2"]],
            "価格": [["品目", "価格"], ["コーヒー", 300]],
        },
        hidden=("Secret",),
    )
    assert _sections(data, "staff.xlsx") == {
        ("Staff",): "Name: Zoë\nJoined: 2024-03-01\nDays: 25\ncolumn D: remote\n\n"
        "Name: Анна\nJoined: 2023-01-09\nDays: 27.5",
        ("価格",): "品目: コーヒー\n価格: 300",
    }


def test_a_long_sheet_is_chunked_by_whole_rows_each_with_its_headers():
    rows = [["Product", "Price", "Stock"], *([f"Item {n}", n * 3, n % 7] for n in range(200))]
    parsed = parse(xlsx_bytes({"Prices": rows}), filename="prices.xlsx")
    chunks = chunk(parsed, size=40, overlap=0)
    assert len(chunks) > 10
    for piece in chunks:
        assert piece.heading_path == ("Prices",)
        for record in piece.text.split("\n\n"):
            lines = record.split("\n")
            assert [line.split(": ")[0] for line in lines] == ["Product", "Price", "Stock"][: len(lines)]
            assert lines[0].startswith("Product: Item ")  # never a row cut from its first cells
    assert sum(piece.text.count("Product: ") for piece in chunks) == 200


def test_an_html_tables_rows_are_chunked_whole_each_with_its_header_names():
    rows = "".join(f"<tr><td>Room {n}</td><td>{n % 5} floor</td><td>{n * 2} seats</td></tr>" for n in range(120))
    page = f"<h1>Rooms</h1><table><thead><tr><th>Room</th><th>Floor</th><th>Seats</th></tr></thead>{rows}</table>"
    chunks = chunk(parse(page.encode(), filename="rooms.html"), size=30, overlap=0)
    assert len(chunks) > 10
    for piece in chunks:
        for record in piece.text.split("\n\n"):
            assert [line.split(": ")[0] for line in record.split("\n")] == ["Room", "Floor", "Seats"], piece.text
    assert sum(piece.text.count("Room: Room ") for piece in chunks) == 120
    simple = parse(
        b"<table><tr><th>Name</th><td>Ann</td></tr><tr><th>City</th><td>Oslo</td></tr></table>", filename="a.html"
    )
    assert simple.text == "Name | Ann\n\nCity | Oslo"  # headers down the side: no header row, cells as they are


def test_a_word_table_whose_first_row_repeats_as_its_header_gives_each_row_its_header_names():
    from docx.oxml import OxmlElement

    document = docx.Document()
    table = document.add_table(rows=3, cols=3)
    rows = [["Plan", "Price", "Users"], ["Basic", "10 €", "5"], ["Pro", "", "50"]]
    for row, values in zip(table.rows, rows, strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    table.rows[0]._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))
    plain = document.add_table(rows=1, cols=2)
    plain.cell(0, 0).text, plain.cell(0, 1).text = "Key", "Value"
    assert parse(files.docx_bytes(document=document), filename="plans.docx").text == (
        "Plan: Basic\nPrice: 10 €\nUsers: 5\n\nPlan: Pro\nUsers: 50\n\nKey | Value"
    )


def test_a_book_is_read_in_its_spines_order_with_headings_across_chapters():
    data = epub_bytes(
        [
            "<h2>Second</h2><p>Later text.</p>",
            "<h1>Книга</h1><p>Вступление.</p><h2>First</h2><p>Early text.</p>",
        ],
        spine=[1, 0],
    )
    assert _sections(data, "book.epub") == {
        ("Книга",): "Вступление.",
        ("Книга", "First"): "Early text.",
        ("Книга", "Second"): "Later text.",
    }


@pytest.mark.parametrize(
    ("filename", "reason"),
    [
        ("old.pptx", "a PowerPoint 97-2003 .ppt must be saved as .pptx first"),
        ("old.xlsx", "an Excel 97-2003 .xls must be saved as .xlsx first"),
        ("book.epub", "not a .epub file"),
    ],
)
def test_an_office_file_that_is_not_a_zip_says_what_to_do(filename, reason):
    with pytest.raises(UnreadableDocument, match=reason):
        parse(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 an OLE2 file", filename=filename)


def test_a_zip_bomb_named_as_a_workbook_is_refused_before_it_is_unpacked():
    with pytest.raises(UnreadableDocument, match=r"the \.xlsx would unpack to 51 MB"):
        parse(files.zip_bomb(50 * 1024 * 1024 + 1), filename="bomb.xlsx")


def test_an_entity_bomb_in_a_book_is_not_expanded():
    entities = "".join(f'<!ENTITY e{n} "{("&e" + str(n - 1) + ";") * 10}">' for n in range(1, 10))
    bomb = f'<?xml version="1.0"?><!DOCTYPE c [<!ENTITY e0 "lol">{entities}]>'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(
            "META-INF/container.xml",
            bomb + '<container><rootfiles><rootfile full-path="&e9;"/></rootfiles></container>',
        )
    started = time.monotonic()
    with pytest.raises(UnreadableDocument, match="its container names no package document"):
        parse(out.getvalue(), filename="bomb.epub")  # a billion "lol"s, had the entity been expanded
    assert time.monotonic() - started < 2


def test_a_sheet_whose_one_far_cell_declares_a_million_rows_is_read_by_the_cells_it_has():
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.active.append(["Name", "Team"])
    workbook.active.append(["Ann", "Sales"])
    workbook.active.cell(row=1_048_576, column=16_384, value="far away")
    out = io.BytesIO()
    workbook.save(out)
    with limits.parse_deadline(20):
        text = parse(out.getvalue(), filename="sparse.xlsx").text
    assert text == "Sheet\n\nName: Ann\nTeam: Sales\n\ncolumn XFD: far away"


def test_pdf_ligatures_are_spelled_out_so_a_search_for_the_word_finds_them():
    text = parse(files.pdf_bytes([["The ﬁrst oﬃce ﬂoor is staﬀed."]]), filename="r.pdf").text
    assert text == "The first office floor is staffed."


def test_a_two_column_pdf_page_is_read_column_by_column():
    left = ["Left one.", "Left two.", "Left three."]
    right = ["Right one.", "Right two.", "Right three."]
    text = parse(files.two_column_pdf("A title across", left, right, "Page 7 footer"), filename="paper.pdf").text
    assert text.index("Left three.") < text.index("Right one.")
    assert text.startswith("A title across")
    assert text.endswith("Page 7 footer")
    assert "Left one. Right one." not in text


def _text_image(lines: list[str], fmt: str = "PNG") -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype("DejaVuSans.ttf", 36) if _has_font() else ImageFont.load_default(size=36)
    image = Image.new("RGB", (1000, 80 + 80 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((30, 40 + 80 * number), line, font=font, fill="black")
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def _has_font() -> bool:
    from PIL import ImageFont

    try:
        ImageFont.truetype("DejaVuSans.ttf", 10)
    except OSError:
        return False
    return True


def test_an_image_without_ocr_is_not_taken_and_says_which_setting_reads_it():
    with pytest.raises(UnsupportedFormat, match="COGNIZES_KNOWLEDGE_OCR") as refused:
        parse(_text_image(["Hello"]), filename="scan.png")
    assert ".pdf" in refused.value.reason and ".pptx" in refused.value.reason


@override_settings(COGNIZES_KNOWLEDGE_OCR=True)
def test_with_ocr_an_image_and_a_scanned_pdf_page_are_read():
    pytest.importorskip("rapidocr_onnxruntime")
    lines = ["Payment due within 30 days.", "Invoice number 4711."]
    assert "Payment due within 30 days" in parse(_text_image(lines), filename="scan.png").text
    text = parse(_text_image(lines, "PDF"), filename="scan.pdf").text  # Pillow writes the image as a one-page PDF
    assert "Payment due within 30 days" in text and "4711" in text


def test_a_scanned_pdf_without_ocr_says_ocr_is_off():
    with pytest.raises(UnreadableDocument, match="OCR is off on this server"):
        parse(_text_image(["Payment due."], "PDF"), filename="scan.pdf")
