"""An app's memory bank config: the topics and examples a model extracts with, and how long memories live."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from memory_app import services
from memory_app.extraction import LlmExtractor, OfflineExtractor, extraction_model
from memory_app.models import Kind, Memory, MemoryBankConfig
from memory_app.services import Candidate
from tests.api.conftest import client_for
from tests.memory.fake_models import JsonAnsweringLlm

pytestmark = pytest.mark.django_db

APP = "bank_app"
PETS = {"label": "pets", "description": "the user's animals and their names"}


def configure(**changes) -> MemoryBankConfig:
    return services.do_configure_bank(app_name=APP, changes=changes)


def remember(text: str, **options) -> Memory:
    topic = options.pop("topic", "")
    outcome = services.do_remember(
        app_name=APP, user_id="ada", candidates=[Candidate(text=text, topic=topic)], cause="test", **options
    )
    return Memory.objects.get(id=(outcome.created or outcome.updated)[0])


def expires_in(memory: Memory) -> timedelta:
    return memory.expires_at - timezone.now()


def test_without_a_config_memories_never_expire():
    assert remember("I live in Lisbon.").expires_at is None


def test_ttls_by_how_a_memory_was_written():
    configure(default_ttl=timedelta(days=30), create_ttl=timedelta(days=1), generate_updated_ttl=timedelta(days=90))

    direct = remember("I live in Lisbon.", created_directly=True)
    generated = remember("I have a cat.")
    merged = remember("I have a cat.")

    assert timedelta(hours=23) < expires_in(direct) <= timedelta(days=1)
    assert timedelta(days=29) < expires_in(generated) <= timedelta(days=30)  # no generate_created_ttl: the default
    assert merged.id == generated.id and timedelta(days=89) < expires_in(merged) <= timedelta(days=90)


def test_a_custom_topic_must_be_configured():
    with pytest.raises(services.MemoryServiceError, match="not a custom topic"):
        remember("Biscuit is my dog.", topic="pets")
    configure(custom_topics=[PETS])

    assert remember("Biscuit is my dog.", topic="pets").topic == "pets"


@pytest.mark.parametrize(
    "changes",
    [
        {"managed_topics": ["gossip"]},
        {"managed_topics": [Kind.FACT]},
        {"custom_topics": [{"label": ""}]},
        {"custom_topics": [PETS, PETS]},
        {"custom_topics": [{"label": "preference"}]},
        {"custom_topics": [{"label": "x", "colour": "red"}]},
        {"examples": [{"conversation": "hi", "memories": []}]},
        {"default_ttl": timedelta(0)},
        {"surprise": 1},
    ],
)
def test_an_unusable_config_is_refused_and_nothing_changes(changes):
    configure(custom_topics=[PETS])

    with pytest.raises(services.MemoryServiceError):
        configure(**changes)

    assert MemoryBankConfig.objects.get(app_name=APP).custom_topics == [PETS]


def test_the_model_extracts_in_the_apps_topics_with_its_examples():
    configure(
        managed_topics=[Kind.PREFERENCE],
        custom_topics=[PETS],
        examples=[
            {
                "conversation": [{"role": "user", "text": "My parrot Kiwi talks a lot."}],
                "memories": [{"fact": "The user has a parrot called Kiwi.", "topic": "pets"}],
            }
        ],
    )
    model = JsonAnsweringLlm(
        answer=json.dumps(
            [
                {"text": "The user has a dog called Biscuit.", "kind": "pets"},
                {"text": "The user likes tea.", "kind": "preference"},
            ]
        )
    )
    events = [{"author": "user", "content": {"parts": [{"text": "Biscuit my dog likes my tea."}]}}]

    candidates = LlmExtractor(model).extract(events, known=[], config=services.get_bank_config(APP))

    instruction = model.instructions[0]
    assert "- pets: the user's animals and their names" in instruction and "- preference:" in instruction
    assert "- personal_info" not in instruction
    assert "My parrot Kiwi talks a lot." in instruction and "The user has a parrot called Kiwi." in instruction
    assert [(c.kind, c.topic) for c in candidates] == [(Kind.FACT, "pets"), (Kind.PREFERENCE, "")]


def test_the_native_api_reads_and_changes_the_config():
    api = client_for(APP)
    url = f"/api/v1/apps/{APP}/memory-config/"

    assert api.get(url).json()["custom_topics"] == []
    changed = api.patch(url, {"custom_topics": [PETS], "default_ttl": "7 00:00:00"}, format="json")
    assert changed.status_code == 200, changed.json()
    assert changed.json()["custom_topics"] == [PETS] and changed.json()["default_ttl"] == "7 00:00:00"
    assert api.patch(url, {"custom_topics": [{"label": ""}]}, format="json").status_code == 400
    assert api.patch(url, {"colour": "red"}, format="json").status_code == 400
    assert client_for(APP, user_id="ada").patch(url, {"custom_topics": []}, format="json").status_code == 403
    assert client_for("other_app").get(url).status_code == 404
    assert MemoryBankConfig.objects.get(app_name=APP).custom_topics == [PETS]


def test_revisions_expire_by_the_config_or_the_write_and_are_purged_then():
    from memory_app.decay import do_purge_expired_revisions
    from memory_app.models import MemoryRevision
    from memory_app.services import Generation

    configure(revision_ttl=timedelta(days=7))
    kept_a_week = remember("I live in Lisbon.")
    labelled = remember(
        "I have a cat.", generation=Generation(revision_labels={"src": "chat"}, revision_ttl=timedelta(hours=1))
    )

    week, hour = (MemoryRevision.objects.get(memory=m) for m in (kept_a_week, labelled))
    assert timedelta(days=6) < week.expires_at - timezone.now() <= timedelta(days=7) and week.labels == {}
    assert timedelta(minutes=59) < hour.expires_at - timezone.now() <= timedelta(hours=1)
    assert hour.labels == {"src": "chat"}

    assert do_purge_expired_revisions(now=timezone.now() + timedelta(days=1)) == 1
    assert list(MemoryRevision.objects.values_list("memory_id", flat=True)) == [kept_a_week.id]
    assert Memory.objects.count() == 2  # the memories stay; only their history shortens


def test_the_native_api_edits_customizations_by_scope():
    api = client_for(APP)
    url = f"/api/v1/apps/{APP}/memory-config/"
    scoped = [{"scope_keys": ["user_id", "team"], "custom_topics": [PETS], "natural_language_memories": False}]

    changed = api.patch(url, {"scoped_customizations": scoped, "keep_revisions": False}, format="json")

    assert changed.status_code == 200, changed.json()
    assert changed.json()["scoped_customizations"] == scoped and changed.json()["keep_revisions"] is False
    custom = services.get_customization(APP, user_id="ada", extra_scope={"team": "ops"})
    assert custom.custom_topics == [PETS] and not custom.natural_language_memories
    assert services.get_customization(APP, user_id="ada", extra_scope={}).natural_language_memories
    for hostile in (scoped * 2, [{"scope_keys": []}], [{"scope_keys": ["a"], "third_person": "yes"}], {"a": 1}):
        assert api.patch(url, {"scoped_customizations": hostile}, format="json").status_code == 400
    assert client_for(APP, user_id="ada").patch(url, {"keep_revisions": True}, format="json").status_code == 403
    assert MemoryBankConfig.objects.get(app_name=APP).scoped_customizations == scoped


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I like tea.", "The user likes tea."),
        ("I don't eat meat and my dog is Biscuit.", "The user doesn't eat meat and the user's dog is Biscuit."),
        ("I'm a nurse; I went to Lyon.", "The user is a nurse; the user went to Lyon."),
        ("Biscuit is a beagle.", "Biscuit is a beagle."),
        ("我喜欢喝茶。", "用户喜欢喝茶。"),
        ("私は紅茶が好きです。", "ユーザーは紅茶が好きです。"),
        ("저는 차를 좋아해요.", "사용자는 차를 좋아해요."),
        ("Я люблю чай.", "Со слов пользователя: «Я люблю чай.»"),
        ("J'habite à Montréal.", "Selon l'utilisateur : « J'habite à Montréal. »"),
    ],
)
def test_the_offline_extractor_writes_in_the_third_person_when_told(text, expected):
    configure(scoped_customizations=[{"scope_keys": ["user_id"], "third_person": True}])
    events = [{"author": "user", "content": {"role": "user", "parts": [{"text": text}]}}]

    third = OfflineExtractor().extract(
        events, known=[], config=services.get_customization(APP, user_id="ada", extra_scope={})
    )
    first = OfflineExtractor().extract(
        events, known=[], config=services.get_customization(APP, user_id="", extra_scope={})
    )

    assert [c.text for c in third] == [expected] and [c.text for c in first] == [text]
    assert [c.kind for c in third] == [c.kind for c in first]  # its topic is read from what was said


def test_a_gemini_model_of_the_bank_is_used_when_the_server_extracts_with_gemini(settings):
    settings.COGNIZES_MEMORY_MODEL = "gemini-2.5-flash"
    assert extraction_model("projects/p/locations/l/publishers/google/models/gemini-2.0-flash") == "gemini-2.0-flash"
    assert extraction_model("") == "gemini-2.5-flash"
    assert extraction_model("projects/p/locations/l/publishers/anthropic/models/claude-x") == "gemini-2.5-flash"
    settings.COGNIZES_MEMORY_MODEL = "openai/local-model"
    assert extraction_model("gemini-2.0-flash") == "openai/local-model"  # another provider: kept, not used
