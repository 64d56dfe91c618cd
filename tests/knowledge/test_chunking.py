"""knowledge_app.chunking: structure-respecting chunks, bounded in tokens, with exact spans and bounded overlap."""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest

from knowledge_app.chunking import VERTEX_CHUNK_OVERLAP, VERTEX_CHUNK_SIZE, Chunk, chunk, count_tokens
from knowledge_app.parsing import Parsed, Section, parse
from tests.knowledge import files


def _sentences(count: int, words: int = 5, tag: str = "s") -> str:
    return " ".join(f"{tag}{i} " + " ".join(["word"] * (words - 2)) + " end." for i in range(count))


def _check(parsed: Parsed, chunks: list[Chunk], size: int, overlap: int) -> None:
    """What every chunking must hold: spans exact, size kept, sections kept, overlap bounded, nothing lost."""
    for piece in chunks:
        assert piece.text == parsed.text[piece.start : piece.end]  # exact span ...
        assert piece.text == piece.text.strip() and piece.text  # ... that begins and ends with text
        assert count_tokens(piece.text) <= size
        sections = [s for s in parsed.sections if s.start <= piece.start and piece.end <= s.end]
        assert sections and sections[0].heading_path == piece.heading_path  # inside one section, with its path
    for before, after in itertools.pairwise(chunks):
        assert after.end > before.end  # each chunk brings text of its own
        if after.start < before.end:
            assert after.heading_path == before.heading_path
            assert count_tokens(parsed.text[after.start : before.end]) <= overlap
    covered = set()
    for piece in chunks:
        covered.update(range(piece.start, piece.end))
    for section in parsed.sections:
        for offset in range(section.start, section.end):
            assert offset in covered or parsed.text[offset].isspace(), f"lost {parsed.text[offset]!r} at {offset}"


def _chunked(parsed: Parsed, size: int, overlap: int) -> list[Chunk]:
    chunks = chunk(parsed, size=size, overlap=overlap)
    _check(parsed, chunks, size, overlap)
    return chunks


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("Hello, world.", 2),
        ("Crème brûlée façade", 3),
        ("Привет, мир!", 2),
        ("مرحبا بالعالم", 2),
        ("知识库", 3),
        ("日本語のテキスト。", 9),
        ("한국어 문서", 5),  # Hangul counts by syllable, as models' tokenizers cut it finer than words
        ("a" * 16, 1),
        ("a" * 17, 2),  # a long word costs a model more than one token
        ("GPU 加速 ok", 4),
    ],
)
def test_tokens_are_words_of_spaced_scripts_and_characters_of_cjk(text, tokens):
    assert count_tokens(text) == tokens


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (-1, 0), (10, 10), (10, 11), (10, -1), (True, 0), (10, 1.5)])
def test_size_and_overlap_are_checked(size, overlap):
    with pytest.raises(ValueError):
        chunk(Parsed("text", [Section((), 0, 4)]), size=size, overlap=overlap)


_GUIDE = (
    "Preface text.\n\n# Install\n\n" + _sentences(12) + "\n\n## On Linux\n\nUse apt. It works.\n\n"
    "## On macOS\n\n" + _sentences(3, tag="m") + "\n\n# Use\n\n" + _sentences(2, tag="u")
)


def test_chunks_keep_their_headings_and_never_cross_a_section():
    parsed = parse(_GUIDE.encode(), filename="guide.md")
    chunks = _chunked(parsed, size=20, overlap=5)
    assert [c.heading_path for c in chunks] == [
        (),
        ("Install",),
        ("Install",),
        ("Install",),
        ("Install",),
        ("Install", "On Linux"),
        ("Install", "On macOS"),
        ("Use",),
    ]
    assert chunks[0].text == "Preface text."
    assert chunks[5].text == "Use apt. It works."
    assert chunks[2].text.startswith("s3 ")  # the overlap: s3 ended the chunk before


def test_the_vertex_defaults_keep_a_short_section_whole():
    parsed = parse(_GUIDE.encode(), filename="guide.md")
    chunks = _chunked(parsed, size=VERTEX_CHUNK_SIZE, overlap=VERTEX_CHUNK_OVERLAP)
    assert len(chunks) == len(parsed.sections)
    assert [c.text for c in chunks] == [parsed.text[s.start : s.end] for s in parsed.sections]


