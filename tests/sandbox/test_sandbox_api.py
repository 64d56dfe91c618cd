"""Agent Engine Code Execution on Cognizes, driven by agentplatform 2.6's ``client.sandboxes`` (issue 46 item 1)."""

from __future__ import annotations

import base64
import json

import pytest
import requests
from google.genai import errors as genai_errors

from cognizes.access.services import do_create_api_key
from sessions_app.services import do_erase_user
from tests.sandbox.conftest import Box
from tools_app.models import SandboxEnvironment, SandboxExecution

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_sandbox_keeps_its_variables_and_files_between_executions_and_returns_what_the_code_wrote(box: Box):
    operation = box.sandboxes.create(
        name=box.engine,
        spec={"code_execution_environment": {}},
        config={"display_name": "default_sandbox", "ttl": "31536000s"},
    )
    name = operation.response.name
    assert name.startswith(box.engine + "/sandboxEnvironments/") and name.rsplit("/", 1)[1].isdigit()
    sandbox = box.sandboxes.get(name=name)
    assert sandbox.state.value == "STATE_RUNNING" and sandbox.display_name == "default_sandbox"

    stdout, stderr, files = box.run(
        name,
        "import csv, os\nrows = list(csv.reader(open('in.csv')))\nprint('héllo 你好', len(rows))\n"
        "os.makedirs('out')\nopen('out/結果.txt', 'w', encoding='utf-8').write('Привет')",
        files=[{"name": "in.csv", "content": b"a,b\n1,2\n", "mime_type": "text/csv"}],
    )
    assert (stdout, stderr) == ("héllo 你好 2\n", "")
    assert files == {"out/結果.txt": "Привет".encode()}  # the input file, unchanged, is not sent back

    stdout, _, files = box.run(name, "print(len(rows), open('in.csv').read().count(','))")
    assert stdout == "2 2\n" and files == {}

    big = bytes(range(256)) * (3 << 12)  # 3 MiB in and out: past the API's usual 1 MiB body, within Vertex's 100 MB
    stdout, _, files = box.run(
        name,
        "data = open('big.bin', 'rb').read()\nopen('copy.bin', 'wb').write(data[::-1])\nprint(len(data))",
        files=[{"name": "big.bin", "content": big}],
    )
    assert stdout == f"{len(big)}\n" and files == {"copy.bin": big[::-1]}

    _, stderr, _ = box.run(name, "1/0")
    assert "ZeroDivisionError" in stderr

    assert name in [s.name for s in box.sandboxes.list(name=box.engine)]
    box.sandboxes.delete(name=name)
    with pytest.raises(genai_errors.ClientError) as gone:
        box.sandboxes.get(name=name)
    assert gone.value.code == 404


def test_each_execution_is_a_row_of_its_sandbox_and_erasing_the_owner_removes_both(box: Box):
    user_key = do_create_api_key(name="u", app_name=box.app, user_id="alice")[1]
    client = box.client(user_key).sandboxes
    name = client.create(name=box.engine, spec={"code_execution_environment": {}}).response.name
    client.execute_code(name=name, input_data={"code": "x = 6 * 7\nprint(x)"})
    sandbox = SandboxEnvironment.objects.get()
    assert (sandbox.app_name, sandbox.owner, sandbox.state) == (box.app, "alice", "STATE_RUNNING")
    execution = SandboxExecution.objects.get()
    assert (execution.sandbox_id, execution.user_id, execution.code, execution.stdout, execution.exit_status) == (
        sandbox.pk,
        "alice",
        "x = 6 * 7\nprint(x)",
        "42\n",
        "OUTCOME_OK",
    )
    # Another user's key of the same app does not see alice's sandbox.
    bob = box.client(do_create_api_key(name="b", app_name=box.app, user_id="bob")[1]).sandboxes
    with pytest.raises(genai_errors.ClientError) as hidden:
        bob.get(name=name)
    assert hidden.value.code == 404

    erased = do_erase_user(app_name=box.app, user_id="alice")
    assert erased["sandbox_environments"] == 1 and erased["sandbox_executions"] == 1
    assert not SandboxEnvironment.objects.exists() and not SandboxExecution.objects.exists()


