"""The tool registry (what agents may call) and the audit of what they called.

Rows here are the live configuration of running agents: ``DatabaseToolset``
rebuilds its ADK tools when an app's ``ToolRegistryMarker`` moves, so every
write to ``Tool`` goes through ``tools_app.services``, which bumps the marker
in the same transaction (the django-celery-beat ``PeriodicTasks`` idea).
"""

from __future__ import annotations

from django.db import models

from tools_app.skill_models import Skill, SkillRevision  # noqa: F401  (the Agent Registry's skills)

MAX_NAME_LENGTH = 64  # Gemini's limit on function names


class ToolKind(models.TextChoices):
    OPENAPI = "openapi", "OpenAPI operation"
    PYTHON = "python", "Python callable"


class AuthScheme(models.TextChoices):
    NONE = "none", "None"
    BEARER = "bearer", "Bearer token (Authorization header)"
    API_KEY_HEADER = "api_key_header", "API key in a header"


class SecretSource(models.TextChoices):
    APP = "app", "A secret of the app (stored encrypted: its secrets/ API, admin App secrets)"
    ENV = "env", "An environment variable the operator allows the app (COGNIZES_ENV_SECRETS)"


class SecretAuth(models.Model):
    """A secret a row sends in a header, named: one of the app's own secrets, or an allow-listed env variable.

    Shared by registry tools and external MCP servers: one way to name a secret, one place that checks and
    reads it (``tools_app.secrets``). The row never holds the value; the server's environment is reachable
    only by names the operator's ``COGNIZES_ENV_SECRETS`` gives the row's app (issue 41 A).
    """

    app_name: str  # a column of each concrete row (Tool, McpServer), where its own help text says what it is
    auth_scheme = models.CharField(max_length=32, choices=AuthScheme.choices, default=AuthScheme.NONE)
    auth_secret_source = models.CharField(
        max_length=16,
        choices=SecretSource.choices,
        default=SecretSource.APP,
        help_text="Where the secret is: one of the app's stored secrets ('app'), or an environment variable the "
        "operator allows the app in COGNIZES_ENV_SECRETS ('env').",
    )
    auth_secret_name = models.CharField(
        max_length=128,
        blank=True,
        help_text="Name of the app's secret (or of the allowed environment variable); the row never holds the value.",
    )
    auth_header_name = models.CharField(
        max_length=128, default="X-API-Key", help_text="Header that carries an API key (scheme 'api_key_header')."
    )

    secret_headers: dict[str, str] | None = None
    """The headers carrying the secret, resolved on the database threads when the registry is loaded
    (``tools_app.secrets.load_secret_headers``): held in memory by the toolset built from the row, never a field."""

    class Meta:
        abstract = True


class AppSecret(models.Model):
    """A secret an app keeps for its tools and MCP servers (an API key, a token), encrypted at rest.

    Write-only on every surface: ``tools_app.secrets`` alone encrypts and decrypts ``ciphertext``
    (``cognizes.infra.encryption``), and nothing shows it, masked or not.
    """

    app_name = models.CharField(max_length=128, help_text="The app whose tools and MCP servers may send it.")
    name = models.CharField(max_length=128, help_text="What rows call it (auth_secret_name); unique within the app.")
    ciphertext = models.TextField(help_text="The value, Fernet-encrypted (cognizes.infra.encryption); never shown.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, help_text="When the value was last set (or re-encrypted).")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["app_name", "name"], name="appsecret_unique_name_per_app")]
        ordering = ["app_name", "name"]
        verbose_name = "app secret"

    def __str__(self) -> str:
        return f"{self.app_name}/{self.name}"


class UserCredential(models.Model):
    """A user's credential for a tool's auth config (OAuth tokens, an exchanged key), kept for ADK across restarts.

    Written by ADK's ``CredentialManager`` through ``PostgresCredentialService`` after a sign-in, an exchange or a
    refresh; keyed by ADK's ``auth_config.credential_key`` within (app, user). ``ciphertext`` is the credential's
    JSON without the agent's client secret, Fernet-encrypted (``tools_app.credentials`` alone reads and writes it).
    """

    app_name = models.CharField(max_length=128, help_text="The app whose agent obtained the credential.")
    user_id = models.CharField(max_length=128, help_text="The user the credential acts for.")
    credential_key = models.TextField(help_text="ADK's key of the auth config (auth_config.credential_key).")
    ciphertext = models.TextField(
        help_text="The credential's JSON without the client secret, Fernet-encrypted (cognizes.infra.encryption); "
        "never shown."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, help_text="When the credential was last saved (or refreshed).")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "credential_key"], name="usercredential_unique_key_per_user"
            )
        ]
        ordering = ["app_name", "user_id", "credential_key"]
        verbose_name = "user credential"

    def __str__(self) -> str:
        return f"{self.app_name}/{self.user_id}/{self.credential_key}"


