"""Hostile code in a sandbox reaches nothing, and the server stays healthy (issue 46 items 3 and 4).

Each test runs what an attacker would, through the API as a client sends it, and checks both that it was contained
and that the server and the sandbox daemon still answer.
"""

from __future__ import annotations

import os
import threading
from urllib.parse import urlsplit

import psutil
import pytest
from google.genai import errors as genai_errors

from cognizes.access.services import do_create_api_key
from cognizes.infra.local import VAR_DIR
from tests.polling import wait_for
from tests.sandbox.conftest import CANARY, WALL_SECONDS, Box, uid_base
from tools_app import sandbox_isolation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sandbox(box: Box, sandbox_daemon):
    name = box.create()
    yield name
    # After each attack: the daemon lives, the web server answers, and the sandbox still runs code.
    assert sandbox_daemon["process"].poll() is None
    assert box.run(name, "print('still here')")[0] == "still here\n"


def test_no_network_not_even_the_servers_own_port_or_loopback(box: Box, sandbox):
    port = urlsplit(box.base_url).port
    code = f"""
import socket, urllib.request
for family, address in ((socket.AF_INET, ("127.0.0.1", {port})), (socket.AF_INET, ("1.1.1.1", 53)),
                        (socket.AF_INET6, ("::1", {port}))):
    try:
        socket.create_connection(address[:2], timeout=2) if family == socket.AF_INET else socket.socket(family)
        print("CONNECTED", address)
    except OSError as error:
        print("refused", error.errno)
try:
    urllib.request.urlopen("{box.base_url}/v1beta1/reasoningEngines/{box.engine_id}", timeout=2)
    print("CONNECTED http")
except OSError as error:
    print("refused http")
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))
    print("CONNECTED udp")
except OSError:
    print("refused udp")
"""
    stdout, stderr, _ = box.run(sandbox, code)
    assert "CONNECTED" not in stdout and stdout.count("refused") == 5, stdout + stderr


def test_the_servers_environment_and_files_are_out_of_reach(box: Box, sandbox, tmp_path):
    os.environ["COGNIZES_TEST_CANARY"] = CANARY  # the web server's own environment too
    planted = VAR_DIR / "canary-secret.txt"
    planted.write_text(CANARY)
    try:
        code = f"""
import os, glob
seen = [repr(os.environ)]
for path in glob.glob("/proc/*/environ") + ["{planted}", "{VAR_DIR}/pg/postgresql.conf", "/etc/passwd", "/root"]:
    try:
        seen.append(open(path, errors="replace").read())
    except OSError as error:
        seen.append(f"{{path}}: {{error.strerror}}")
for folder, _, names in os.walk("/"):
    if folder.startswith(("/proc", "/usr", "/sys", "/dev")):
        continue
    for name in names:
        try:
            seen.append(open(os.path.join(folder, name), errors="replace").read(1 << 16))
        except OSError:
            pass
print("\\n".join(seen))
print("visible roots", sorted(os.listdir("/")))
"""
        stdout, stderr, _ = box.run(sandbox, code)
    finally:
        planted.unlink()
    assert "7f3a9c1e" not in stdout and "секрет" not in stdout, stderr  # (NULs of /proc/*/environ stored, no 500)
    assert "visible roots ['bin', 'dev', 'lib', 'lib64', 'proc', 'sbin', 'tmp', 'usr', 'workspace']" in stdout, stderr
    assert "No such file or directory" in stdout  # the planted file's path does not exist in there


def test_host_processes_cannot_be_signalled_or_traced(box: Box, sandbox, sandbox_daemon):
    targets = [os.getpid(), sandbox_daemon["process"].pid, 1]
    code = f"""
import ctypes, os, signal
for pid in {targets}:
    try:
        os.kill(pid, signal.SIGKILL) if pid != 1 else os.kill(pid, 0)
        print("signalled", pid, "in here it is", open(f"/proc/{{pid}}/cmdline").read()[:40] if pid == 1 else "")
    except OSError as error:
        print("no", pid, error.errno)
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(16, {os.getpid()}, 0, 0), ctypes.get_errno())  # PTRACE_ATTACH
print("unshare", libc.unshare(0x10000000), ctypes.get_errno())  # CLONE_NEWUSER
print("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None), ctypes.get_errno())
"""
    stdout, stderr, _ = box.run(sandbox, code)
    assert f"no {os.getpid()} 3" in stdout and f"no {sandbox_daemon['process'].pid} 3" in stdout, stdout + stderr
    assert "ptrace -1 1" in stdout and "unshare -1 1" in stdout and "mount -1 1" in stdout, stdout  # EPERM


