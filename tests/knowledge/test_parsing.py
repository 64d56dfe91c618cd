"""knowledge_app.parsing: real files of every format into text and sections, and hostile files refused with a reason."""

from __future__ import annotations

import codecs
import io
import json
import zipfile

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE

from cognizes.access import limits
from knowledge_app.formats import word
from knowledge_app.parsing import Parsed, Section, UnreadableDocument, parse
from tests.knowledge import files
from tests.knowledge.files import SAMPLES, docx_bytes, pdf_bytes


def _reason(data: bytes, filename: str, mime_type: str = "") -> str:
    with pytest.raises(UnreadableDocument) as caught:
        parse(data, filename=filename, mime_type=mime_type)
    assert isinstance(caught.value, ValueError) and caught.value.reason == str(caught.value)
    return caught.value.reason


def _section_texts(parsed: Parsed) -> dict[tuple[str, ...], str]:
    return {section.heading_path: parsed.text[section.start : section.end] for section in parsed.sections}


def _assert_well_formed(parsed: Parsed) -> None:
    """Sections lie in the text, in order, apart, and never begin or end with whitespace."""
    previous_end = 0
    for section in parsed.sections:
        assert previous_end <= section.start <= section.end <= len(parsed.text)
        body = parsed.text[section.start : section.end]
        assert body == body.strip()
        previous_end = section.end


@pytest.mark.parametrize("fmt", files.MULTILINGUAL_FORMATS)
def test_every_script_survives_every_format(fmt):
    data, filename = files.multilingual_file(fmt)
    parsed = parse(data, filename=filename)
    _assert_well_formed(parsed)
    for language, sample in SAMPLES.items():
        if (fmt, language) == ("pdf", "arabic"):
            sample = sample.rstrip(".")
        assert sample in parsed.text, f"{language} lost in {fmt}: {parsed.text!r}"
    if fmt in ("md", "html", "docx", "pptx", "xlsx", "epub"):
        assert parsed.sections[-1].heading_path == (files.MULTILINGUAL_HEADING,)


def test_extension_decides_before_the_mime_type():
    parsed = parse(b"# Title\n\nbody", filename="README.MD", mime_type="application/octet-stream")
    assert _section_texts(parsed) == {("Title",): "body"}
    # An unknown extension falls back on the MIME type (parameters and case ignored).
    parsed = parse(b"<h1>T</h1><p>x</p>", filename="export.dat", mime_type="Text/HTML; charset=utf-8")
    assert _section_texts(parsed) == {("T",): "x"}


def test_an_unknown_format_says_which_formats_are_taken():
    reason = _reason(b"\xd0\xcf\x11\xe0", "old.doc", "application/msword")
    assert "'.doc'" in reason and "application/msword" in reason
    for taken in (".txt", ".md", ".html", ".json", ".jsonl", ".csv", ".pdf", ".docx"):
        assert taken in reason
    assert "without an extension" in _reason(b"x", "Makefile")


@pytest.mark.parametrize("filename", ["a.txt", "a.md", "a.html", "a.json", "a.jsonl", "a.csv", "a.pdf", "a.docx"])
def test_an_empty_file_is_refused(filename):
    assert _reason(b"", filename) == "the file is empty (0 bytes)"


@pytest.mark.parametrize("filename", ["a.txt", "a.md", "a.html", "a.csv", "a.jsonl"])
def test_text_of_only_whitespace_is_refused(filename):
    assert _reason(b" \n\t\r\n  \n", filename) == "no text in it"


def test_markup_that_shows_nothing_is_refused():
    assert _reason(b"<html><script>let x = 1</script><style>p {}</style></html>", "a.html") == "no text in it"
    assert _reason(b"[{}, [], null]", "a.json") == "no text in it"
    assert _reason(b"name,age\n", "a.csv") == "no text in it"