class ToolQuerySet(models.QuerySet["Tool"]):
    def enabled(self) -> ToolQuerySet:
        return self.filter(enabled=True)


class Tool(SecretAuth):
    """One function an agent can call: an OpenAPI operation or an allow-listed Python callable."""

    app_name = models.CharField(max_length=128, db_index=True, help_text="The ADK app whose agents get this tool.")
    name = models.CharField(
        max_length=MAX_NAME_LENGTH, help_text="The function name the model sees; unique within the app."
    )
    description = models.TextField(blank=True, help_text="What the model is told the tool does.")
    kind = models.CharField(max_length=16, choices=ToolKind.choices)
    openapi_operation = models.JSONField(
        null=True,
        blank=True,
        help_text="An OpenAPI 3 document holding exactly this tool's operation (kind 'openapi').",
    )
    callable_path = models.CharField(
        max_length=255,
        blank=True,
        help_text="Dotted path of the function (kind 'python'); must be listed in COGNIZES_TOOL_CALLABLES.",
    )
    parameters_schema = models.JSONField(
        default=dict, blank=True, help_text="JSON schema of the arguments, as the model sees them (read-only)."
    )
    enabled = models.BooleanField(default=True, help_text="Disabled tools are not offered to agents.")
    requires_approval = models.BooleanField(
        default=False, help_text="Each call waits until a person approves or rejects it."
    )
    version = models.PositiveIntegerField(default=1, help_text="Incremented on every change.")
    base_url = models.CharField(
        max_length=2048, blank=True, help_text="Overrides the document's first server URL (kind 'openapi')."
    )
    timeout_seconds = models.FloatField(default=30.0, help_text="Timeout of each HTTP request the tool makes.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ToolQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["app_name", "name"], name="tool_unique_name_per_app"),
            models.CheckConstraint(condition=models.Q(timeout_seconds__gt=0), name="tool_timeout_positive"),
        ]
        ordering = ["app_name", "name"]

    def __str__(self) -> str:
        return f"{self.app_name}/{self.name} v{self.version}"


class McpTransport(models.TextChoices):
    STREAMABLE_HTTP = "streamable_http", "Streamable HTTP"
    SSE = "sse", "HTTP with Server-Sent Events (the 2024-11-05 transport)"


class McpServerQuerySet(models.QuerySet["McpServer"]):
    def enabled(self) -> McpServerQuerySet:
        return self.filter(enabled=True)


class McpServer(SecretAuth):
    """An MCP server elsewhere whose tools the app's agents get, beside the registry's own tools.

    ``DatabaseToolset`` turns each enabled row into an ADK ``McpToolset``; a
    change bumps the app's ``ToolRegistryMarker`` like a tool's, so running
    agents see it on their next model turn. No stdio transport: a row must never
    make the host run a command.
    """

    app_name = models.CharField(max_length=128, db_index=True, help_text="The ADK app whose agents get its tools.")
    name = models.CharField(max_length=MAX_NAME_LENGTH, help_text="Unique within the app (letters, digits, _).")
    description = models.TextField(blank=True, help_text="What the server offers (shown to people, not the model).")
    url = models.CharField(max_length=2048, help_text="The server's MCP endpoint (http or https).")
    transport = models.CharField(max_length=32, choices=McpTransport.choices, default=McpTransport.STREAMABLE_HTTP)
    headers = models.JSONField(
        default=dict,
        blank=True,
        help_text='Extra HTTP headers sent as they are ({"X-Tenant": "acme"}); write-only like a secret (the API and '
        "the admin show their names only). A credential belongs in the auth fields.",
    )
    allowed_tools = models.JSONField(
        default=list, blank=True, help_text="The server's tool names agents may call; empty: all of them."
    )
    denied_tools = models.JSONField(
        default=list, blank=True, help_text="The server's tool names agents never get (wins over the allow list)."
    )
    tool_name_prefix = models.CharField(
        max_length=32,
        blank=True,
        help_text="Prepended as '<prefix>_' to the names the model sees (when tools of two servers clash).",
    )
    enabled = models.BooleanField(default=True, help_text="Disabled servers are not offered to agents.")
    requires_approval = models.BooleanField(
        default=False, help_text="Each call of its tools waits until a person approves or rejects it."
    )
    timeout_seconds = models.FloatField(
        default=10.0, help_text="Longest wait for the server: connecting, listing its tools, each tool call."
    )
    list_cache_seconds = models.FloatField(
        default=60.0, help_text="How long its tool list is reused before it is asked again; 0: every model turn."
    )
    version = models.PositiveIntegerField(default=1, help_text="Incremented on every change.")
    discovered_tools = models.JSONField(
        default=list,
        blank=True,
        help_text="The tools the server listed last (name, description, input schema), allowed or not (read-only).",
    )
    discovered_at = models.DateTimeField(null=True, blank=True, help_text="When the server last listed its tools.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = McpServerQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["app_name", "name"], name="mcpserver_unique_name_per_app"),
            models.CheckConstraint(condition=models.Q(timeout_seconds__gt=0), name="mcpserver_timeout_positive"),
        ]
        ordering = ["app_name", "name"]
        verbose_name = "MCP server"

    def __str__(self) -> str:
        return f"{self.app_name}/{self.name} v{self.version}"

    def offers(self, tool_name: str) -> bool:
        """Whether agents get the server's tool ``tool_name`` (its own name, before any prefix)."""
        return tool_name not in self.denied_tools and (not self.allowed_tools or tool_name in self.allowed_tools)


