"""What parsing gives: a document's text and the spans of it under each heading.

Kept apart from ``parsing`` so that each format's module can build one without
importing the dispatcher that imports them all.
"""

from __future__ import annotations

from dataclasses import dataclass

from cognizes.access import limits


class UnreadableDocument(ValueError):
    """A file that gives no text; ``reason`` says why in words the person who uploaded it can act on."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Section:
    """The text under one heading: ``text[start:end]``, without the heading line itself.

    ``heading_path`` is the chain of headings above it, outermost first; ``()`` is
    text before any heading (or a document without headings). A heading with
    nothing under it has ``start == end``, so the outline stays whole for a reader
    while the chunker skips it. Spans never begin or end with whitespace.
    """

    heading_path: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class Parsed:
    """A document's text and its sections, in document order and not overlapping.

    ``whole_lines``: each line is a record that means nothing cut (a text file of JSON
    lines, as ADK's ``VertexAiRagMemoryService`` uploads a session), so the chunker
    packs whole lines and never cuts one, even one longer than a chunk.
    """

    text: str
    sections: list[Section]
    whole_lines: bool = False
    pages: int | None = None
    """How many pages it had, for formats with pages (a PDF): shown as parsed while the rest is embedded."""


def trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """``start, end`` moved inwards past whitespace, so that ``text[start:end]`` equals its own ``strip()``."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _clean_title(title: str) -> str:
    return " ".join(title.split())


class Outline:
    """Builds a ``Parsed`` from headings and paragraphs as a converter meets them.

    Formats whose text we write ourselves (HTML, DOCX, JSON, CSV, PDF) put each
    paragraph after a blank line, which is also where the chunker looks for
    paragraph breaks, and each heading on a line of its own above its section.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._stack: list[tuple[int, str]] = []  # (level, title) of the headings open above the current text
        self._sections: list[Section] = []
        self._body_start = 0  # offset, and index in _parts, where the current section's text begins
        self._body_part = 0

    def heading(self, level: int, title: str) -> None:
        """Close the current section and open one under ``title`` (nested under any lower ``level``)."""
        title = _clean_title(title)
        if not title:
            return
        self._close()
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, title))
        self._write(title)
        self._body_start, self._body_part = self._length, len(self._parts)

    def paragraph(self, text: str) -> None:
        """Add a paragraph to the current section; blank lines inside it are dropped, so it stays one paragraph.

        Lines keep their indentation (code in ``<pre>`` reads as code) but lose trailing spaces.
        """
        limits.check_deadline()  # every format's text comes through here: a hostile file cannot parse for ever
        text = "\n".join(line.rstrip() for line in text.splitlines() if line.strip())
        if text:
            self._write(text)

    def build(self) -> Parsed:
        self._close()
        return Parsed(text="".join(self._parts), sections=self._sections)

    def _write(self, text: str) -> None:
        if self._length:
            self._parts.append("\n\n")
            self._length += 2
        self._parts.append(text)
        self._length += len(text)

    def _close(self) -> None:
        body = "".join(self._parts[self._body_part :])  # only this section's text: the whole would be quadratic
        start = self._body_start + len(body) - len(body.lstrip())
        end = max(start, self._length - (len(body) - len(body.rstrip())))
        path = tuple(title for _, title in self._stack)
        if path or start < end:  # the text before the first heading counts only when there is some
            self._sections.append(Section(path, start, end))
