"""JavaScript sandboxes: one Node.js ``vm`` context per sandbox, under the same confinement as Python (issue 46)."""

from __future__ import annotations

import os
import shutil
import threading
from urllib.parse import urlsplit

import pytest
from google.genai import errors as genai_errors

from cognizes.infra.local import VAR_DIR
from tests.sandbox.conftest import CANARY, WALL_SECONDS, Box
from tools_app import sandbox_daemon, sandbox_isolation
from tools_app.models import SandboxExecution

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js: apt-get install nodejs runs JS sandboxes"),
]


def create_js(box: Box) -> str:
    operation = box.sandboxes.create(
        name=box.engine,
        spec={"code_execution_environment": {"code_language": "LANGUAGE_JAVASCRIPT"}},
        config={"display_name": "js"},
    )
    return operation.response.name


def test_a_javascript_sandbox_keeps_its_bindings_and_returns_its_files_and_errors(box: Box):
    name = create_js(box)
    stdout, stderr, _ = box.run(name, "let total = [1,2,3].reduce((a,b)=>a+b); console.log('somme', total)")
    assert (stdout, stderr) == ("somme 6\n", "")
    assert box.run(name, "console.log(total*2)")[0] == "12\n"  # a top-level let survives the execution

    stdout, stderr, files = box.run(
        name,
        "const fs = require('fs')\nconst text = fs.readFileSync('in.txt', 'utf8')\n"
        "fs.mkdirSync('out')\nfs.writeFileSync('out/結果.txt', text + ' Привет')\nconsole.log(text.length)",
        files=[{"name": "in.txt", "content": "héllo 你好".encode()}],
    )
    assert (stdout, stderr) == ("8\n", "")
    assert files == {"out/結果.txt": "héllo 你好 Привет".encode()}
    assert box.sandboxes.execute_bash(name=name, command="ls", cwd="out")["stdout"] == "結果.txt\n"

    stdout, stderr, _ = box.run(name, "console.error('attention', {a: 1}); console.log('avant')\nnull.x")
    assert stdout == "avant\n" and stderr.startswith("attention { a: 1 }\n") and "TypeError" in stderr, stderr
    assert "await" not in box.run(name, "console.log(await Promise.resolve('attendu'))")[1]
    spawned = "require('child_process').spawnSync('/bin/sh', ['-c', 'echo enfant; echo 错误 >&2'], {stdio: 'inherit'})"
    assert box.run(name, spawned)[:2] == ("enfant\n", "错误\n")  # a child's inherited output is captured too
    executions = SandboxExecution.objects.filter(language="LANGUAGE_JAVASCRIPT").order_by("id")
    assert [e.exit_status for e in executions][-3:] == ["OUTCOME_FAILED", "OUTCOME_OK", "OUTCOME_OK"]


def test_javascript_reaches_no_network_environment_or_host_file_and_an_endless_loop_is_killed(box: Box):
    name = create_js(box)
    port = urlsplit(box.base_url).port
    planted = VAR_DIR / "canary-js.txt"
    planted.write_text(CANARY)
    try:
        stdout, stderr, _ = box.run(
            name,
            f"""
const net = require('net'), fs = require('fs')
const socket = net.connect({port}, '127.0.0.1')
socket.on('connect', () => console.log('CONNECTED'))
socket.on('error', (error) => console.log('refused', error.code))
console.log(JSON.stringify(process.env))
for (const path of ['/etc/passwd', '{planted}', '/proc/1/environ']) {{
  try {{ console.log(fs.readFileSync(path, 'utf8')) }} catch (error) {{ console.log('unreadable', error.code) }}
}}
await new Promise((done) => setTimeout(done, 300))
""",
        )
    finally:
        planted.unlink()
    assert "CONNECTED" not in stdout and "refused" in stdout, stdout + stderr
    assert "7f3a9c1e" not in stdout and "COGNIZES" not in stdout, stdout
    assert stdout.count("unreadable ENOENT") == 2, stdout  # /etc and the host's files do not exist in there

    _, stderr, _ = box.run(name, "const hog = []\nwhile (true) hog.push(new Array(1 << 20).fill(1.5))")
    assert "the interpreter ended" in stderr, stderr  # at its heap bound, well before the wall clock
    box.run(name, "var kept = 1; require('fs').writeFileSync('kept.txt', 'survit')")
    _, stderr, _ = box.run(name, "while (true) {}")
    assert f"{WALL_SECONDS:g} s wall clock" in stderr
    stdout, stderr, _ = box.run(name, "console.log(require('fs').readFileSync('kept.txt', 'utf8'), typeof kept)")
    assert stdout == "survit undefined\n", stderr  # a fresh context, the workspace kept


def test_a_host_without_node_refuses_javascript_sandboxes_and_names_what_to_install(asgi_server, tmp_path, monkeypatch):
    if sandbox_isolation.bwrap_path(VAR_DIR) is None:
        pytest.skip("no bubblewrap: `python -m tools_app.sandbox_bwrap` (make test runs it)")
    monkeypatch.setenv("COGNIZES_SANDBOX_NODE", str(tmp_path / "no-node"))  # the daemon below reads it: absent
    root = VAR_DIR / "test-sandboxes" / f"no-node-{os.getpid()}"  # one the sandboxes' uids can pass through
    server = sandbox_daemon.make_server(tmp_path / "d.sock", root, VAR_DIR)
    monkeypatch.setenv("COGNIZES_SANDBOX_SOCKET", str(tmp_path / "d.sock"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        box = Box(asgi_server)
        with pytest.raises(genai_errors.ClientError) as refused:
            create_js(box)
        assert refused.value.code == 400 and refused.value.status == "FAILED_PRECONDITION"
        assert "apt-get install nodejs" in refused.value.message
        assert box.create()  # Python sandboxes are still offered
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(root, ignore_errors=True)