class ToolVersion(models.Model):
    """A snapshot of a tool as it was at one version: the admin's version history."""

    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    snapshot = models.JSONField(help_text="The tool's fields at this version.")
    changed_by = models.CharField(max_length=255, blank=True, help_text="Who made the change (user or API key).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tool", "version"], name="tool_version_unique")]
        ordering = ["tool", "-version"]

    def __str__(self) -> str:
        return f"{self.tool_id} v{self.version}"


class ToolRegistryMarker(models.Model):
    """Bumped on every change to an app's tools, so agents check one row instead of reloading."""

    app_name = models.CharField(max_length=128, primary_key=True)
    version = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.app_name}'s tools, version {self.version}"


class ExecutionStatus(models.TextChoices):
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    PENDING_APPROVAL = "pending_approval", "Waiting for approval"
    REJECTED = "rejected", "Rejected"


class ToolExecution(models.Model):
    """One tool call an agent (or an MCP client) made, written by ``AuditPlugin``."""

    app_name = models.CharField(max_length=128)
    user_id = models.CharField(max_length=128)
    session_id = models.CharField(max_length=128)
    invocation_id = models.CharField(max_length=128, blank=True)
    function_call_id = models.CharField(max_length=128, blank=True, help_text="The model's id for this call.")
    tool_name = models.CharField(max_length=MAX_NAME_LENGTH)
    tool_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="Registry version; empty for code tools."
    )
    arguments = models.JSONField(default=dict)
    result = models.JSONField(null=True, blank=True, help_text="What the tool returned (cut past the size limit).")
    result_size = models.PositiveIntegerField(default=0, help_text="Size of the full result, in bytes of JSON.")
    result_truncated = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    status = models.CharField(max_length=32, choices=ExecutionStatus.choices)
    started_at = models.DateTimeField()
    duration_ms = models.FloatField(help_text="Wall time of the call, in milliseconds.")
    client = models.CharField(
        max_length=255,
        blank=True,
        help_text="The program that called the tool outside an agent run (an MCP client, with its protocol "
        "version); empty for an agent's calls.",
    )
    mcp_server = models.CharField(
        max_length=MAX_NAME_LENGTH,
        blank=True,
        help_text="The external MCP server (a registry row) that ran the tool; empty for the registry's own tools.",
    )

    class Meta:
        indexes = [
            models.Index(fields=["app_name", "user_id", "session_id"], name="toolexec_scope_idx"),
            models.Index(fields=["app_name", "tool_name", "-started_at"], name="toolexec_tool_idx"),
            models.Index(fields=["app_name", "-started_at"], name="toolexec_recent_idx"),
        ]
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.status})"


class ApprovalStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class ToolApproval(models.Model):
    """A paused call of a ``requires_approval`` tool, waiting for a person's decision.

    ADK pauses the run with an ``adk_request_confirmation`` function call; the
    decision is handed back to the agent as that call's response (see
    ``tools_app.adk.approval_message``).
    """

    app_name = models.CharField(max_length=128)
    user_id = models.CharField(max_length=128)
    session_id = models.CharField(max_length=128)
    invocation_id = models.CharField(max_length=128, blank=True)
    request_id = models.CharField(max_length=128, unique=True, help_text="Id of ADK's confirmation request.")
    function_call_id = models.CharField(max_length=128, help_text="Id of the paused tool call.")
    tool_name = models.CharField(max_length=MAX_NAME_LENGTH)
    arguments = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=ApprovalStatus.choices, default=ApprovalStatus.PENDING)
    decided_by = models.CharField(max_length=255, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(
        null=True, blank=True, help_text="When the decision was handed back to the agent."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["app_name", "user_id", "session_id"], name="toolapproval_scope_idx")]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.status})"


