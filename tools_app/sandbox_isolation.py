"""How a sandbox's interpreter is confined: bubblewrap, a seccomp filter, a clean environment and rlimits.

One place says what a sandbox may reach. The interpreter runs as
``bwrap --unshare-all --die-with-parent --new-session --clearenv --seccomp FD`` with read-only ``/usr`` (the
system Python and its standard library, and Node.js for JavaScript sandboxes), the sandbox's own writable
``/workspace`` and ``/tmp`` (folders on disk, so files survive an interpreter restart), a fresh ``/proc`` of its own
pid namespace and a minimal ``/dev``; no network namespace peer, no host file beyond ``/usr``. When the daemon runs
as root, each sandbox runs as a uid of its own (``RLIMIT_NPROC`` counts per uid and is not enforced for root, so
this is what stops a fork bomb); otherwise as the daemon's user.

The seccomp filter is built with libseccomp through ``pyseccomp`` (ctypes; libseccomp2 ships with every
distribution that ships bubblewrap): libseccomp handles the architecture checks and syscall numbers that a
hand-written BPF program gets wrong, and argument rules (``socket`` only for ``AF_UNIX``, ``clone`` without
namespace flags) that a plain deny-list cannot say.

Without bubblewrap, sandboxes are refused (``Unconfined``) with what to install, unless
``COGNIZES_SANDBOX_UNSAFE_LOCAL=1`` allows running the interpreter unconfined for development only.
"""

from __future__ import annotations

import errno
import os
import resource
import shutil
import socket
import sys
from dataclasses import dataclass, replace
from pathlib import Path

UNSAFE_LOCAL = "COGNIZES_SANDBOX_UNSAFE_LOCAL"
INSTALL_HINT = (
    "bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap, dnf install bubblewrap) or run "
    "`python -m tools_app.sandbox_bwrap`, which fetches Debian's into var/tools without root "
    f"({UNSAFE_LOCAL}=1 runs code unconfined, for development on your own machine only)"
)
NODE_HINT = (
    "Node.js is not installed on the sandbox host: install it (apt-get install nodejs, dnf install nodejs) or point "
    "COGNIZES_SANDBOX_NODE at a node binary to run JavaScript sandboxes"
)
PYTHON, JAVASCRIPT = "LANGUAGE_PYTHON", "LANGUAGE_JAVASCRIPT"
SANDBOX_UID_BASE = 1_500_000_000
"""First uid given to sandboxes when the daemon is root (one per sandbox, none of them a real account)."""

DENIED_SYSCALLS = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "bpf",
    "perf_event_open",
    "keyctl",
    "add_key",
    "request_key",
    "unshare",
    "setns",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "acct",
    "quotactl",
    "name_to_handle_at",
    "open_by_handle_at",
    "lookup_dcookie",
    "personality",
)
"""Refused with EPERM: debugging other processes, mounts, kernel objects, namespaces, modules and kernel queues
that have been the usual ways out of a container."""
NAMESPACE_FLAGS = (0x10000000, 0x04000000, 0x08000000, 0x20000000, 0x40000000, 0x00020000, 0x02000000, 0x00000080)
"""CLONE_NEWUSER, NEWUTS, NEWIPC, NEWPID, NEWNET, NEWNS, NEWCGROUP, NEWTIME: ``clone`` with any is refused."""


class Unconfined(RuntimeError):
    """No isolation tool here: the message names what to install."""


@dataclass(frozen=True)
class Limits:
    """The rlimits and the wall clock of one sandbox's interpreter (``COGNIZES_SANDBOX_*`` override them)."""

    memory_bytes: int = 1 << 30
    cpu_seconds: int = 600
    """The interpreter's whole life (rlimits count per process): the wall clock bounds each execution."""
    file_bytes: int = 256 << 20
    open_files: int = 256
    processes: int = 32
    wall_seconds: float = 60.0

    def for_language(self, language: str) -> Limits:
        """What this language's interpreter needs: V8 reserves about 750 MiB of address space before it runs a line
        (its code range and heap cage) and runs a dozen threads (V8's and libuv's pools), which count against
        ``RLIMIT_NPROC``; its heap is bounded by ``--max-old-space-size`` (``heap_mebibytes``) instead."""
        if language != JAVASCRIPT:
            return self
        return replace(self, memory_bytes=self.memory_bytes + (1 << 30), processes=self.processes + 16)

    def heap_mebibytes(self) -> int:
        """Node's old-generation heap: half the memory a Python sandbox gets (buffers live outside the heap)."""
        return max(64, (self.memory_bytes - (1 << 30)) >> 21)

    @classmethod
    def from_environment(cls) -> Limits:
        def number(name: str, default: float) -> float:
            return float(os.environ.get(f"COGNIZES_SANDBOX_{name}", default))

        base = cls()
        return cls(
            memory_bytes=int(number("MEMORY_BYTES", base.memory_bytes)),
            cpu_seconds=int(number("CPU_SECONDS", base.cpu_seconds)),
            file_bytes=int(number("FILE_BYTES", base.file_bytes)),
            open_files=int(number("OPEN_FILES", base.open_files)),
            processes=int(number("PROCESSES", base.processes)),
            wall_seconds=number("WALL_SECONDS", base.wall_seconds),
        )


