"""``cognizes adk …``: ADK's own command (``adk web``, ``adk api_server``, ``adk run``) with Cognizes behind every
service ADK's options cannot name.

ADK's CLI picks sessions, memory and artifacts from URIs (``cognizes://``, registered here), but hard-codes an
in-memory credential service (every user's OAuth tokens lost at restart) and keeps eval sets and results in files
beside the agents (``--eval_storage_uri`` takes only ``gs://``). ADK has no hook for these (no credential or eval
type in its ``ServiceRegistry``; ``services.py`` is imported after the eval managers are built), so ``install()``
replaces the module globals ADK resolves when it builds them, before any is built:

- ``google.adk.cli.fast_api.InMemoryCredentialService`` (``adk web``, ``adk api_server``) and
  ``google.adk.cli.cli.InMemoryCredentialService`` (``adk run``) → ``PostgresCredentialService``;
- ``google.adk.cli.fast_api.LocalEvalSetsManager`` / ``LocalEvalSetResultsManager`` (``adk web``'s eval tab) and
  the same names in ``google.adk.evaluation.local_eval_sets_manager`` / ``local_eval_set_results_manager``
  (``adk eval``, ``adk eval_set``, which import them when they run) → ``runtime_app.evals``' managers. An explicit
  ``--eval_storage_uri gs://…`` still wins, as in ADK.

This leans on ADK's module globals, not a public interface: ``tests/runtime/test_adk_launcher.py`` fails when an
ADK upgrade moves them. ``adk web`` / ``adk api_server`` get ``cognizes://`` for sessions, memory and artifacts
unless their options name other URIs.

    cognizes adk web demo_agents
    cognizes adk api_server --port 8080 demo_agents
"""

from __future__ import annotations

from collections.abc import Sequence

from cognizes.infra.setup import ensure_django
from runtime_app.adk_services import SCHEME, register

_SERVICE_OPTIONS = ("--session_service_uri", "--memory_service_uri", "--artifact_service_uri")
_SERVING_COMMANDS = ("web", "api_server")


def install() -> None:
    """Put Cognizes' services where ADK's CLI builds its own; calling it again changes nothing."""
    ensure_django()
    import google.adk.cli.cli as adk_run
    import google.adk.cli.fast_api as adk_fast_api
    import google.adk.evaluation.local_eval_set_results_manager as local_results
    import google.adk.evaluation.local_eval_sets_manager as local_sets

    from runtime_app.evals import PostgresEvalSetResultsManager, PostgresEvalSetsManager
    from tools_app.credential_service import PostgresCredentialService

    register()
    adk_fast_api.InMemoryCredentialService = PostgresCredentialService  # type: ignore[misc, assignment]
    adk_run.InMemoryCredentialService = PostgresCredentialService  # type: ignore[misc, assignment]
    # fast_api's names are lazy (its module __getattr__), hence unknown to mypy.
    for module in (adk_fast_api, local_sets):
        module.LocalEvalSetsManager = PostgresEvalSetsManager  # type: ignore[attr-defined]
    for module in (adk_fast_api, local_results):
        module.LocalEvalSetResultsManager = PostgresEvalSetResultsManager  # type: ignore[attr-defined]


def adk_arguments(argv: Sequence[str]) -> list[str]:
    """``argv`` for ADK's command: ``web``/``api_server`` get ``cognizes://`` for each service URI not given."""
    args = list(argv)
    if args and args[0] in _SERVING_COMMANDS:
        given = {arg.split("=", 1)[0] for arg in args}
        defaults = [item for option in _SERVICE_OPTIONS if option not in given for item in (option, f"{SCHEME}://")]
        args[1:1] = defaults
    return args


def main(argv: Sequence[str]) -> int:
    """Run ADK's command ``argv`` (``web demo_agents``…) on Cognizes; its exit status."""
    install()
    from google.adk.cli.cli_tools_click import main as adk_main

    try:
        adk_main.main(args=adk_arguments(argv), prog_name="cognizes adk")  # click exits with the status
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0