_BOMS = [
    (b"", "utf-8"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
]


@pytest.mark.parametrize("data", [bom + "Grüße\r\naus Köln".encode(encoding) for bom, encoding in _BOMS])
def test_text_is_decoded_from_utf8_or_a_bom_and_line_ends_are_made_newlines(data):
    parsed = parse(data, filename="a.txt")
    assert parsed.text == "Grüße\naus Köln"
    assert parsed.sections == [Section((), 0, len(parsed.text))]


@pytest.mark.parametrize("data", [b"PK\x03\x04\x00\x00binary", "Grüße".encode("latin-1"), b"\x89PNG\r\n\x1a\n"])
def test_binary_or_non_utf8_bytes_are_not_text(data):
    reason = _reason(data, "a.txt")
    assert reason.startswith("a binary file, not text") and "UTF-8" in reason


def test_markdown_headings_give_the_heading_path_and_the_text_is_kept_as_written():
    source = (
        "Intro before any heading.\n\n"
        "# Guide\n\nWelcome.\n\n"
        "## Install ##\n\nRun **pip**.\n\n"
        "```sh\n# a comment, not a heading\npip install x\n```\n\n"
        "### Linux\n\n    # indented code, not a heading\n\n"
        "## Use\n\nCall it.\n\n"
        "Setext title\n============\n\nUnder it.\n\n"
        "Sub title\n---\n\n#hashtag is not a heading\n\n"
        "###### Deep\n"
    )
    parsed = parse(source.encode(), filename="guide.md")
    assert parsed.text == source
    _assert_well_formed(parsed)
    assert _section_texts(parsed) == {
        (): "Intro before any heading.",
        ("Guide",): "Welcome.",
        ("Guide", "Install"): "Run **pip**.\n\n```sh\n# a comment, not a heading\npip install x\n```",
        ("Guide", "Install", "Linux"): "# indented code, not a heading",
        ("Guide", "Use"): "Call it.",
        ("Setext title",): "Under it.",
        ("Setext title", "Sub title"): "#hashtag is not a heading",
        ("Setext title", "Sub title", "Deep"): "",
    }


def test_a_rule_under_a_list_item_or_blank_line_is_not_a_heading():
    parsed = parse(b"- item\n---\n\ntext\n\n---\nmore", filename="a.md")
    assert [section.heading_path for section in parsed.sections] == [()]


def test_html_keeps_the_visible_text_with_headings_and_paragraphs():
    page = b"""<!doctype html><html><head><title>Shop</title><style>h1 {color: red}</style>
    <script>document.write("<h1>fake</h1>")</script></head><body>
    <nav><a href="/">Home</a></nav>
    <h1>Caf&eacute; <em>menu</em></h1><p>Coffee   and
    tea<br>all day &amp; night.</p><!-- a comment -->
    <h2>Prices</h2><table><tr><th>Item</th><th>Price</th></tr><tr><td>Espresso</td><td>2 &euro;</td></tr></table>
    <ul><li>One</li><li>Two</li></ul><pre>  def f():\n      return 1</pre><noscript>Enable JS</noscript>
    </body></html>"""
    parsed = parse(page, filename="menu.htm")
    _assert_well_formed(parsed)
    assert "fake" not in parsed.text and "color" not in parsed.text and "comment" not in parsed.text
    assert "Enable JS" not in parsed.text
    assert _section_texts(parsed) == {
        (): "Shop\n\nHome",
        ("Café menu",): "Coffee and tea\nall day & night.",
        ("Café menu", "Prices"): "Item: Espresso\nPrice: 2 €\n\nOne\n\nTwo\n\n  def f():\n      return 1",
    }


def test_json_becomes_key_value_lines_a_paragraph_per_record():
    records = [
        {
            "name": "Ann",
            "address": {"city": "Zürich", "zip": 8001},
            "tags": ["a", "b"],
            "vip": True,
            "notes": None,
            "orders": [{"id": 1}, {"id": 2}],
        },
        {"name": "Bo"},
    ]
    parsed = parse(json.dumps(records).encode(), filename="people.json")
    assert parsed.text == (
        "name: Ann\naddress.city: Zürich\naddress.zip: 8001\ntags: a, b\nvip: true\norders[0].id: 1\norders[1].id: 2"
        "\n\nname: Bo"
    )
    parsed = parse(b'{"title": "T", "meta": {"lang": "en"}}', filename="doc.json")
    assert parsed.text == "title: T\n\nmeta.lang: en"


def test_invalid_or_hostile_json_is_refused_with_where():
    assert _reason(b'{"a": 1,\n "b": }', "a.json").startswith("not valid JSON: Expecting value at line 2")
    assert "nested" in _reason(b"[" * 5000 + b"]" * 5000, "a.json")
    assert "nested" in _reason(json.dumps(json.loads("[" * 150 + "1" + "]" * 150)).encode(), "a.json")


def test_json_lines_give_a_paragraph_per_line_and_name_a_bad_line():
    parsed = parse(b'{"q": "Why?", "a": "Because."}\n\n{"q": "How?"}\n', filename="faq.jsonl")
    assert parsed.text == "q: Why?\na: Because.\n\nq: How?"
    assert _reason(b'{"q": 1}\n{"q": \n', "faq.jsonl").startswith("not valid JSON on line 2")


def test_csv_rows_become_header_value_paragraphs():
    table = 'name,city,note\nAnn,"Paris, FR","two\nlines"\nBo,,\n,,\nCy,Oslo,x,extra\n'
    parsed = parse(table.encode(), filename="people.csv")
    assert parsed.text == (
        "name: Ann\ncity: Paris, FR\nnote: two\nlines\n\nname: Bo\n\nname: Cy\ncity: Oslo\nnote: x\ncolumn 4: extra"
    )
    semicolons = parse("Name;Preis\nKäse;3,50\n".encode(), filename="preise.csv", mime_type="text/csv")
    assert semicolons.text == "Name: Käse\nPreis: 3,50"
    tabs = parse(b"a\tb\n1\t2\n", filename="x.csv")
    assert tabs.text == "a: 1\nb: 2"


def test_csv_with_an_unclosed_quote_is_refused():
    reason = _reason(b'a,b\n1,"' + b"x" * 200_000 + b"\n", "broken.csv")
    assert reason.startswith("not valid CSV at line") and "unclosed quote" in reason


def test_pdf_text_comes_page_by_page():
    parsed = parse(pdf_bytes([["First page, line one.", "Line two."], ["Second page."]]), filename="r.pdf")
    assert parsed.text == "First page, line one.\nLine two.\n\nSecond page."
    assert parsed.sections == [Section((), 0, len(parsed.text))]


def test_an_encrypted_pdf_needs_a_password():
    plain = pdf_bytes([["Secret plans."]])
    for algorithm in ("RC4-128", "AES-256"):
        reason = _reason(files.encrypted_pdf(plain, "hunter2", algorithm=algorithm), "locked.pdf")
        assert reason.startswith("encrypted PDF: it needs a password")
    # Locked only against editing (no password to open it): readable, as in any viewer.
    assert parse(files.encrypted_pdf(plain, "", owner_password="owner"), filename="r.pdf").text == "Secret plans."


def test_a_corrupt_or_false_pdf_is_refused():
    good = pdf_bytes([["Some text."]])
    assert _reason(b"GIF89a not a pdf", "x.pdf").startswith("not a PDF")
    assert _reason(good[: len(good) // 2], "x.pdf").startswith("damaged or not a PDF")
    assert _reason(b"%PDF-1.7\n" + bytes(range(256)) * 40, "x.pdf").startswith("damaged or not a PDF")


def test_a_pdf_without_text_asks_for_ocr():
    assert "OCR" in _reason(pdf_bytes([[], []]), "scan.pdf")


def test_docx_headings_come_from_paragraph_styles():
    document = docx.Document()
    custom = document.styles.add_style("Chapter Part", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = document.styles["Heading 2"]  # a custom style based on a heading style still heads
    data = docx_bytes(
        "Before.",
        (1, "Manual"),
        "Intro text.",
        (2, "Setup"),
        "Step one.",
        [["Key", "Value"], ["a", "1"]],
        (3, "Detail"),
        (2, "Usage"),
        "Use it.",
        ("Chapter Part", "Custom heading"),
        "Under custom.",
        document=document,
    )
    parsed = parse(data, filename="manual.docx")
    _assert_well_formed(parsed)
    assert _section_texts(parsed) == {
        (): "Before.",
        ("Manual",): "Intro text.",
        ("Manual", "Setup"): "Step one.\n\nKey | Value\n\na | 1",
        ("Manual", "Setup", "Detail"): "",
        ("Manual", "Usage"): "Use it.",
        ("Manual", "Custom heading"): "Under custom.",
    }
    assert parsed.text.startswith("Before.\n\nManual\n\nIntro text.")


def test_a_docx_table_row_is_a_paragraph_and_a_merged_cell_counts_once():
    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Merged"
    table.cell(0, 2).text = "c"
    for column, value in enumerate(["a", "a", "b"]):
        table.cell(1, column).text = value
    assert parse(docx_bytes(document=document), filename="t.docx").text == "Merged | c\n\na | a | b"


def test_a_docx_that_is_not_a_zip_or_not_a_word_file_is_refused():
    assert "a .docx is a zip archive" in _reason(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 old Word 97", "old.docx")
    other_zip = io.BytesIO()
    with zipfile.ZipFile(other_zip, "w") as archive:
        archive.writestr("hello.txt", "not a document")
    assert _reason(other_zip.getvalue(), "fake.docx").startswith("not a readable Word document")


def test_a_docx_zip_bomb_is_refused_before_it_is_unpacked():
    bomb = files.zip_bomb(limits.max_expanded_bytes() + 1)
    assert len(bomb) < limits.max_expanded_bytes() // 100  # small on the wire
    reason = _reason(bomb, "bomb.docx")
    assert reason.startswith("the .docx would unpack to 51 MB, more than the 50 MB allowed")


def test_a_docx_zip_that_lies_about_its_sizes_is_refused_without_inflating_past_them():
    reason = _reason(files.lying_zip(expanded=limits.max_expanded_bytes() + 1, declared=100), "liar.docx")
    assert reason.startswith("not a readable Word document") and "CRC" in reason


def test_a_docx_of_too_many_entries_is_refused():
    many = io.BytesIO()
    with zipfile.ZipFile(many, "w") as archive:
        for number in range(word.MAX_ZIP_ENTRIES + 1):
            archive.writestr(f"e{number}", b"")
    assert "more than the 10000 allowed" in _reason(many.getvalue(), "many.docx")
