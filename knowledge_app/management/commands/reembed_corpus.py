"""Re-embed corpora embedded by another model (after COGNIZES_EMBEDDER changed), with a progress bar."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import CommandError

from cognizes.infra.embedders import get_embedder
from cognizes.infra.quick_command import QuickCommand
from knowledge_app.models import Corpus
from knowledge_app.reembedding import CannotStore, do_reembed_corpus


class Command(QuickCommand):
    help = (
        "Re-embed the chunks of every corpus embedded by another model than COGNIZES_EMBEDDER's (or of the corpora "
        "named by id; --all: every corpus). Searches of a corpus are refused until it is done."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("corpus_ids", nargs="*", type=int, help="the corpora to re-embed (default: stale ones)")
        parser.add_argument("--app", help="only this app's corpora")
        parser.add_argument("--all", action="store_true", help="every corpus, even those embedded by this model")

    def handle(self, *args: Any, corpus_ids: list[int], app: str | None = None, all: bool = False, **options: Any):
        embedder = get_embedder()
        corpora = Corpus.objects.order_by("id")
        if app:
            corpora = corpora.filter(app_name=app)
        if corpus_ids:
            corpora = corpora.filter(id__in=corpus_ids)
            missing = set(corpus_ids) - set(corpora.values_list("id", flat=True))
            if missing:
                raise CommandError(f"No corpus has the id {', '.join(map(str, sorted(missing)))}.")
        elif not all:
            corpora = corpora.exclude(embedder__in=["", embedder.id])
        self.stdout.write(f"Re-embedding {corpora.count()} corpora with {embedder.id}")
        for corpus in corpora:
            self.stdout.write(f"{corpus.app_name}/{corpus.display_name} ({corpus.embedder or 'no embedder recorded'})")
            try:
                count = do_reembed_corpus(corpus, progress=self._bar)
            except CannotStore as error:
                raise CommandError(str(error)) from error
            self.stdout.write(self.style.SUCCESS(f"\n  {count} chunks re-embedded"))

    def _bar(self, done: int, total: int) -> None:
        width = 40
        filled = width * done // max(total, 1)
        sys.stdout.write(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        sys.stdout.flush()
