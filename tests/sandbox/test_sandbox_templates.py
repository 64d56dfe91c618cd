"""Sandbox templates (``client.sandboxes.templates``, issue 46 item 1): create (a polled operation), get, list with
paging, delete and their operations; a sandbox made from one runs under its memory limit; containers are refused."""

from __future__ import annotations

import pytest
import requests
from google.genai import errors as genai_errors

from cognizes.access.services import do_create_api_key
from tests.sandbox.conftest import Box
from tools_app.models import SandboxTemplate

pytestmark = pytest.mark.django_db(transaction=True)

SHELL = "DEFAULT_CONTAINER_CATEGORY_SHELL_SANDBOX"


def test_a_template_is_created_read_listed_and_deleted_and_a_sandbox_from_it_gets_its_memory_limit(box: Box):
    templates = box.client().sandboxes.templates
    operation = templates.create(
        name=box.engine,
        display_name="petit modèle 小さい",
        config={
            "default_container_environment": {
                "default_container_category": SHELL,
                "resources": {"limits": {"memory": "200Mi", "cpu": "500m"}},
            }
        },
    )
    assert operation.done and operation.name.startswith(operation.response.name + "/operations/")
    name = operation.response.name
    assert name.startswith(box.engine + "/sandboxEnvironmentTemplates/")
    again = templates.get_sandbox_environment_template_operation(operation_name=operation.name)
    assert again.done and again.response.name == name
    template = templates.get(name=name)
    assert template.display_name == "petit modèle 小さい" and template.state.value == "ACTIVE"
    environment = template.default_container_environment
    assert environment.default_container_category.value == SHELL
    assert environment.resources.limits == {"memory": "200Mi", "cpu": "500m"}

    second = templates.create(
        name=box.engine, display_name="two", config={"egress_control_config": {"internet_access": False}}
    ).response.name
    assert templates.get(name=second).egress_control_config.internet_access is False
    listed = [t.name for t in templates.list(name=box.engine, config={"page_size": 1})]
    assert listed == [second, name]  # newest first, across two pages

    sandbox = box.create(sandbox_environment_template=name)
    assert box.sandboxes.get(name=sandbox).sandbox_environment_template == name
    _, stderr, _ = box.run(sandbox, "x = bytearray(300 << 20)")
    assert "MemoryError" in stderr  # 200Mi is tighter than the server's 512 MiB
    plain = box.create()
    assert box.run(plain, "x = bytearray(300 << 20); print(len(x) >> 20)")[0] == "300\n"

    # Files come from a snapshot: one create names both, and gets the template's limit and the snapshot's files.
    box.run(sandbox, "open('données.txt', 'w', encoding='utf-8').write('файл'); y = 7")
    snapshot = box.client().sandboxes.snapshots.create(source_sandbox_environment_name=sandbox).response.name
    both = box.create(sandbox_environment_template=name, sandbox_environment_snapshot=snapshot)
    stdout, stderr, _ = box.run(
        both, "print(open('données.txt', encoding='utf-8').read(), y)\nx = bytearray(300 << 20)"
    )
    assert stdout == "файл 7\n" and "MemoryError" in stderr

    deleted = templates.delete(name=second)
    assert deleted.done
    with pytest.raises(genai_errors.ClientError) as gone:
        templates.get(name=second)
    assert gone.value.code == 404
    with pytest.raises(genai_errors.ClientError) as missing:
        box.create(sandbox_environment_template=second)
    assert missing.value.code == 404

    # Another app's key sees none of it; a user's key of this app reads but cannot create.
    other = Box(box.base_url, app="sandbox_other_shop")
    for stranger in (name, name.replace(box.engine, other.engine)):
        with pytest.raises(genai_errors.ClientError) as hidden:
            other.client().sandboxes.templates.get(name=stranger)
        assert hidden.value.code == 404
    user = box.client(do_create_api_key(name="u", app_name=box.app, user_id="alice")[1]).sandboxes.templates
    assert user.get(name=name).name == name
    with pytest.raises(genai_errors.ClientError) as refused:
        user.create(name=box.engine, display_name="mine")
    assert refused.value.code == 403

    # An engine deleted with force takes its templates.
    client = box.client()
    engine = client.runtimes.create().api_resource.name
    client.sandboxes.templates.create(name=engine, display_name="to go")
    engine_id = int(engine.rsplit("/", 1)[-1])
    assert SandboxTemplate.objects.filter(engine_id=engine_id).count() == 1
    client.runtimes.delete(name=engine, force=True)
    assert not SandboxTemplate.objects.filter(engine_id=engine_id).exists()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"displayName": "c", "customContainerEnvironment": {"customContainerSpec": {"imageUri": "x"}}}, "container"),
        (
            {
                "displayName": "c",
                "defaultContainerEnvironment": {"defaultContainerCategory": "DEFAULT_CONTAINER_CATEGORY_COMPUTER_USE"},
            },
            "container runtime",
        ),
        ({"displayName": "c", "defaultContainerEnvironment": {"resources": {"limits": {"memory": "lots"}}}}, "memory"),
        ({"displayName": "c", "defaultContainerEnvironment": {"resources": {"limits": "1Gi"}}}, "limits"),
        ({"displayName": "c", "defaultContainerEnvironment": {"resources": {"limits": {"memory": "1e400Gi"}}}}, "1Pi"),
        ({"displayName": "c", "defaultContainerEnvironment": {"resources": {"limits": {"cpu": ["x"]}}}}, "cpu"),
        ({"displayName": "c", "egressControlConfig": {"internetAccess": True}}, "no network"),
        ({"displayName": ["c"]}, "displayName"),
        (["not", "an", "object"], "body"),
        ({"displayName": "a\x00b"}, "NUL"),
        ({"displayName": "c", "defaultContainerEnvironment": "x"}, "defaultContainerEnvironment"),
    ],
)
def test_a_template_the_server_cannot_serve_is_refused_with_a_400_that_says_why(box: Box, body, says):
    url = f"{box.base_url}/v1beta1/{box.engine}/sandboxEnvironmentTemplates"
    answer = requests.post(url, json=body, headers={"Authorization": f"Bearer {box.key}"}, timeout=10)
    assert answer.status_code == 400, answer.text
    assert says in answer.json()["error"]["message"]
    bad = requests.get(url + "/abc", headers={"Authorization": f"Bearer {box.key}"}, timeout=10)
    assert bad.status_code == 404


def test_the_admin_lists_templates_escaped_and_only_to_staff_who_may_view_them(admin_client, client):
    from django.contrib.auth import get_user_model

    hostile = "<script>alert('模板')</script>"
    template = SandboxTemplate.objects.create(app_name="shop", engine_id=1, display_name=hostile, memory_bytes=1 << 28)
    for url in ("/admin/tools_app/sandboxtemplate/", f"/admin/tools_app/sandboxtemplate/{template.pk}/change/"):
        page = admin_client.get(url).content.decode()
        assert hostile not in page and "&lt;script&gt;alert(&#x27;模板&#x27;)&lt;/script&gt;" in page
        client.force_login(get_user_model().objects.get_or_create(username="intern", is_staff=True)[0])
        assert client.get(url).status_code == 403
