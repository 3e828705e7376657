"""The external agent: a command we do not control, pointed at the episode's MCP URL.

``cmd:COMMAND ARGS...`` is split like a shell command line, then each word has its placeholders replaced
(so a prompt with spaces stays one argument): ``{mcp_url}``, ``{mcp_config}`` (path of a generated
Claude-style MCP config file), ``{prompt}``, ``{prompt_file}`` and ``{episode_id}``. The command also gets
``TOOLGYM_MCP_URL``, ``TOOLGYM_EPISODE_ID`` and ``TOOLGYM_PROMPT_FILE`` in its environment. It runs in its
own process group with the episode's time limit; on timeout the whole group is killed. Its output goes to
``logs/<episode>.log`` in the run folder. Grading reads only the server-side record (decision 5), so an
external agent is graded exactly like ours.

The command is given its episode's MCP URL and prompt, nothing else of ours: every other ``TOOLGYM_*``
variable of the runner's environment (``TOOLGYM_TOKEN`` above all) is removed from the command's, and the
control token appears in none of its arguments or files, so it cannot reach the control API (decision 6).
And it runs in a sandbox (``clients/sandbox.py``, decision 15): its own PID and mount namespaces, where the
kit's source, the template cache, the run folder, the runner's and the server's processes and other
episodes' agents do not exist. ``sandbox="none"`` runs it as the runner's user instead, with a warning.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import anyio

from clients import sandbox as sandboxes
from clients.agents.base import AgentResult, AgentSession
from clients.errors import AgentSpecError

__all__ = ["ExternalAgent", "PLACEHOLDERS", "GIVEN_VARIABLES", "agent_environment", "check_placeholders"]

PLACEHOLDERS = ("{mcp_url}", "{mcp_config}", "{prompt}", "{prompt_file}", "{episode_id}")

GIVEN_VARIABLES = ("TOOLGYM_MCP_URL", "TOOLGYM_EPISODE_ID", "TOOLGYM_PROMPT_FILE")
"""The only ``TOOLGYM_*`` variables an external command sees: those the runner sets for its episode."""

_KILL_GRACE = 3.0
"""Seconds between SIGTERM and SIGKILL of a timed-out command's process group."""