def test_whole_paragraphs_fill_a_chunk_while_they_fit():
    paragraphs = [_sentences(2, tag=f"p{n}-") for n in range(6)]  # 10 tokens each
    parsed = parse("\n\n".join(paragraphs).encode(), filename="a.txt")
    chunks = _chunked(parsed, size=25, overlap=0)
    assert [c.text for c in chunks] == ["\n\n".join(paragraphs[i : i + 2]) for i in (0, 2, 4)]
    # With overlap, a paragraph that fits a chunk still moves whole to the next rather than being split.
    for piece in _chunked(parsed, size=25, overlap=5):
        assert piece.text.endswith(" end.") and any(piece.text.endswith(p) for p in paragraphs)


def test_a_long_paragraph_is_split_at_sentence_ends():
    text = _sentences(20) + "\nA line without a full stop\n" + _sentences(5, tag="t")
    parsed = parse(text.encode(), filename="a.txt")
    chunks = _chunked(parsed, size=12, overlap=0)
    sentences = set(re.findall(r"\w+ word word word end\.|A line without a full stop", parsed.text))
    for piece in chunks:
        assert re.fullmatch(r"(?:\w+ word word word end\.|A line without a full stop)(?:\s+\S.*)?", piece.text, re.S)
        assert piece.text.endswith("end.") or piece.text.endswith("full stop")
    assert sum(len(re.findall("|".join(map(re.escape, sentences)), c.text)) for c in chunks) == 26


def test_a_too_long_sentence_is_split_at_word_boundaries():
    words = [f"w{i}" for i in range(100)]
    parsed = parse(" ".join(words).encode(), filename="a.txt")
    chunks = _chunked(parsed, size=30, overlap=0)
    assert [c.text.split() for c in chunks] == [words[0:30], words[30:60], words[60:90], words[90:100]]


def test_overlap_is_the_last_sentences_of_the_chunk_before_up_to_overlap_tokens():
    parsed = parse(_sentences(30).encode(), filename="a.txt")  # 5 tokens a sentence
    chunks = _chunked(parsed, size=20, overlap=12)
    assert len(chunks) > 3
    for before, after in itertools.pairwise(chunks):
        shared = parsed.text[after.start : before.end]
        assert before.text.endswith(shared) and after.text.startswith(shared)
        assert count_tokens(shared) == 10  # two whole sentences: a third would pass 12
        assert re.fullmatch(r"s\d+ word word word end\. s\d+ word word word end\.", shared)


def test_no_overlap_when_asked_for_none():
    parsed = parse(_sentences(30).encode(), filename="a.txt")
    chunks = _chunked(parsed, size=20, overlap=0)
    assert all(after.start > before.end for before, after in itertools.pairwise(chunks))
    assert " ".join(c.text for c in chunks) == parsed.text


def test_cjk_without_spaces_is_chunked_by_characters_with_overlap():
    text = "".join(chr(0x4E00 + (i * 7) % 20000) for i in range(1000))  # 1000 ideographs, no spaces, no punctuation
    parsed = parse(text.encode(), filename="a.txt")
    chunks = _chunked(parsed, size=100, overlap=20)
    assert all(len(c.text) <= 100 for c in chunks)
    assert chunks[0].text == text[:100] and chunks[1].text == text[80:180]
    assert chunks[-1].end == len(text)


def test_cjk_sentences_end_at_cjk_full_stops():
    sentence = "知识库让智能体检索文档。"  # 12 tokens
    parsed = parse((sentence * 10).encode(), filename="a.txt")
    chunks = _chunked(parsed, size=30, overlap=12)
    assert chunks[0].text == sentence * 2
    assert chunks[1].text == sentence * 2  # one overlapping sentence, then one new: three would pass 30
    assert chunks[1].start == len(sentence)


def test_one_enormous_word_is_cut_into_bounded_pieces():
    word = "x" * 10_000
    parsed = parse(f"Before it.\n\n{word}\n\nAfter it.".encode(), filename="a.txt")
    chunks = _chunked(parsed, size=50, overlap=10)
    assert all(len(c.text) <= 50 * 16 for c in chunks)
    assert chunks[0].text.startswith("Before it.") and chunks[-1].text.endswith("After it.")


