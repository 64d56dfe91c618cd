"""Structured profiles in memory_app: schemas checked, fields read from what people say (offline, in every
language, or by a model), each value checked against its schema, stored one row per field and revised."""

from __future__ import annotations

import json

import pytest

from memory_app import consolidation, services
from memory_app.models import Memory, MemoryRevision, MemoryType
from memory_app.profile_extraction import extract_profiles, offline_values
from memory_app.profile_schema import SchemaError, check_configs
from memory_app.profiles import get_profiles
from memory_app.search import search_memories
from tests.memory.fake_models import JsonAnsweringLlm

APP = "profile_app"
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "city": {"type": "STRING", "description": "Where the user lives"},
        "employer": {"type": "STRING"},
        "age": {"type": "INTEGER", "minimum": 0, "maximum": 150},
        "favorite_color": {"type": "STRING", "max_length": 20},
    },
    "property_ordering": ["name", "city", "employer", "age", "favorite_color"],
}
DEEP: dict = {"type": "OBJECT", "properties": {}}
_inner = DEEP
for _ in range(3000):  # past Python's recursion limit
    _inner["properties"]["x"] = {"type": "OBJECT", "properties": {}}
    _inner = _inner["properties"]["x"]
HUGE = {"type": "OBJECT", "properties": {f"f{i}": {"type": "STRING", "description": "x" * 500} for i in range(40)}}
CONFIGS = [{"scopeKeys": ["user_id"], "schemaConfigs": [{"id": "user-profile", "schema": SCHEMA}]}]


def said(*texts: str) -> list[dict]:
    return [{"author": "user", "content": {"role": "user", "parts": [{"text": text}]}} for text in texts]


@pytest.mark.parametrize(
    "language, texts, expected",
    [
        (
            "English",
            ["Hi! My name is Ada Lovelace.", "I live in Paris and I work at Babbage & Co.", "I'm 36 years old."],
            {"name": "Ada Lovelace", "city": "Paris", "employer": "Babbage & Co", "age": 36},
        ),
        (
            "Chinese",
            ["我叫李雷。", "我住在上海，我在腾讯工作。", "我今年28岁"],
            {"name": "李雷", "city": "上海", "employer": "腾讯", "age": 28},
        ),
        (
            "Japanese",
            ["私の名前は田中です。", "東京に住んでいます。", "ソニーで働いています。", "30歳です。"],
            {"name": "田中", "city": "東京", "employer": "ソニー", "age": 30},
        ),
        (
            "Korean",
            ["제 이름은 민준입니다.", "서울에 살아요.", "삼성에서 일해요.", "25살이에요."],
            {"name": "민준", "city": "서울", "employer": "삼성", "age": 25},
        ),
        (
            "Russian",
            ["Меня зовут Иван.", "Я живу в Москве.", "Я работаю в Яндексе.", "Мне 40 лет."],
            {"name": "Иван", "city": "Москве", "employer": "Яндексе", "age": 40},
        ),
        (
            "French",
            ["Je m'appelle Zoé.", "J'habite à Lyon.", "Je travaille chez Renault.", "J'ai 31 ans."],
            {"name": "Zoé", "city": "Lyon", "employer": "Renault", "age": 31},
        ),
        (
            "Spanish",
            ["Me llamo Begoña.", "Vivo en Málaga.", "Trabajo en Telefónica.", "Tengo 29 años."],
            {"name": "Begoña", "city": "Málaga", "employer": "Telefónica", "age": 29},
        ),
        (
            "German",
            ["Ich heiße Jürgen.", "Ich wohne in München.", "Ich arbeite bei Siemens.", "Ich bin 50 Jahre alt."],
            {"name": "Jürgen", "city": "München", "employer": "Siemens", "age": 50},
        ),
        (
            "Portuguese",
            ["Meu nome é João.", "Moro em Lisboa.", "Trabalho na Galp.", "Tenho 45 anos."],
            {"name": "João", "city": "Lisboa", "employer": "Galp", "age": 45},
        ),
        (
            "Italian",
            ["Mi chiamo Niccolò.", "Abito a Torino.", "Lavoro presso Fiat.", "Ho 33 anni."],
            {"name": "Niccolò", "city": "Torino", "employer": "Fiat", "age": 33},
        ),
    ],
)
def test_the_offline_extractor_reads_common_profile_facts_in_every_language(language, texts, expected):
    schema = check_configs(CONFIGS)[0]["schema_configs"][0]["schema"]

    assert offline_values(texts, schema, {}) == expected


