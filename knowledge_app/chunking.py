"""A parsed document into chunks for embedding: ``chunk(parsed, size=..., overlap=...) -> list[Chunk]``.

``size`` and ``overlap`` are in tokens, as Vertex AI RAG Engine's
``fixed_length_chunking`` has them (``chunk_size`` 1024 and ``chunk_overlap`` 200
by default). Tokens are counted without a tokenizer, which would have to be
downloaded and would tie chunks to one model: a word of a script written with
spaces is a token (a word longer than ``WORD_PIECE_CHARS`` is one per started
piece of that many characters, as a base64 blob or URL costs a model many), and
each character of Chinese, Japanese, Korean (spaced, but models' tokenizers cut
Hangul by syllable too) and of other scripts written without spaces (Thai, Lao,
Khmer, Myanmar) is one.

Chunks follow the document's structure, since a chunk that is one whole thought
embeds and reads better than a window cut at a fixed count:

- a chunk never crosses a section (heading) boundary, and carries its heading path;
- inside a section it holds whole paragraphs (blocks between blank lines) while they fit;
- a paragraph that fits no chunk is split at sentence ends (``.!?`` followed by
  a space, ``。！？``, line breaks), its first sentences filling what is left of
  the chunk before; a sentence that fits no chunk is split at word boundaries
  (between characters in CJK), that is, between tokens;
- in a document of records (``parsed.whole_lines``) the units are lines, never cut:
  a line longer than ``size`` is a chunk by itself;
- the next chunk begins with the last sentences of the one before, as many as
  fit in ``overlap`` tokens (fewer, or none, when more would push a paragraph
  that fits a chunk out of it, or when a single sentence is longer than ``overlap``).

Spans are exact: ``parsed.text[chunk.start:chunk.end] == chunk.text``, and that
text never begins or ends with whitespace, so it also equals its own ``strip()``.

A document that would make more than ``max_chunks`` chunks is refused as soon as that is
certain (more than ``max_chunks * size`` tokens read), not after millions of chunks were
built: ``chunk_size`` 1 on a long file asked for millions (issue 41 J2). Within a
``cognizes.access.limits.parse_deadline`` the cutting checks the deadline at each paragraph.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate

from cognizes.access import limits
from knowledge_app.parsed import Parsed

VERTEX_CHUNK_SIZE = 1024
VERTEX_CHUNK_OVERLAP = 200
WORD_PIECE_CHARS = 16

# CJK and the scripts written without spaces between words: each character counts as a token.
_UNSPACED = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u2e80-\u2fdf"  # CJK radicals, Kangxi radicals
    "\u3001-\u303f"  # CJK symbols and punctuation (not U+3000, the ideographic space)
    "\u3040-\u31ff"  # Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK strokes
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\ua960-\ua97f"  # Hangul Jamo Extended-A
    "\uac00-\ud7ff"  # Hangul syllables, Jamo Extended-B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff01-\uffef"  # full-width forms, half-width Katakana and Hangul
    "\U00020000-\U0003134f"  # CJK Extensions B-G
)
_TOKEN = re.compile(rf"[{_UNSPACED}]|[^\s{_UNSPACED}]{{1,{WORD_PIECE_CHARS}}}")
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")
_LINE_BREAK = re.compile(r"\n")
_SENTENCE_END = re.compile(r"[.!?؟।]+[\"'”’)\]»]*(?=\s|$)|[。！？．｡]+[」』”’）)\]]*|\n")


@dataclass(frozen=True)
class Chunk:
    """``text`` is ``parsed.text[start:end]``; ``heading_path`` is that of the section it lies in."""

    text: str
    heading_path: tuple[str, ...]
    start: int
    end: int


def count_tokens(text: str) -> int:
    """Tokens as ``chunk`` counts them (see the module's docstring)."""
    return sum(1 for _ in _TOKEN.finditer(text))


def _segments(boundary: re.Pattern[str], text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Spans of ``text[start:end]`` cut after each match of ``boundary``, without edge whitespace; none empty."""
    position = start
    for match in boundary.finditer(text, start, end):
        yield from _trimmed(text, position, match.end())
        position = match.end()
    yield from _trimmed(text, position, end)


def _trimmed(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        yield start, end


class _Budget:
    """The tokens a document may have before it certainly makes more than ``max_chunks`` chunks of ``size``."""

    def __init__(self, size: int, max_chunks: int | None) -> None:
        self.size, self.max_chunks = size, max_chunks
        self.left = None if max_chunks is None else max_chunks * size

    def spend(self, tokens: int) -> None:
        limits.check_deadline()
        if self.left is not None:
            self.left -= tokens
            if self.left < 0:  # each chunk holds at most ``size`` tokens: more than max_chunks of them are needed
                assert self.max_chunks is not None  # left is counted only under a maximum
                limits.check_chunks(self.max_chunks + 1, size=self.size)

    def count(self, chunks: int) -> None:
        if self.max_chunks is not None:
            limits.check_chunks(chunks, size=self.size)


def _pieces(
    text: str, start: int, end: int, size: int, budget: _Budget
) -> tuple[list[tuple[int, int, int]], list[int]]:
    """A section's units of packing, ``(start, end, tokens)``: its sentences, or the tokens of a sentence longer
    than ``size``; and for each unit, the index one past the last unit of its paragraph."""
    pieces: list[tuple[int, int, int]] = []
    paragraph_ends: list[int] = []
    for paragraph_start, paragraph_end in _segments(_PARAGRAPH_BREAK, text, start, end):
        first = len(pieces)
        for sentence_start, sentence_end in _segments(_SENTENCE_END, text, paragraph_start, paragraph_end):
            tokens = [match.span() for match in _TOKEN.finditer(text, sentence_start, sentence_end)]
            budget.spend(len(tokens))
            if len(tokens) <= size:
                pieces.append((sentence_start, sentence_end, len(tokens)))
            else:
                pieces.extend((token_start, token_end, 1) for token_start, token_end in tokens)
        paragraph_ends.extend([len(pieces)] * (len(pieces) - first))
    return pieces, paragraph_ends


def _lines(text: str, start: int, end: int, size: int, budget: _Budget) -> tuple[list[tuple[int, int, int]], list[int]]:
    """``_pieces`` for records: each line a unit and a paragraph of its own, counted as at most ``size`` tokens so
    that a line longer than a chunk is packed as a chunk by itself rather than cut."""
    pieces = []
    for line_start, line_end in _segments(_LINE_BREAK, text, start, end):
        tokens = min(count_tokens(text[line_start:line_end]), size)
        budget.spend(tokens)
        pieces.append((line_start, line_end, tokens))
    return pieces, list(range(1, len(pieces) + 1))


def _pack(pieces: list[tuple[int, int, int]], paragraph_ends: list[int], size: int, overlap: int) -> list[range]:
    """The chunks as ranges of piece indexes: whole paragraphs while they fit, then sentences, then tokens.

    ``pieces[first:index]`` is the chunk being filled, of which those before ``new``
    are the overlap carried from the chunk before. Each chunk adds at least one
    new piece, since the overlap is cut so that the next piece always fits.
    """
    tokens = list(accumulate((piece[2] for piece in pieces), initial=0))  # tokens[k]: those of pieces[:k]
    chunks: list[range] = []
    first = new = index = 0

    def close() -> None:
        nonlocal first, new
        chunks.append(range(first, index))  # never empty, so index >= 1 below
        # Room for the overlap: all that leaves the next paragraph whole when the next chunk begins one that fits,
        # else all that leaves room for the next piece (a paragraph already split has no wholeness to keep).
        rest = tokens[paragraph_ends[index]] - tokens[index]
        whole = rest <= size and paragraph_ends[index - 1] != paragraph_ends[index]
        budget = min(overlap, size - (rest if whole else pieces[index][2]))
        first = new = index
        while first > chunks[-1].start and tokens[index] - tokens[first - 1] <= budget:
            first -= 1

    while index < len(pieces):
        paragraph_end = paragraph_ends[index]
        rest = tokens[paragraph_end] - tokens[index]
        if tokens[index] - tokens[first] + rest <= size:
            index = paragraph_end
        elif index > new and rest <= size:  # the paragraph fits in a chunk of its own: start one, keep it whole
            close()
        else:
            while index < paragraph_end and tokens[index + 1] - tokens[first] <= size:
                index += 1
            close()
    if index > new:
        chunks.append(range(first, index))
    return chunks


def chunk(parsed: Parsed, *, size: int, overlap: int, max_chunks: int | None = None) -> list[Chunk]:
    """``parsed``'s sections cut into chunks of at most ``size`` tokens (a record's line may be one longer),
    overlapping by at most ``overlap``; ``cognizes.access.limits.LimitExceeded`` if there would be more than
    ``max_chunks``.

    Sections with no text are skipped. The result depends only on the arguments.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a whole number of tokens, at least 1 (got {size!r})")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < size:
        raise ValueError(f"overlap must be a whole number of tokens from 0 to size - 1 = {size - 1} (got {overlap!r})")
    text = parsed.text
    chunks = []
    units = _lines if parsed.whole_lines else _pieces
    budget = _Budget(size, max_chunks)
    for section in parsed.sections:
        pieces, paragraph_ends = units(text, section.start, section.end, size, budget)
        for indexes in _pack(pieces, paragraph_ends, size, overlap):
            start, end = pieces[indexes.start][0], pieces[indexes.stop - 1][1]
            chunks.append(Chunk(text[start:end], section.heading_path, start, end))
        budget.count(len(chunks))
    return chunks
