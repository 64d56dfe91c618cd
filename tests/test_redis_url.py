"""One Redis URL, read the same by redis-py (the cache) and kombu (Celery's broker)."""

from __future__ import annotations

import uuid

import pytest
import redis
from django.conf import settings
from kombu import Connection

from cognizes.infra.redis_url import for_celery, with_database


@pytest.mark.parametrize("url", ["unix:///run/redis.sock", "unix:///run/redis.sock?db=3", "redis://cache:6379/0"])
def test_a_database_is_named_once_whatever_the_url_named(url):
    named = with_database(url, 5)
    assert redis.connection.parse_url(named)["db"] == 5
    assert with_database(named, 5) == named


def test_celery_sends_to_the_database_the_cache_reads():
    """kombu takes ``virtual_host`` for a socket's database and drops ``db``: a message sent on Celery's URL of a
    socket naming database 6 must be seen there by redis-py."""
    url = with_database(settings.REDIS_URL, 6)
    queue = f"test-queue-{uuid.uuid4().hex}"
    client = redis.Redis.from_url(url)
    try:
        with Connection(for_celery(url)) as connection:
            connection.SimpleQueue(queue).put({"hello": "世界"})
        assert client.llen(queue) == 1
    finally:
        client.delete(queue)
        client.close()
