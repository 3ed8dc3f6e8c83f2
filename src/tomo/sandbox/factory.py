"""Choosing a sandbox from settings: strict when bubblewrap is there, and a clear refusal when it is not."""

from __future__ import annotations

from tomo.config import SANDBOX_KINDS, SandboxSettings
from tomo.errors import SandboxError
from tomo.sandbox.base import Sandbox
from tomo.sandbox.bwrap import INSTALL_HINT, BubblewrapSandbox, find_bwrap
from tomo.sandbox.local import LocalSandbox
from tomo.sandbox.model import Limits


def make_sandbox(
    kind: str | None = None, settings: SandboxSettings | None = None, *, bwrap: str | None = None
) -> Sandbox:
    """``auto`` and ``strict`` need bubblewrap; tomo never falls back to ``local`` on its own."""
    settings = settings or SandboxSettings()
    kind = (kind or settings.kind).strip().lower()
    if kind not in SANDBOX_KINDS:
        raise SandboxError(f"unknown sandbox kind {kind!r}", hint=f"use one of: {', '.join(SANDBOX_KINDS)}")
    limits = Limits.from_settings(settings)
    if kind == "local":
        return LocalSandbox(limits)
    found = bwrap or find_bwrap()
    if found is None:
        what = "the default sandbox" if kind == "auto" else "the strict sandbox"
        raise SandboxError(f"{what} needs bubblewrap (`bwrap`), which is not installed; tomo will not run code "
                           "unconfined unless you ask for it", hint=INSTALL_HINT)
    return BubblewrapSandbox(
        limits, bwrap=found, ro_paths=settings.ro_paths, rw_paths=settings.rw_paths, network=settings.network,
    )