def test_a_field_named_in_words_fills_from_my_field_is_and_a_later_statement_wins():
    schema = check_configs(CONFIGS)[0]["schema_configs"][0]["schema"]

    found = offline_values(["My favourite colour is teal.", "I live in Paris.", "I moved to Lyon."], schema, {})

    assert found == {"favorite_color": "teal", "city": "Lyon"}


@pytest.mark.parametrize(
    "description, said, value",
    [
        ("职业", "我的职业是医生。", "医生"),
        ("職業", "私の職業はエンジニアです。", "エンジニア"),
        ("직업", "제 직업은 교사입니다.", "교사"),
        ("profession", "Ma profession est infirmière.", "infirmière"),
        ("профессия", "Моя профессия — врач.", "врач"),
    ],
)
def test_a_field_described_in_the_conversations_language_fills_from_my_description_is(description, said, value):
    schema = {"type": "OBJECT", "properties": {"occupation": {"type": "STRING", "description": description}}}

    assert offline_values([said], schema, {}) == {"occupation": value}


def test_a_value_that_does_not_fit_its_schema_is_not_kept():
    schema = check_configs(CONFIGS)[0]["schema_configs"][0]["schema"]
    events = said("I'm 999 years old.")

    assert extract_profiles(events, {"user-profile": schema}, {}, model=None) == {"user-profile": {}}


def test_a_model_fills_any_field_as_json_and_its_answer_is_checked_against_the_schema():
    schema = check_configs(CONFIGS)[0]["schema_configs"][0]["schema"]
    model = JsonAnsweringLlm(
        answer='Sure: {"user-profile": {"city": "Lyon", "age": "old", "pets": 3, "favorite_color": "bleu"}}'
    )
    events = said("Je vis à Lyon, couleur bleu.")

    found = extract_profiles(events, {"user-profile": schema}, {"user-profile": {"city": "Paris"}}, model=model)

    assert found == {"user-profile": {"city": "Lyon", "favorite_color": "bleu"}}  # "old" is no integer; no pets field
    assert '"city": "Paris"' in model.instructions[0] and "Je vis à Lyon" in model.prompts[0]


@pytest.mark.parametrize(
    "configs, complaint",
    [
        ([{"schemaConfigs": [{"id": "User_Profile", "schema": SCHEMA}]}], "lowercase letter first"),
        (
            [{"schemaConfigs": [{"id": "a", "schema": SCHEMA}]}, {"schemaConfigs": [{"id": "b", "schema": SCHEMA}]}],
            "default",
        ),
        (
            [
                {"scopeKeys": ["user_id", "agent"], "schemaConfigs": [{"id": "a", "schema": SCHEMA}]},
                {"scopeKeys": ["agent", "user_id"], "schemaConfigs": [{"id": "b", "schema": SCHEMA}]},
            ],
            "repeat",
        ),
        (
            [{"schemaConfigs": [{"id": "a", "schema": {"type": "OBJECT", "properties": {"x": {"type": "TEXT"}}}}]}],
            "TEXT",
        ),
        (
            [
                {
                    "schemaConfigs": [
                        {"id": "a", "schema": {"type": "OBJECT", "properties": {"x": {"type": "STRING", "maxLen": 3}}}}
                    ]
                }
            ],
            "maxLen",
        ),
        ([{"schemaConfigs": [{"id": "a", "schema": {"type": "STRING"}}]}], "OBJECT with properties"),
        ([{"schemaConfigs": [{"id": "a", "schema": DEEP}]}], "nested"),
        ([{"schemaConfigs": [{"id": "a", "schema": HUGE}]}], "bytes"),
        (["not an object"], "is an object"),
        (
            [
                {
                    "schemaConfigs": [
                        {
                            "id": "a",
                            "schema": {"type": "OBJECT", "properties": {"x": {"type": "STRING"}}, "required": ["y"]},
                        }
                    ]
                }
            ],
            "'y'",
        ),
    ],
    ids=[
        "bad id",
        "two defaults",
        "same keys twice",
        "unknown type",
        "unknown keyword",
        "not an object",
        "deep",
        "huge",
        "a string",
        "required",
    ],
)
def test_an_unusable_config_is_refused_naming_what_is_wrong(configs, complaint):
    with pytest.raises(SchemaError) as refused:
        check_configs(configs)

    assert complaint in str(refused.value)


