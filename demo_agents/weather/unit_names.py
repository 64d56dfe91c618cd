"""Which temperature unit a text names, in any of the ~330 languages of Unicode's CLDR: the demo's one rule for it.

The offline model reads a unit twice: in what a person says ("温度は華氏で教えてください": acknowledge it) and
in the memories ``load_memory`` returns (which unit to ask ``get_weather`` for). An English regex for
"celsius|fahrenheit" made both forget every other language (issue 43). Meaning does not work here either:
multilingual-e5-small places "请用摄氏度告诉我温度" nearer "I prefer Fahrenheit" than "I prefer Celsius"
(margins of ±0.01 in every CJK and Arabic case measured), so it cannot tell the two scales apart.

The names of two units are a closed vocabulary that CLDR already translates, so the rule is a table:
``unit_names.json``, each language's words for each unit, made from CLDR by ``build_table`` (Babel, a
documentation dependency, is needed only to rebuild it). The table was built from CLDR's unit names alone
and tested on sentences written for the tests (tests/runtime/test_demo_languages.py), not taken from it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Literal

Unit = Literal["celsius", "fahrenheit"]
UNITS: tuple[Unit, Unit] = ("celsius", "fahrenheit")
TABLE = Path(__file__).with_name("unit_names.json")
_CLDR_UNIT = {"celsius": "temperature-celsius", "fahrenheit": "temperature-fahrenheit"}
_SHORTEST = 3
"""A name shorter than this ("C" of Vietnamese "độ C") is kept only with the words around it ("độ c")."""


def fold(text: str) -> str:
    """Text as the table holds it: NFKC (℉ is °F), case-folded, without combining marks (accents, Arabic vowels)."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


def unit_named(text: str) -> Unit | None:
    """The unit ``text`` names (the last named, if both are: "not Celsius, Fahrenheit" is rare, "Fahrenheit,
    not Celsius" too, so which to trust is a guess either way; the later holds as in a correction), or None."""
    folded = fold(text)
    found: list[tuple[int, Unit]] = []
    for unit, pattern in _patterns().items():
        found += [(match.end(), unit) for match in pattern.finditer(folded)]
    return max(found)[1] if found else None


@lru_cache(maxsize=1)
def _patterns() -> dict[Unit, re.Pattern[str]]:
    table: dict[str, list[str]] = json.loads(TABLE.read_text(encoding="utf-8"))
    # Longest first, so "华氏度" is taken whole; a stem matches its inflections ("фаренгейт" in "фаренгейтах").
    return {
        unit: re.compile("|".join(re.escape(name) for name in sorted(set(table[unit]), key=len, reverse=True)))
        for unit in UNITS
    }


def build_table() -> dict[str, list[str]]:
    """Each unit's distinctive names in every base language of CLDR, folded (the words both units share —
    "degrees", "градусы", "度", "درجة" — removed), with the symbols °C and °F.

    Run ``python -m demo_agents.weather.unit_names`` (where the demo loads: the package imports the agent) to
    write ``unit_names.json`` again.
    """
    from babel import localedata  # here, not above: only rebuilding the table needs Babel
    from babel.units import format_unit, get_unit_name

    names: dict[Unit, set[str]] = {"celsius": {"°c"}, "fahrenheit": {"°f"}}
    for locale in sorted(code for code in localedata.locale_identifiers() if "_" not in code):
        forms: dict[Unit, list[str]] = {}
        for unit in UNITS:
            said = [get_unit_name(_CLDR_UNIT[unit], length=length, locale=locale) or "" for length in ("long", "short")]
            said += [format_unit(n, _CLDR_UNIT[unit], length="long", locale=locale) for n in (1, 2, 5)]
            forms[unit] = [" ".join(re.sub(r"[\d\s\u200e\u200f]+", " ", fold(form)).split()) for form in said if form]
        for unit, other in (UNITS, UNITS[::-1]):
            for form, counterpart in zip(forms[unit], forms[other], strict=False):
                if (name := _distinctive(form, counterpart)) and _long_enough(name):
                    names[unit].add(name)
    return {unit: sorted(names[unit]) for unit in UNITS}


def _long_enough(name: str) -> bool:
    """Whether ``name`` is unlikely inside other words: three characters, or two ideographs or Hangul syllables
    ("華氏", "섭씨": a whole word each; two letters of an alphabet are not)."""
    return len(name) >= _SHORTEST or all(unicodedata.name(ch, "").startswith(("CJK", "HANGUL")) for ch in name)


def _distinctive(form: str, other: str) -> str:
    """What of ``form`` names its unit and not ``other`` (the other unit's name in the same form): its words
    absent from it (a stem, for an inflected word), or, in a script written without spaces, the form less
    what it shares with the other at either end, keeping one shared character ("华氏", not "华": China's)."""
    words = [word for word in form.split() if word not in other.split()]
    if " " in form:
        name = " ".join(words)
        if len(name) < _SHORTEST:
            return form if form != other else ""
        return name[:-1] if len(words) == 1 and len(name) >= 6 and name.isalpha() else name  # "фаренгейт(а)"
    head = len(_common_prefix(form, other))
    tail = len(_common_prefix(form[::-1], other[::-1]))
    start, end = head, len(form) - tail
    if end <= start:
        return ""
    if end - start < 2:
        end = min(len(form), end + 1) if tail else end
        start = max(0, start - 1) if end - start < 2 else start
    return form[start:end]


def _common_prefix(a: str, b: str) -> str:
    size = 0
    while size < min(len(a), len(b)) and a[size] == b[size]:
        size += 1
    return a[:size]


if __name__ == "__main__":
    TABLE.write_text(json.dumps(build_table(), ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