def agent_environment(
    session: AgentSession, prompt_file: Path, inherited: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The command's environment: ``inherited`` (default ``os.environ``) minus ``TOOLGYM_*``, plus the episode's.

    Why: the runner's own environment may hold ``TOOLGYM_TOKEN`` (the control secret of ``--server``) or
    other settings of ours; an agent given them could create, read or grade episodes.
    """
    source = os.environ if inherited is None else inherited
    env = {key: value for key, value in source.items() if not key.upper().startswith("TOOLGYM_")}
    env.update(
        TOOLGYM_MCP_URL=session.mcp_url or "", TOOLGYM_EPISODE_ID=session.episode_id, TOOLGYM_PROMPT_FILE=str(prompt_file)
    )
    return env


def check_placeholders(words: Sequence[str]) -> None:
    """Refuse a ``{name}`` that is no placeholder (``{mcp_ur}``): it would reach the agent as literal text.

    Raises:
        AgentSpecError: one line naming the unknown placeholder, the nearest known one and all of them.
    """
    for word in words:
        for name in re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", word):
            if f"{{{name}}}" in PLACEHOLDERS:
                continue
            near = difflib.get_close_matches(f"{{{name}}}", PLACEHOLDERS, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise AgentSpecError(
                f"cmd: unknown placeholder {{{name}}}{hint}; the placeholders are {', '.join(PLACEHOLDERS)}"
            )


def _kill_group(process: anyio.abc.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def _force_kill_group(process: anyio.abc.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class ExternalAgent:
    """Runs ``command`` once per episode against the episode's HTTP MCP endpoint.

    Args:
        command: the command line (placeholders allowed).
        log_dir: where each episode's stdout+stderr goes (``<episode>.log``); discarded when None.
        sandbox: ``auto`` (bubblewrap where it works, else refuse), ``bwrap`` or ``none`` (clients/sandbox.py).
        binds: ``--sandbox-bind`` paths (``PATH``, ``PATH:ro``) the agent needs besides what its command names.
        hidden: more paths no agent may see (the run folder, the run's task template sources).

    Raises:
        AgentSpecError: an unusable command, or (``SandboxUnavailable``) no sandbox here and not ``none``.
    """

    transport: Literal["http"] = "http"
    needs_instance = False
    needs_tools = False

    def __init__(
        self,
        command: str,
        *,
        log_dir: Path | None = None,
        sandbox: str = "auto",
        binds: Sequence[str] = (),
        hidden: Sequence[Path] = (),
    ) -> None:
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise AgentSpecError(f"cmd: cannot split the command line {command!r}: {exc}") from None
        if not words:
            raise AgentSpecError("cmd: needs a command, e.g. --agent 'cmd:my-agent --mcp {mcp_url} {prompt}'")
        check_placeholders(words)
        if shutil.which(words[0]) is None and not Path(words[0]).is_file():
            raise AgentSpecError(f"cmd: {words[0]!r} is not an executable on PATH or a file")
        self.spec = f"cmd:{command}"
        self.command = command
        self.words = words
        self.log_dir = log_dir
        kit = sandboxes.kit_paths([*hidden, *([log_dir] if log_dir is not None else [])])
        self.sandbox: sandboxes.Sandbox | None = None
        if sandboxes.resolve_mode(sandbox) == "bwrap":
            self.sandbox = sandboxes.Sandbox(words, [sandboxes.parse_bind(b) for b in binds], kit)
            if self.sandbox.withheld:
                named = ", ".join(map(str, self.sandbox.withheld[:4])) + (", ..." if len(self.sandbox.withheld) > 4 else "")
                print(f"toolgym: note: the cmd: agent's sandbox hides {named}: the kit's own (tasks, oracles, runs)", file=sys.stderr)
        else:
            warning = sandboxes.unsandboxed_warning(kit)
            if warning is not None:
                print(f"toolgym: {warning}", file=sys.stderr, flush=True)

    def render(self, session: AgentSession, mcp_config: Path, prompt_file: Path, words: Sequence[str] | None = None) -> list[str]:
        """The argv for one episode, placeholders replaced word by word (in ``words``, default the command's)."""
        values = {
            "{mcp_url}": session.mcp_url or "",
            "{mcp_config}": str(mcp_config),
            "{prompt}": session.prompt,
            "{prompt_file}": str(prompt_file),
            "{episode_id}": session.episode_id,
        }
        argv = []
        for word in self.words if words is None else words:
            for placeholder, value in values.items():
                word = word.replace(placeholder, value)
            argv.append(word)
        return argv

    async def run(self, session: AgentSession, *, instead: Sequence[str] | None = None, files: Sequence[Path] = ()) -> AgentResult:
        """Run the command to completion or until the episode's time limit, then report its exit.

        Args:
            instead: another command to run in this command's place, in the very sandbox made for this one
                (placeholders filled the same way): ``toolgym doctor`` runs its probe so.
            files: more files shown read-only inside the sandbox, at their paths (the probe's own).
        """
        if session.mcp_url is None:
            raise RuntimeError("the external agent needs the episode served over HTTP (session.mcp_url)")
        with tempfile.TemporaryDirectory(prefix="toolgym-agent-") as tmp:
            folder = Path(tmp)
            mcp_config = folder / "mcp.json"
            mcp_config.write_text(json.dumps({"mcpServers": {"toolgym": {"type": "http", "url": session.mcp_url}}}, indent=2))
            prompt_file = folder / "prompt.txt"
            prompt_file.write_text(session.prompt, encoding="utf-8")
            argv = self.render(session, mcp_config, prompt_file, instead)
            env = agent_environment(session, prompt_file)
            if self.sandbox is not None:
                # A writable working directory and home of its own; the episode's two files, read-only.
                work, home = folder / "work", folder / "home"
                work.mkdir()
                home.mkdir()
                words = argv if instead is not None else self.sandbox.render_words(argv)
                argv = self.sandbox.command(words, work=work, home=home, files=[mcp_config, prompt_file, *files])
            if self.log_dir is not None:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                log_path = self.log_dir / f"{session.name or session.episode_id}.log"
            else:
                log_path = folder / "agent.log"
            with log_path.open("wb") as log:
                process = await anyio.open_process(
                    argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
                )
                try:
                    with anyio.move_on_after(session.limits.episode_timeout) as scope:
                        code = await process.wait()
                    if scope.cancelled_caught:
                        return AgentResult(stop_reason="timeout", detail=f"killed after {session.limits.episode_timeout:g}s")
                    return AgentResult(stop_reason=f"exit:{code}", detail=None if code == 0 else f"see {log_path}")
                finally:
                    # Always signal the group: a command may leave children behind after its own exit.
                    with anyio.CancelScope(shield=True):
                        _kill_group(process)
                        if process.returncode is None:
                            with anyio.move_on_after(_KILL_GRACE):
                                await process.wait()
                        if process.returncode is None:
                            _force_kill_group(process)
                            await process.wait()

    async def aclose(self) -> None:
        """Nothing held across episodes."""
