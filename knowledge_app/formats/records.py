"""JSON, JSON Lines and CSV: data, written out as ``key: value`` lines a model and a search index can read.

Each record becomes a paragraph, so the chunker keeps a record whole when it can
and a search hit is one row or object rather than half of two.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from knowledge_app.parsed import Outline, Parsed, UnreadableDocument

MAX_DEPTH = 100  # deeper JSON is machine output nobody reads, and unbounded depth would exhaust the stack
_DELIMITERS = ",;\t|"


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _lines(value: Any, key: str = "", depth: int = 0) -> Iterator[str]:
    """``key: value`` lines for ``value``; nested keys are dotted (``a.b``), items of lists indexed (``a[0]``)."""
    if depth > MAX_DEPTH:
        raise UnreadableDocument(f"the JSON is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _lines(item, f"{key}.{name}" if key else str(name), depth + 1)
    elif isinstance(value, list) and not any(isinstance(item, (dict, list)) for item in value):
        text = ", ".join(filter(None, map(_scalar, value)))
        if text:
            yield f"{key}: {text}" if key else text
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _lines(item, f"{key}[{index}]", depth + 1)
    elif text := _scalar(value):
        yield f"{key}: {text}" if key else text


def _load(text: str, where: str = "") -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UnreadableDocument(
            f"not valid JSON{where}: {error.msg} at line {error.lineno}, column {error.colno}"
        ) from None
    except RecursionError:
        raise UnreadableDocument(f"the JSON{where} is nested too deeply to read") from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise UnreadableDocument(f"not valid JSON{where}: {error}") from None


def are_json_lines(text: str) -> bool:
    """Whether every line with text is a JSON object: records kept as they are written (a ``.txt`` of them)."""
    lines = [line for line in text.split("\n") if line.strip()]
    for line in lines:
        if not line.lstrip().startswith("{"):
            return False
        try:
            if not isinstance(json.loads(line), dict):
                return False
        except (ValueError, RecursionError):
            return False
    return bool(lines)


def json_document(text: str) -> Parsed:
    """One JSON value: a paragraph per item of a top-level array, or per key of a top-level object."""
    value = _load(text)
    outline = Outline()
    if isinstance(value, list):
        for item in value:
            outline.paragraph("\n".join(_lines(item)))
    elif isinstance(value, dict):
        for name, item in value.items():
            outline.paragraph("\n".join(_lines(item, str(name))))
    else:
        outline.paragraph("\n".join(_lines(value)))
    return outline.build()


def json_lines(text: str) -> Parsed:
    """JSON Lines: one JSON value per line, each a paragraph; blank lines are allowed and skipped."""
    outline = Outline()
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            outline.paragraph("\n".join(_lines(_load(line, f" on line {number}"))))
    return outline.build()


def _delimiter(header_line: str) -> str:
    """The delimiter the header row uses most: Excel writes ';' where ',' is the decimal mark, and TSV uses tabs.

    The header decides because it rarely quotes anything, where ``csv.Sniffer``
    guesses from the whole sample and is known to pick a character from inside
    quoted values.
    """
    counts = {delimiter: header_line.count(delimiter) for delimiter in _DELIMITERS}
    best = max(counts, key=lambda delimiter: counts[delimiter])
    return best if counts[best] else ","


def csv_rows(text: str) -> Parsed:
    """A paragraph per data row, as ``header: value`` lines; empty cells are left out (they say nothing)."""
    reader = csv.reader(io.StringIO(text), delimiter=_delimiter(text.split("\n", 1)[0]))
    outline = Outline()
    try:
        header = [name.strip() for name in next(reader, [])]
        for row in reader:
            pairs = []
            for index, value in enumerate(row):
                name = header[index] if index < len(header) and header[index] else f"column {index + 1}"
                if value.strip():
                    pairs.append(f"{name}: {value.strip()}")
            outline.paragraph("\n".join(pairs))
    except csv.Error as error:
        raise UnreadableDocument(
            f"not valid CSV at line {reader.line_num}: {error} (an unclosed quote is the usual cause)"
        ) from None
    return outline.build()