def bwrap_path(var_dir: Path) -> str | None:
    """The system's ``bwrap`` if on PATH, else the one ``sandbox_bwrap`` fetched into ``var/tools``."""
    found = os.environ.get("COGNIZES_BWRAP") or shutil.which("bwrap")
    fetched = var_dir / "tools" / "usr" / "bin" / "bwrap"
    if found:
        return found
    return str(fetched) if fetched.is_file() else None


def unsafe_local() -> bool:
    return os.environ.get(UNSAFE_LOCAL, "") == "1"


def seccomp_filter() -> bytes:
    """The BPF program bwrap installs (``--seccomp FD``) before it runs the interpreter."""
    import tempfile

    import pyseccomp as seccomp  # type: ignore[import-untyped]

    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    refuse = seccomp.ERRNO(errno.EPERM)
    rules.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    rules.add_rule(refuse, "socketpair", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    for flag in NAMESPACE_FLAGS:
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library fall back to clone.
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for name in DENIED_SYSCALLS:
        rules.add_rule(refuse, name)
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def sandbox_uid(number: int) -> int | None:
    """The uid a sandbox runs as: its own when the daemon is root, else None (the daemon's).

    ``COGNIZES_SANDBOX_UID_BASE`` moves the range: daemons of separate databases on one host (test processes) would
    otherwise give their sandbox N the same uid, whose process limit they would then share."""
    base = int(os.environ.get("COGNIZES_SANDBOX_UID_BASE", SANDBOX_UID_BASE))
    return base + number % 500_000_000 if os.geteuid() == 0 else None


def interpreter() -> str:
    """The sandbox's Python: the system's (under the read-only /usr), else this one's."""
    return os.environ.get("COGNIZES_SANDBOX_PYTHON") or next(
        (path for path in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.exists(path)), sys.executable
    )


def node() -> str | None:
    """The sandbox's Node.js for JavaScript (``COGNIZES_SANDBOX_NODE``, else the system's); None: not installed."""
    found = os.environ.get("COGNIZES_SANDBOX_NODE") or shutil.which("node", path="/usr/bin:/usr/local/bin:/bin")
    return found if found and os.path.exists(found) else None


def languages() -> list[str]:
    """The languages this host can run."""
    return [PYTHON] + ([JAVASCRIPT] if node() else [])


def program(
    language: str, kernel: str, workspace: str, scratch: str, limits: Limits, answers_fd: int | None = None
) -> list[str]:
    """The interpreter running ``kernel``'s source: Python isolated from its environment, or Node, its heap bound."""
    if language == JAVASCRIPT:
        binary = node()
        if binary is None:
            raise Unconfined(NODE_HINT)
        heap = f"--max-old-space-size={limits.heap_mebibytes()}"
        return [binary, heap, "-e", kernel, workspace, scratch, str(answers_fd if answers_fd is not None else 1)]
    return [interpreter(), "-I", "-c", kernel, workspace, scratch]


def command(
    bwrap: str | None,
    *,
    kernel: str,
    workspace: Path,
    scratch: Path,
    seccomp_fd: int | None,
    language: str = PYTHON,
    limits: Limits | None = None,
    answers_fd: int | None = None,
) -> list[str]:
    """The command line that starts one sandbox's interpreter (``bwrap`` None: unconfined, for UNSAFE_LOCAL)."""
    limits = (limits or Limits()).for_language(language)
    if bwrap is None:
        return program(language, kernel, str(workspace), str(scratch), limits, answers_fd)
    run = program(language, kernel, "/workspace", "/tmp", limits, answers_fd)  # nosec B108: the sandbox's own /tmp
    line = [
        bwrap,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/local/bin:/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/workspace",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    for link in ("bin", "lib", "lib64", "sbin"):
        target = Path("/") / link
        if target.is_symlink():
            line += ["--symlink", os.readlink(target), f"/{link}"]
        elif target.is_dir():
            line += ["--ro-bind", str(target), f"/{link}"]
    if not run[0].startswith("/usr/"):  # a Python or Node installed elsewhere: its prefix, read-only
        prefix = str(Path(run[0]).resolve().parent.parent)
        line += ["--ro-bind", prefix, prefix]
    line += ["--proc", "/proc", "--dev", "/dev", "--bind", str(workspace), "/workspace"]
    line += ["--bind", str(scratch), "/tmp", "--chdir", "/workspace"]  # nosec B108: the sandbox's own /tmp
    if seccomp_fd is not None:
        line += ["--seccomp", str(seccomp_fd)]
    return [*line, "--", *run]


def confine(limits: Limits, uid: int | None) -> None:
    """In the child, before bwrap starts: the rlimits, then the sandbox's uid (if the daemon is root)."""
    for kind, value in (
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(kind, (value, value))
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