@pytest.mark.django_db(transaction=True)
def test_a_session_fills_the_profile_and_a_new_value_revises_its_field_without_touching_search():
    services.do_configure_bank(app_name=APP, changes={"structured_memory_configs": CONFIGS})
    consolidation.do_enqueue_events(
        app_name=APP, user_id="ada", events=said("My name is Ada.", "I live in Paris."), run_inline=True
    )
    consolidation.do_enqueue_events(app_name=APP, user_id="ada", events=said("I moved to Lyon."), run_inline=True)

    assert get_profiles(APP, "ada", {}) == {"user-profile": {"name": "Ada", "city": "Lyon"}}
    city = Memory.objects.get(memory_type=MemoryType.STRUCTURED_PROFILE, structured_content__data__has_key="city")
    history = list(MemoryRevision.objects.filter(memory=city).order_by("id").values_list("action", "structured_data"))
    assert history == [("create", {"city": "Paris"}), ("update", {"city": "Lyon"})]
    assert get_profiles(APP, "bob", {}) == {}
    hits = search_memories(app_name=APP, user_id="ada", query="city Lyon Paris", reinforce=False)
    assert hits and all(not hit.text.startswith("city:") for hit in hits)
    both = search_memories(
        app_name=APP, user_id="ada", query="city Lyon", reinforce=False, memory_types=tuple(MemoryType.values)
    )
    assert "city: Lyon" in [hit.text for hit in both]
    assert json.dumps(city.structured_content) == '{"data": {"city": "Lyon"}, "schema_id": "user-profile"}'


@pytest.fixture
def profile():
    """Ada's profile: a city said in a session, and a hostile value in her name."""
    services.do_configure_bank(app_name=APP, changes={"structured_memory_configs": CONFIGS})
    consolidation.do_enqueue_events(
        app_name=APP,
        user_id="ada",
        events=said("My name is <script>alert(1)</script>", "I live in Paris."),
        run_inline=True,
    )
    return Memory.objects.get(memory_type=MemoryType.STRUCTURED_PROFILE, structured_content__data__has_key="city")


@pytest.mark.django_db(transaction=True)
def test_the_admin_lists_profile_fields_escaped_and_edits_a_value_checked_against_its_schema(admin_client, profile):
    listed = admin_client.get("/admin/memory_app/profilefield/").content.decode()
    by_type = admin_client.get("/admin/memory_app/memory/", {"memory_type__exact": "structured_profile"})

    assert "&lt;script&gt;" in listed and "<script>alert" not in listed
    assert sorted(m.text for m in by_type.context["cl"].result_list) == [
        "city: Paris",
        "name: <script>alert",  # a value ends at its clause's punctuation
    ]
    page = f"/admin/memory_app/profilefield/{profile.id}/change/"
    refused = admin_client.post(page, {"value": "12" * 20})  # a number, and longer than the schema allows anyway
    kept = admin_client.post(page, {"value": '"Lyon"'})

    assert refused.status_code == 200 and "is not of type" in refused.content.decode()
    assert kept.status_code == 302
    assert get_profiles(APP, "ada", {})["user-profile"]["city"] == "Lyon"
    revision = MemoryRevision.objects.filter(memory=profile).last()
    assert (revision.structured_data, revision.cause) == ({"city": "Lyon"}, "admin:admin")
    memory_page = admin_client.get(f"/admin/memory_app/memory/{profile.id}/change/").content.decode()
    assert "Structured content" in memory_page and "user-profile" in memory_page