def test_empty_sections_are_skipped():
    parsed = parse(b"# Empty\n\n## Also empty\n   \n\n## Full\n\nText here.\n\n# Trailing\n", filename="a.md")
    assert len(parsed.sections) == 4
    chunks = _chunked(parsed, size=10, overlap=2)
    assert chunks == [Chunk("Text here.", ("Empty", "Full"), chunks[0].start, chunks[0].end)]
    blank = Parsed("   \n\n  ", [Section((), 0, 7), Section(("H",), 3, 3)])  # untrimmed and empty spans
    assert chunk(blank, size=5, overlap=1) == []


def test_chunking_is_deterministic():
    parsed = parse(_GUIDE.encode(), filename="guide.md")
    first = chunk(parsed, size=15, overlap=4)
    assert all(chunk(parsed, size=15, overlap=4) == first for _ in range(3))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, 50])
def test_invariants_hold_for_every_size_on_mixed_text(size):
    text = (
        "# Mixed\n\nEnglish sentence one. Another one here!\n\n日本語の文です。次の文です？\n\n"
        "Русский текст. И ещё.\n\n" + "z" * 90 + " tail\n\n## Next\n\n" + _sentences(7)
    )
    parsed = parse(text.encode(), filename="a.md")
    for overlap in {0, size // 2, size - 1}:
        _chunked(parsed, size=size, overlap=overlap)


def test_invariants_hold_on_random_documents():
    parts = [
        "word",
        "x" * 40,
        "日本",
        "語。",
        "end.",
        "why?",
        "\n",
        "\n\n",
        "# Head\n",
        "\n## Sub\n",
        "Привет",
        "한국어",
    ]
    rng = random.Random(20260522)
    for _ in range(300):
        text = "".join(rng.choice(parts) + rng.choice([" ", "", "\n"]) for _ in range(rng.randint(1, 120)))
        if not text.strip():
            continue
        size = rng.randint(1, 40)
        _chunked(parse(text.encode(), filename="a.md"), size=size, overlap=rng.randint(0, size - 1))


@pytest.mark.parametrize("fmt", files.MULTILINGUAL_FORMATS)
def test_every_format_parsed_chunks_with_the_invariants(fmt):
    data, filename = files.multilingual_file(fmt)
    parsed = parse(data, filename=filename)
    for size, overlap in ((1024, 200), (8, 3), (3, 0)):
        assert _chunked(parsed, size=size, overlap=overlap)


def _session_lines(texts: list[str]) -> str:
    """A session as ADK's VertexAiRagMemoryService uploads it: a .txt of one JSON object per event."""
    return "\n".join(
        json.dumps({"author": "user", "timestamp": 1.5 + n, "text": text}, ensure_ascii=False)
        for n, text in enumerate(texts)
    )


def test_a_text_file_of_json_lines_is_chunked_in_whole_lines_even_a_line_longer_than_a_chunk():
    texts = [
        "I moved to Lisbon. It rains less. " * 3,
        "我住在里斯本。我喜欢这里。" * 4,
        "Меня зовут Алексей. Привет.",
        "word " * 200,
        "Meet at the Café. Bring the map.",
    ]
    parsed = parse(_session_lines(texts).encode(), filename="tmpa1b2.txt", mime_type="text/plain")
    assert parsed.whole_lines
    chunks = chunk(parsed, size=30, overlap=8)
    assert len(chunks) > 2
    for piece in chunks:
        lines = piece.text.split("\n")
        assert all(json.loads(line)["author"] == "user" for line in lines)  # nothing cut: every line reads
        assert len(lines) == 1 or count_tokens(piece.text) <= 30
    kept = {json.loads(line)["text"] for piece in chunks for line in piece.text.split("\n")}
    assert kept == set(texts)
    assert any(count_tokens(piece.text) > 30 for piece in chunks)  # the 200-word line: a chunk by itself


def test_prose_with_a_brace_line_or_a_json_array_line_is_not_taken_for_records():
    for text in ('{"a": 1}\nThen some prose. And more.', "[1, 2]\n[3]", "Just prose. Two sentences."):
        assert not parse(text.encode(), filename="notes.txt").whole_lines
