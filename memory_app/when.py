"""The time a question names ("on October 13, 2023", "in May 2023", "last year"), as a span.

Search ranks memories by how close their ``event_time`` is to that span, a further
signal beside meaning and keywords (memory_app.search). Relative expressions are
resolved against a reference moment: the newest event the user's memories
remember, so "last year" means the year before the conversation, not before today.

Hand-written patterns for the forms questions use, rather than a general date
parser: a question is mostly not a date, and a parser that finds one in "may I" or
"a second" would move every ranking. What is not recognised yields no span, and
search ranks as if no time were named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

MONTHS = {
    name: number
    for number, name in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}
_MONTH = "(" + "|".join(MONTHS) + ")"
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"


@dataclass(frozen=True)
class Span:
    """From ``start`` (inclusive) to ``end`` (exclusive)."""

    start: datetime
    end: datetime


def named_span(question: str, reference: datetime) -> Span | None:
    """The span of time ``question`` names, the most precise first; None if it names none."""
    text = question.casefold()
    for pattern, build in _PATTERNS:
        match = re.search(pattern, text)
        if match:
            try:
                return build(match, reference)
            except (ValueError, OverflowError):  # "February 30, 2023"; "99999999999 days ago" is before year 1
                return None
    return None


def _day(year: int, month: int, day: int, reference: datetime) -> Span:
    start = reference.replace(year=year, month=month, day=day, hour=0, minute=0, second=0, microsecond=0)
    return Span(start, start + timedelta(days=1))


def _month(year: int, month: int, reference: datetime) -> Span:
    start = reference.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=year + 1, month=1) if month == 12 else start.replace(month=month + 1)
    return Span(start, end)


def _year(year: int, reference: datetime) -> Span:
    start = reference.replace(year=year, month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    return Span(start, start.replace(year=year + 1))


def _month_before(month: int, reference: datetime) -> Span:
    """A month named without a year: its latest occurrence up to the reference."""
    year = reference.year if month <= reference.month else reference.year - 1
    return _month(year, month, reference)


def _yesterday(reference: datetime) -> Span:
    day = reference - timedelta(days=1)
    return _day(day.year, day.month, day.day, reference)


def _last_month(reference: datetime) -> Span:
    year, month = (reference.year, reference.month - 1) if reference.month > 1 else (reference.year - 1, 12)
    return _month(year, month, reference)


def _ago(amount: int, unit: str, reference: datetime) -> Span:
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
    at = reference - timedelta(days=amount * days)
    return Span(at - timedelta(days=days / 2), at + timedelta(days=days / 2))


_PATTERNS = [
    (rf"\b{_MONTH} {_DAY},? {_YEAR}\b", lambda m, r: _day(int(m[3]), MONTHS[m[1]], int(m[2]), r)),
    (rf"\b{_DAY} (?:of )?{_MONTH},? {_YEAR}\b", lambda m, r: _day(int(m[3]), MONTHS[m[2]], int(m[1]), r)),
    (rf"\b{_MONTH},? {_YEAR}\b", lambda m, r: _month(int(m[2]), MONTHS[m[1]], r)),
    (rf"\b(?:in|during|of|since) {_YEAR}\b", lambda m, r: _year(int(m[1]), r)),
    (rf"\b(?:in|during|of|last|early|late|mid|mid-) ?{_MONTH}\b", lambda m, r: _month_before(MONTHS[m[1]], r)),
    (r"\byesterday\b", lambda m, r: _yesterday(r)),
    (r"\blast (week|weekend)\b", lambda m, r: Span(r - timedelta(days=8), r)),
    (r"\blast month\b", lambda m, r: _last_month(r)),
    (r"\blast year\b", lambda m, r: _year(r.year - 1, r)),
    (
        r"\b([0-9]+|a|an|one|two|three|four|five|six|seven|eight|nine|ten) (day|week|month|year)s? ago\b",
        lambda m, r: _ago(int(m[1]) if m[1].isdigit() else _NUMBERS[m[1]], m[2], r),
    ),
]
