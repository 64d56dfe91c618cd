"""Benchmark: what the offline extractor keeps, against a labelled set (precision and recall).

Run: ``.venv/bin/python bench/offline_extraction.py``. Over the conversations of
``tests/memory/offline_cases.py`` (what should become a memory, which known
memories should be superseded), two extractors, no model and no database:

* ``every text turn``: the rule before issue 12 (each user or agent text turn,
  small talk left out; nothing superseded), the named baseline;
* ``statements``: today's ``OfflineExtractor``.

Memories are matched by text; supersedes by (case, memory id).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
os.environ.setdefault("DATABASE_URL", "postgresql://unused@localhost/unused")  # nothing here touches a database
os.environ.setdefault("REDIS_URL", "redis://unused")

import django  # noqa: E402

django.setup()

from memory_app.extraction import OfflineExtractor, event_text  # noqa: E402
from tests.memory.offline_cases import CASES, Case  # noqa: E402

SMALL_TALK = {"ok", "okay", "thanks", "thank you", "hi", "hello", "bye", "yes", "no", "sure", "great", "cool"}


def events(case: Case) -> list[dict]:
    return [{"id": f"e{i}", "author": author, "content": {"parts": [{"text": text}]}}
            for i, (author, text) in enumerate(case.turns)]


def every_text_turn(case: Case) -> tuple[list[str], list[str]]:
    texts = [t for e in events(case) if len(t := event_text(e)) >= 3 and t.casefold().strip(" .!?") not in SMALL_TALK]
    return texts, []


def statements(case: Case) -> tuple[list[str], list[str]]:
    candidates = OfflineExtractor().extract(events(case), known=case.known)
    return [c.text for c in candidates], [i for c in candidates for i in c.supersedes]


def score(found: set, wanted: set) -> tuple[float, float]:
    right = len(found & wanted)
    return (right / len(found) if found else 1.0), (right / len(wanted) if wanted else 1.0)


def main() -> None:
    print(f"{len(CASES)} conversations, {sum(len(c.turns) for c in CASES)} turns, "
          f"{sum(len(c.remembered) for c in CASES)} memories and {sum(len(c.superseded) for c in CASES)} supersedes wanted")
    print(f"{'extractor':<18}{'memories P':>12}{'R':>7}{'supersedes P':>15}{'R':>7}")
    for name, extractor in (("every text turn", every_text_turn), ("statements", statements)):
        kept, replaced, wanted_kept, wanted_replaced = set(), set(), set(), set()
        for case in CASES:
            texts, ids = extractor(case)
            kept |= {(case.name, t) for t in texts}
            replaced |= {(case.name, i) for i in ids}
            wanted_kept |= {(case.name, t) for t in case.remembered}
            wanted_replaced |= {(case.name, i) for i in case.superseded}
        (mp, mr), (sp, sr) = score(kept, wanted_kept), score(replaced, wanted_replaced)
        print(f"{name:<18}{mp:>12.2f}{mr:>7.2f}{sp:>15.2f}{sr:>7.2f}")


if __name__ == "__main__":
    main()
