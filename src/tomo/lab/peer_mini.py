"""The peer baseline: mini-swe-agent (its Python API, text mode) on the same model, task and fresh copy as tomo.

Run as a process by the lab (``python -m tomo.lab.peer_mini --model SPEC --root DIR -- TASK``), it prints one JSON
object like ``tomo run --json`` does, so both are recorded the same way. The peer's claim is that it submitted
(``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``); like tomo's, it is recorded beside the oracle's verdict, never for it.
Its configuration is mini-swe-agent's own ``mini_textbased.yaml`` untouched, except the step limit (given), no cost
limit (a local model costs nothing and litellm does not know its price), the model's address, and tomo's cap on a
reply's length (:data:`MAX_TOKENS`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

SUBMITTED = "Submitted"
MAX_TOKENS = 4096
"""A reply's cap, tomo's own (``Engine.max_reply_tokens``): mini's config sets none, and a local server asked for a
reply without a cap generates to the end of its context; one stopped by the lab's timeout keeps the server busy
(a request without streaming cannot be cancelled) and slows the runs after it."""


def model_kwargs(spec: str) -> dict[str, Any]:
    """litellm's name and address for an ``openai-compat:URL#NAME`` spec (the only kind a local peer run needs)."""
    provider, _, rest = spec.partition(":")
    url, hash_, name = rest.rpartition("#")
    if provider != "openai-compat" or not hash_ or not url or not name:
        raise SystemExit(f"error: the mini-swe-agent peer takes openai-compat:URL#NAME, not {spec!r}")
    return {"model_name": f"openai/{name}", "api_base": url, "api_key": "sk-local"}


def run(spec: str, root: Path, task: str, steps: int, transcript: Path | None) -> dict[str, Any]:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm would fetch its price list at import
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    import yaml
    from minisweagent import package_dir
    from minisweagent.agents.default import AgentConfig, DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel

    config = yaml.safe_load((Path(package_dir) / "config" / "mini_textbased.yaml").read_text(encoding="utf-8"))
    where = model_kwargs(spec)
    model_config = dict(config.get("model") or {})
    model_config["model_kwargs"] = {**(model_config.get("model_kwargs") or {}), "api_base": where["api_base"],
                                    "api_key": where["api_key"], "temperature": 0.2,
                                    "max_tokens": MAX_TOKENS}
    model = LitellmTextbasedModel(model_name=where["model_name"], cost_tracking="ignore_errors", **model_config)
    env_config = dict(config.get("environment") or {})
    env_config["env"] = {**(env_config.get("env") or {}), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env = LocalEnvironment(cwd=str(root), timeout=120, **{k: v for k, v in env_config.items() if k != "cwd"})
    agent_config = {k: v for k, v in (config.get("agent") or {}).items() if k in AgentConfig.model_fields}
    agent_config.update(step_limit=steps, cost_limit=0.0)
    agent = DefaultAgent(model, env, **agent_config)
    error = ""
    try:
        extra = agent.run(task)
    except Exception as exc:
        extra, error = {"exit_status": type(exc).__name__}, f"{type(exc).__name__}: {exc}"
    status = str(extra.get("exit_status") or "")
    usage = _usage(agent.messages)
    if transcript is not None:
        transcript.write_text("".join(json.dumps(_light(m), default=str) + "\n" for m in agent.messages),
                              encoding="utf-8")
    return {"outcome": "submitted" if status == SUBMITTED else status.lower() or "error",
            "submitted": status == SUBMITTED, "verified": False, "steps": agent.n_calls, "usage": usage,
            "error": error or None}


def _usage(messages: list[dict[str, Any]]) -> dict[str, int]:
    total = {"input_tokens": 0, "output_tokens": 0}
    for message in messages:
        response = (message.get("extra") or {}).get("response")
        usage = response.get("usage") if isinstance(response, dict) else None
        if isinstance(usage, dict):
            total["input_tokens"] += int(usage.get("prompt_tokens") or 0)
            total["output_tokens"] += int(usage.get("completion_tokens") or 0)
    return total


def _light(message: dict[str, Any]) -> dict[str, Any]:
    """A transcript line without the raw provider response (it repeats the content and is large)."""
    extra = {k: v for k, v in (message.get("extra") or {}).items() if k != "response"}
    return {"role": message.get("role"), "content": message.get("content"), "extra": extra}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tomo.lab.peer_mini", description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--transcript", type=Path)
    parser.add_argument("task")
    args = parser.parse_args(argv)
    try:
        import minisweagent  # noqa: F401
    except ImportError:
        print("error: mini-swe-agent is not installed (pip install -e '.[lab]')", file=sys.stderr)
        return 2
    result = run(args.model, args.root.resolve(), args.task, args.steps, args.transcript)
    print(json.dumps(result))
    return 0 if result["submitted"] else 3


if __name__ == "__main__":
    raise SystemExit(main())