class SandboxEnvironment(models.Model):
    """A code-execution sandbox of Vertex's API (``reasoningEngines/{e}/sandboxEnvironments/{id}``).

    Its interpreter and files live with the sandbox daemon (``tools_app.sandbox_daemon``), by this row's id; the row
    says whose it is, what it runs and until when. The id is the number in its resource name (ADK's executor accepts
    only numeric ids).
    """

    class State(models.TextChoices):
        RUNNING = "STATE_RUNNING", "running"
        PAUSED = "STATE_PAUSED", "paused"
        TERMINATED = "STATE_TERMINATED", "terminated (expired or evicted: its interpreter is gone)"

    app_name = models.CharField(max_length=128)
    engine_id = models.BigIntegerField(help_text="The reasoning engine it was created under.")
    owner = models.CharField(max_length=128, blank=True, help_text="The user it belongs to ('' for the app).")
    display_name = models.CharField(max_length=512, blank=True)
    language = models.CharField(max_length=32, default="LANGUAGE_PYTHON")
    spec = models.JSONField(default=dict, blank=True, help_text="The spec as the client sent it.")
    memory_bytes = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="Its template's memory limit, where tighter than the server's (None: the server's).",
    )
    template = models.BigIntegerField(
        null=True, blank=True, help_text="The id of the template it was made from (which may be gone since)."
    )
    state = models.CharField(max_length=32, choices=State.choices, default=State.RUNNING)
    expire_time = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["app_name", "engine_id", "state"], name="sandbox_env_scope_idx")]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"sandbox {self.pk} of {self.app_name} ({self.display_name or self.language})"


class SandboxSnapshot(models.Model):
    """A sandbox's workspace and picklable variables at one moment (``sandboxEnvironmentSnapshots/{id}``): a new
    sandbox created from it starts with both. Its data is the sandbox daemon's file ``snapshots/{id}.tar``."""

    app_name = models.CharField(max_length=128)
    engine_id = models.BigIntegerField()
    owner = models.CharField(max_length=128, blank=True)
    display_name = models.CharField(max_length=512, blank=True)
    source_sandbox = models.BigIntegerField(help_text="The id of the sandbox it was taken of (which may be gone).")
    size_bytes = models.BigIntegerField(default=0)
    expire_time = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["app_name", "engine_id"], name="sandbox_snapshot_scope_idx")]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"snapshot {self.pk} of sandbox {self.source_sandbox} ({self.app_name})"


class SandboxTemplate(models.Model):
    """A sandbox template (``sandboxEnvironmentTemplates/{id}``): what a sandbox made from it runs in. Without a
    container runtime, that is Cognizes' own confined interpreter; the template's memory limit (``memory_bytes``,
    where tighter than the server's) goes to every sandbox made from it. ``environment`` is what the client sent
    (``defaultContainerEnvironment``, ``egressControlConfig``...), echoed back on reads."""

    app_name = models.CharField(max_length=128)
    engine_id = models.BigIntegerField()
    display_name = models.CharField(max_length=512, blank=True)
    environment = models.JSONField(default=dict, blank=True)
    memory_bytes = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["app_name", "engine_id"], name="sandbox_template_scope_idx")]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"template {self.pk} {self.display_name} ({self.app_name})"


class SandboxExecution(models.Model):
    """Code run in a sandbox: by ``:execute`` on Vertex's API, or by an ADK code executor (``AuditPlugin``)."""

    sandbox = models.ForeignKey(
        SandboxEnvironment,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="executions",
        help_text="The sandbox it ran in (kept as an audit row when the sandbox is deleted).",
    )

    app_name = models.CharField(max_length=128)
    user_id = models.CharField(max_length=128)
    session_id = models.CharField(max_length=128)
    invocation_id = models.CharField(max_length=128, blank=True)
    code = models.TextField()
    language = models.CharField(max_length=32)
    stdout = models.TextField(blank=True)
    stderr = models.TextField(blank=True)
    exit_status = models.CharField(max_length=64, help_text="The executor's outcome (e.g. OUTCOME_OK).")
    started_at = models.DateTimeField()
    duration_ms = models.FloatField()

    class Meta:
        indexes = [models.Index(fields=["app_name", "user_id", "session_id"], name="sandbox_scope_idx")]
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"{self.language} code run in {self.app_name}/{self.user_id}/{self.session_id}"