def test_the_wire_as_the_clients_spell_it_both_execute_paths_and_both_casings(box: Box):
    headers = {"x-goog-api-key": box.key}
    base = f"{box.base_url}/v1beta1/reasoningEngines/{box.engine_id}/sandboxEnvironments"
    created = requests.post(
        base,
        json={"spec": {"codeExecutionEnvironment": {"codeLanguage": "LANGUAGE_PYTHON"}}},
        headers=headers,
        timeout=30,
    ).json()
    assert created["done"] is True
    name = created["response"]["name"]
    operation = requests.get(f"{box.base_url}/v1beta1/{created['name']}", headers=headers, timeout=30).json()
    assert operation["response"]["state"] == "STATE_RUNNING"

    def execute(path: str, code: str) -> dict:
        chunk = {"mimeType": "application/json", "data": base64.b64encode(json.dumps({"code": code}).encode()).decode()}
        return requests.post(path, json={"inputs": [chunk]}, headers=headers, timeout=30).json()

    answer = execute(f"{box.base_url}/v1beta1/{name}:execute", "open('p.png','wb').write(b'PNG'); print(1)")
    message = json.loads(base64.b64decode(answer["outputs"][0]["data"]))
    assert message == {"msg_out": "1\n", "msg_err": ""}
    assert answer["outputs"][1]["mimeType"] == "image/png"
    assert base64.b64decode(answer["outputs"][1]["metadata"]["attributes"]["file_name"]) == b"p.png"
    assert execute(f"{box.base_url}/v1beta1/{name}/:execute", "print(2)")["outputs"][0]["data"]

    refused = requests.post(
        base,
        json={"spec": {"code_execution_environment": {"code_language": "LANGUAGE_COBOL"}}},
        headers=headers,
        timeout=30,
    )
    assert refused.status_code == 400 and "Python and JavaScript only" in refused.json()["error"]["message"]
    bad = requests.post(
        f"{box.base_url}/v1beta1/{name}:execute", json={"inputs": [{"data": "%%%"}]}, headers=headers, timeout=30
    )
    assert bad.status_code == 400
    long_name = {"data": "eA==", "metadata": {"attributes": {"file_name": base64.b64encode(b"n" * 300).decode()}}}
    code = {"mimeType": "application/json", "data": base64.b64encode(b'{"code": "print(3)"}').decode()}
    refused_file = requests.post(
        f"{box.base_url}/v1beta1/{name}:execute", json={"inputs": [code, long_name]}, headers=headers, timeout=30
    )
    message = json.loads(base64.b64decode(refused_file.json()["outputs"][0]["data"]))
    assert refused_file.status_code == 200 and "not written: [Errno 36] File name too long" in message["msg_err"]
    missing = requests.get(f"{base}/999999999", headers=headers, timeout=30)
    assert missing.status_code == 404 and missing.json()["error"]["status"] == "NOT_FOUND"


def test_pause_keeps_the_interpreters_variables_until_resume_and_execute_bash_runs_a_command(box: Box):
    name = box.create()
    box.run(name, "import os\nmemo = {'pays': 'Ελλάδα'}\nos.makedirs('d')\nopen('d/f.txt', 'w').write('1')")
    paused = box.sandboxes.pause(name=name)
    assert paused.done and box.sandboxes.get(name=name).state.value == "STATE_PAUSED"
    with pytest.raises(genai_errors.ClientError) as refused:
        box.run(name, "print(memo)")
    assert refused.value.code == 400 and "paused" in refused.value.message
    box.sandboxes.resume(name=name)
    assert box.sandboxes.get(name=name).state.value == "STATE_RUNNING"
    assert box.run(name, "print(memo['pays'])")[0] == "Ελλάδα\n"

    result = box.sandboxes.execute_bash(name=name, command="cat f.txt; echo ünï >&2; exit 3", cwd="d")
    assert (result["stdout"], result["stderr"], result["returncode"]) == ("1", "ünï\n", 3)
    assert box.sandboxes.execute_bash(name=name, command="pwd")["stdout"] == "/workspace\n"
    assert SandboxExecution.objects.filter(language="bash").count() == 2


def test_a_sandbox_restored_from_a_snapshot_has_its_files_and_variables(box: Box):
    source = box.create()
    box.run(
        source,
        "import json\nfrom collections import Counter\nwords = Counter('été à 東京'.split())\n"
        "gen = (i for i in range(3))\nopen('notes.md', 'w').write('# 北京')",
    )
    snapshots = box.client().sandboxes.snapshots
    operation = snapshots.create(source_sandbox_environment_name=source, config={"display_name": "après"})
    snapshot = operation.response
    assert snapshot.display_name == "après" and snapshot.source_sandbox_environment == source
    assert snapshot.size_bytes > 0 and snapshot.name in [s.name for s in snapshots.list(name=box.engine)]
    assert snapshots.get(name=snapshot.name).name == snapshot.name

    box.run(source, "words['later'] = 1\nopen('notes.md', 'w').write('changed')")
    restored = box.sandboxes.create(name=box.engine, config={"sandbox_environment_snapshot": snapshot.name})
    stdout, stderr, _ = box.run(
        restored.response.name, "print(dict(words), json.dumps([1]), open('notes.md').read())\nprint(gen)"
    )
    assert stdout.startswith("{'été': 1, 'à': 1, '東京': 1} [1] # 北京\n"), stderr
    assert "NameError: name 'gen' is not defined" in stderr  # a generator does not pickle: left out

    snapshots.delete(name=snapshot.name)
    with pytest.raises(genai_errors.ClientError) as gone:
        snapshots.get(name=snapshot.name)
    assert gone.value.code == 404
