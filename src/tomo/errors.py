"""Error types. Every error tomo raises to a person carries a hint that says how to fix it.

The CLI prints ``str(error)`` and then the hint; nothing below the CLI prints. Errors are also used for control
flow inside engines (mini-swe-agent style): a limit reached or a script exhausted is an exception the owner catches.
"""

from __future__ import annotations


class TomoError(Exception):
    """Base class: a message saying what was wrong and a ``hint`` saying how to fix it."""

    exit_code = 2
    """How ``tomo`` exits on it when no verb decides otherwise: 2, a usage or configuration error (see
    ``tomo.cli.exit_codes``); a subclass for something outside tomo that failed says 1."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class ConfigError(TomoError):
    """tomo.toml, an environment variable or a command-line value is invalid."""


class Unavailable(TomoError):
    """Something outside tomo that a verb needs is not there: a database server that does not answer or refuses the
    login, a port another process holds. Not a usage error (the command was right; the world was not): exit 1."""

    exit_code = 1


class ModelError(TomoError):
    """A model provider failed or answered something tomo cannot use: exit 1, something outside tomo failed."""

    exit_code = 1

    def __init__(self, message: str, *, provider: str = "", status: int | None = None, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.provider = provider
        self.status = status


class ModelAuthError(ModelError):
    """The provider rejected the credentials (401/403): the hint names the variable to set. Exit 2: the setup is
    wrong, not the run."""

    exit_code = 2


class ModelUnavailable(ModelError):
    """No provider answered, or no model could be detected: the hint says how to connect one. Exit 2: nothing ran,
    the model named is not set up (the same as a missing key)."""

    exit_code = 2


class ModelTimeout(ModelError):
    """The provider did not answer within the timeout, after retries."""


class ScriptExhausted(ModelError):
    """A scripted model was asked for more replies than its script holds."""


class ToolDefinitionError(TomoError):
    """A tool function cannot be turned into a schema (a programming error, raised at registration)."""


class SandboxError(TomoError):
    """A sandbox could not be started or is not available on this machine: exit 1, as the exit-code table says."""

    exit_code = 1


class PrismError(TomoError):
    """The code graph could not answer: unknown or ambiguous symbol, stale plan, unreadable root."""