def test_a_fork_bomb_stops_at_the_process_limit_and_the_wall_clock(box: Box, sandbox):
    stdout, stderr, _ = box.run(
        sandbox,
        "import os, time\nborn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(60)\n"
        "            os._exit(0)\n        born += 1\nexcept OSError as error:\n"
        "    print('stopped after', born, error.errno)",
    )
    assert stdout.startswith("stopped after") and int(stdout.split()[2]) < sandbox_isolation.Limits().processes
    # A real bomb (every child forks too) runs into the wall clock, and its whole process group is killed.
    number = int(sandbox.rsplit("/", 1)[1])
    _, stderr, _ = box.run(
        sandbox, "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    )
    assert "wall clock" in stderr
    uid = uid_base() + number if os.geteuid() == 0 else None  # the daemon's sandbox_uid
    if uid is not None:  # none of its processes is left running (killed ones may take a moment to be reaped)
        wait_for(lambda: not _alive_as(uid), 10, "the fork bomb's processes gone")


def test_memory_disk_and_time_are_bounded(box: Box, sandbox):
    stdout, stderr, _ = box.run(
        sandbox,
        "kept = 'variables survive a MemoryError'\ntry:\n    hog = bytearray(2 << 30)\nexcept MemoryError:\n"
        "    print('no memory')\ntry:\n    open('big', 'wb').write(b'x' * (100 << 20))\nexcept OSError as error:\n"
        "    print('no disk', error.errno)\nimport os\nos.remove('big')",
    )
    assert stdout == "no memory\nno disk 27\n", stdout + stderr  # EFBIG past RLIMIT_FSIZE
    _, stderr, _ = box.run(sandbox, "open('kept.txt', 'w').write('files survive a restart')\nwhile True:\n    pass")
    assert f"{WALL_SECONDS:g} s wall clock" in stderr
    stdout, stderr, _ = box.run(sandbox, "print(open('kept.txt').read())\nprint(kept)")
    assert stdout == "files survive a restart\n" and "NameError" in stderr


def test_another_sandboxs_workspace_is_invisible(box: Box, sandbox, sandbox_daemon):
    other = box.create()
    box.run(other, "open('secret.txt', 'w').write('mine alone')")
    number = other.rsplit("/", 1)[1]
    host_path = sandbox_daemon["root"] / "workspaces" / number / "secret.txt"
    assert host_path.read_text() == "mine alone"
    stdout, _, _ = box.run(
        sandbox,
        f"import os\nfor path in ['{host_path}', '/workspace/../{number}/secret.txt',"
        f" '../workspaces/{number}/secret.txt']:\n    print(os.path.exists(path))\nprint(os.listdir('/workspace'))",
    )
    assert stdout == "False\nFalse\nFalse\n[]\n"


def test_another_apps_sandbox_is_not_found_and_quotas_hold(box: Box, sandbox, monkeypatch):
    stranger_key = do_create_api_key(name="x", app_name="another_app")[1]
    stranger = box.client(stranger_key).sandboxes
    for attempt in (
        lambda: stranger.get(name=sandbox),
        lambda: stranger.execute_code(name=sandbox, input_data={"code": "print(1)"}),
        lambda: stranger.delete(name=sandbox),
    ):
        with pytest.raises(genai_errors.ClientError) as refused:
            attempt()
        assert refused.value.code == 404

    # Executions at once per app (the daemon's COGNIZES_SANDBOX_EXECUTIONS_PER_APP=2 here): a third is refused.
    others = [box.create(), box.create()]
    outcomes: list[object] = []

    def run(name: str) -> None:
        try:
            outcomes.append(box.run(name, "import time\ntime.sleep(1.5)\nprint('ran')")[0])
        except genai_errors.APIError as error:
            outcomes.append(error.code)

    threads = [threading.Thread(target=run, args=(name,)) for name in [sandbox, *others]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(str, outcomes)) == ["429", "ran\n", "ran\n"]

    monkeypatch.setenv("COGNIZES_SANDBOX_PER_APP", "3")
    with pytest.raises(genai_errors.APIError) as full:
        box.create()
    assert full.value.code == 429


def _alive_as(uid: int) -> list:
    alive = []
    for process in psutil.process_iter(["uids", "status"]):
        uids, state = process.info["uids"], process.info["status"]
        if uids and uids.real == uid and state not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD, "terminated"):
            alive.append(process)
    return alive