@pytest.mark.django_db(transaction=True)
def test_an_export_carries_profile_fields_and_their_revisions_and_an_import_keeps_them_profiles(profile, tmp_path):
    from django.core.management import call_command

    services.do_configure_bank(app_name="profile_copy", changes={"structured_memory_configs": CONFIGS})
    consolidation.do_enqueue_events(app_name=APP, user_id="ada", events=said("I moved to Lyon."), run_inline=True)
    path = tmp_path / "memories.jsonl"
    call_command("export", APP, output=str(path))

    call_command("import", str(path), app="profile_copy")

    assert get_profiles("profile_copy", "ada", {}) == get_profiles(APP, "ada", {})
    city = Memory.objects.get(app_name="profile_copy", structured_content__data__has_key="city")
    assert list(city.revisions.order_by("id").values_list("structured_data", flat=True)) == [
        {"city": "Paris"},
        {"city": "Lyon"},
    ]
    hits = search_memories(app_name="profile_copy", user_id="ada", query="city Lyon", reinforce=False)
    assert not [hit for hit in hits if hit.text.startswith("city:")]  # still a profile field, not a statement


@pytest.mark.django_db(transaction=True)
def test_the_native_api_shows_a_profile_fields_type_and_data_and_refuses_editing_it_as_text(profile):
    from tests.api.conftest import client_for

    api = client_for(APP)
    base = f"/api/v1/apps/{APP}/users/ada/memories/"
    listed = {m["text"]: m for m in api.get(base).json()["results"]}
    edited = api.patch(f"{base}{profile.id}/", {"text": "city: Rome"}, format="json")
    revisions = api.get(f"{base}{profile.id}/revisions/").json()

    assert listed["city: Paris"]["memory_type"] == "structured_profile"
    assert listed["city: Paris"]["structured_content"] == {"schema_id": "user-profile", "data": {"city": "Paris"}}
    assert edited.status_code == 400 and get_profiles(APP, "ada", {})["user-profile"]["city"] == "Paris"
    assert [r["structured_data"] for r in revisions] == [{"city": "Paris"}]


def test_a_scope_fills_the_schemas_of_every_config_whose_keys_it_has_else_the_default_ones():
    from memory_app.models import MemoryBankConfig
    from memory_app.profiles import schemas_for
    from memory_app.services import scope_keys_of

    def scope_keys(user_id: str, extra_scope: dict) -> set[str]:
        return scope_keys_of(user_id=user_id, extra_scope=extra_scope)

    def config(keys: list[str], schema_id: str) -> dict:
        return {"scopeKeys": keys, "schemaConfigs": [{"id": schema_id, "schema": SCHEMA}]}

    bank = MemoryBankConfig(
        structured_memory_configs=check_configs(
            [config([], "anyone"), config(["user_id"], "person"), config(["user_id", "agent"], "per-agent")]
        )
    )

    assert list(schemas_for(bank, scope_keys("ada", {}))) == ["person"]
    assert list(schemas_for(bank, scope_keys("ada", {"agent": "helper"}))) == ["per-agent", "person"]
    assert list(schemas_for(bank, scope_keys("", {"team": "red"}))) == ["anyone"]


@pytest.mark.django_db(transaction=True)
def test_a_configured_model_fills_profiles_in_a_consolidation_job(tmp_path, settings):
    from tests.model_server import model_servers

    services.do_configure_bank(app_name=APP, changes={"structured_memory_configs": CONFIGS})
    with model_servers(tmp_path) as start:
        server = start(
            (200, json.dumps([{"text": "Ada moved from Paris to Lyon.", "kind": "personal_info"}])),
            (200, '```json\n{"user-profile": {"city": "Lyon", "favorite_color": "vert sapin"}}\n```'),
        )
        settings.COGNIZES_MEMORY_MODEL = "openai/local-model"
        settings.COGNIZES_MEMORY_MODEL_API_BASE = server.url
        settings.COGNIZES_MEMORY_MODEL_TIMEOUT_SECONDS = 10
        job = consolidation.do_enqueue_events(
            app_name=APP,
            user_id="ada",
            events=said("J'ai quitté Paris pour Lyon ; j'adore le vert sapin."),
            run_inline=True,
        )
        asked = server.requests()

    assert get_profiles(APP, "ada", {}) == {"user-profile": {"city": "Lyon", "favorite_color": "vert sapin"}}
    assert (job.memories_created, len(asked)) == (3, 2)  # a statement and two profile fields; two model calls
    assert '"favorite_color"' in asked[1]["messages"][0]["content"]  # the schema went to the model
