"""API keys remembered by each process, forgotten the moment any key changes.

Every API request authenticates, and looking its key up was a database round trip
(and an ORM object) per request. Here a key found once is kept, by prefix; the hash
of the presented key is still compared on every request (cognizes.access.services.get_key).

A trigger on ``api_keys`` (migration 0002) sends ``NOTIFY cognizes_api_keys`` when a
key is revoked, edited, deleted or the table truncated, by any writer, and each
process forgets every key it holds as it hears it (cognizes.infra.notified_cache says how,
and what happens while the listening connection is down).
"""

from __future__ import annotations

from cognizes.access.models import ApiKey
from cognizes.infra.notified_cache import NotifiedCache

CHANNEL = "cognizes_api_keys"

keys: NotifiedCache[str, ApiKey] = NotifiedCache(CHANNEL, "cognizes key cache")
