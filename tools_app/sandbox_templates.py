"""Sandbox templates (``reasoningEngines/{e}/sandboxEnvironmentTemplates``) on a host without a container runtime.

Agent Engine runs a template's sandboxes in a container: Google's shell image (``defaultContainerEnvironment`` of
category SHELL_SANDBOX), its computer-use image, or the caller's own (``customContainerEnvironment``). Cognizes has
no container runtime, so the only template it can honour is the shell one, served by its own confined interpreter
(tools_app.sandbox_daemon); the others are refused at create with what it offers instead, never accepted and then
run as something else. Of ``resources.limits``, memory becomes the interpreter's RLIMIT_AS (the daemon keeps the
lower of it and its own cap, so a template never loosens the server); CPU is a rate (``500m`` = half a core), which
rlimits cannot express, so it is kept and echoed but not enforced. No template field carries files: a sandbox
starts with files by being created from a snapshot, and both may be named in one create.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from tools_app.models import SandboxTemplate
from tools_app.sandboxes import SandboxRefused

SHELL = "DEFAULT_CONTAINER_CATEGORY_SHELL_SANDBOX"
CATEGORIES = (SHELL, "DEFAULT_CONTAINER_CATEGORY_UNSPECIFIED")
OFFERED = (
    "This server has no container runtime: it serves templates whose defaultContainerEnvironment has category "
    f"{SHELL} (or none), run by its own confined Python interpreter."
)
_SUFFIXES = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "Ti": 1 << 40,
}
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?(?:[eE][0-9]+)?)(|k|M|G|T|Ki|Mi|Gi|Ti)$")
_CPU = re.compile(r"^[0-9]+(?:\.[0-9]+)?m?$")


def _refused(message: str) -> SandboxRefused:
    return SandboxRefused("INVALID_ARGUMENT", message)


def memory_bytes(quantity: Any, field: str) -> int:
    """A Kubernetes memory quantity (``512Mi``, ``1G``, ``1e9``) in bytes."""
    match = _QUANTITY.match(quantity) if isinstance(quantity, str) else None
    if match is None:
        raise _refused(f"{field} must be a memory quantity such as 512Mi or 1Gi, not {str(quantity)[:40]!r}.")
    try:
        number = int(Decimal(match.group(1)) * _SUFFIXES[match.group(2)])
    except (InvalidOperation, OverflowError) as error:
        raise _refused(f"{field} is not a memory quantity.") from error
    if not 16 << 20 <= number <= 1 << 50:
        raise _refused(f"{field} must be between 16Mi and 1Pi.")
    return number


def _limits(environment: dict[str, Any], where: str) -> int | None:
    """The template's memory limit in bytes (its ``limits.memory``, else its ``requests.memory``), CPU checked."""
    resources = environment.get("resources")
    if resources is None:
        return None
    if not isinstance(resources, dict):
        raise _refused(f"{where}.resources must be an object.")
    found: int | None = None
    for kind in ("requests", "limits"):  # limits last: the cap, where both are given
        amounts = resources.get(kind)
        if amounts is None:
            continue
        if not isinstance(amounts, dict):
            raise _refused(f"{where}.resources.{kind} must be an object of quantities.")
        if "cpu" in amounts and not (isinstance(amounts["cpu"], str) and _CPU.match(amounts["cpu"])):
            raise _refused(f"{where}.resources.{kind}.cpu must be a CPU quantity such as 500m or 2.")
        if "memory" in amounts:
            found = memory_bytes(amounts["memory"], f"{where}.resources.{kind}.memory")
    return found


def check(body: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """The fields to keep of a create's body and the memory limit, or a refusal saying what is offered instead."""
    if body.get("customContainerEnvironment") is not None:
        raise _refused(f"customContainerEnvironment needs a container image. {OFFERED}")
    default = body.get("defaultContainerEnvironment")
    if default is None:
        default = {}
    if not isinstance(default, dict):
        raise _refused("defaultContainerEnvironment must be an object.")
    category = default.get("defaultContainerCategory") or CATEGORIES[1]
    if category not in CATEGORIES:
        raise _refused(f"{str(category)[:60]} is a container image. {OFFERED}")
    limit = _limits(default, "defaultContainerEnvironment")
    egress = body.get("egressControlConfig")
    if egress is not None:
        if not isinstance(egress, dict):
            raise _refused("egressControlConfig must be an object.")
        if egress.get("internetAccess") or egress.get("networkAttachment") or egress.get("dnsPeeringConfigs"):
            raise _refused("Sandboxes on this server have no network: egressControlConfig can only deny it.")
    if body.get("ingressControlConfig"):
        raise _refused("Sandboxes on this server are reached through its API only: no ingressControlConfig.")
    # Only the fields the message has, with the quantities as given: what a read echoes, the client must parse.
    resources = {
        kind: {str(key)[:64]: value for key, value in amounts.items() if isinstance(value, str)}
        for kind, amounts in (default.get("resources") or {}).items()
        if kind in ("requests", "limits") and isinstance(amounts, dict)
    }
    kept: dict[str, Any] = {
        "defaultContainerEnvironment": {
            "defaultContainerCategory": category,
            **({"resources": resources} if resources else {}),
        }
    }
    if egress is not None:
        kept["egressControlConfig"] = {"internetAccess": False}
    return kept, limit


def do_create_template(*, app_name: str, engine_id: int, display_name: str, body: dict[str, Any]) -> SandboxTemplate:
    environment, limit = check(body)
    return SandboxTemplate.objects.create(
        app_name=app_name,
        engine_id=engine_id,
        display_name=display_name,
        environment=environment,
        memory_bytes=limit,
    )


def list_templates(*, app_name: str, engine_id: int) -> Any:
    return SandboxTemplate.objects.filter(app_name=app_name, engine_id=engine_id)


def get_template(*, app_name: str, engine_id: int, number: int) -> SandboxTemplate | None:
    return list_templates(app_name=app_name, engine_id=engine_id).filter(pk=number).first()


def erase_app(app_name: str) -> tuple[int, dict[str, int]]:
    """Every template of the app (its engine deleted with force), as a ``QuerySet.delete()`` result."""
    return SandboxTemplate.objects.filter(app_name=app_name).delete()
