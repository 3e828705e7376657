"""The control token out of what other processes can read: environment, command line, memory, banner.

Real processes throughout: a child that takes the token out of its environment, a ``toolgym serve`` whose
``/proc/<pid>/environ`` and ``cmdline`` are read from outside, and a same-user child trying to read a
non-dumpable parent's memory (as an unprivileged user: for root, the agent sandbox's PID namespace is what
protects, and tests/clients/test_sealed_control.py shows it).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from servers.secrecy import TokenFileError, attached_token, read_token_file
from tests.servers.test_cli import read_banner

REPO = Path(__file__).resolve().parents[2]
SECRECY = REPO / "servers" / "secrecy.py"


def proc_text(pid: int, name: str) -> str:
    return Path(f"/proc/{pid}/{name}").read_bytes().replace(b"\0", b" ").decode(errors="replace")


def test_a_token_taken_from_the_environment_leaves_proc_environ_and_children(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(32)
    script = textwrap.dedent("""
        import os, subprocess, sys
        from servers.secrecy import take_from_environment, blank_argument
        token = sys.argv[1]
        assert take_from_environment("TOOLGYM_TOKEN") == token and "TOOLGYM_TOKEN" not in os.environ
        assert blank_argument(token) == 1
        child = subprocess.run(["/usr/bin/env"], capture_output=True, text=True).stdout
        print("child-sees-it" if token in child else "child-clean", flush=True)
        sys.stdin.readline()
    """)
    env = {**os.environ, "TOOLGYM_TOKEN": token, "MY_TOOLGYM_TOKEN": "keep-me"}
    with subprocess.Popen([sys.executable, "-c", script, token], cwd=REPO, env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None and process.stdin is not None
        assert process.stdout.readline().strip() == "child-clean"
        environ, cmdline = proc_text(process.pid, "environ"), proc_text(process.pid, "cmdline")
        process.stdin.write("\n")
        process.stdin.flush()
    assert token not in environ and "MY_TOOLGYM_TOKEN=keep-me" in environ  # only that variable, whole
    assert token not in cmdline and "*" * len(token) in cmdline


def test_a_token_file_must_be_private(tmp_path: Path) -> None:
    file = tmp_path / "token"
    file.write_text("  s3cret-token \n")
    file.chmod(0o644)
    with pytest.raises(TokenFileError, match="chmod 600"):
        read_token_file(file)
    file.chmod(0o600)
    assert read_token_file(file) == "s3cret-token"
    file.write_text("\n")
    with pytest.raises(TokenFileError, match="empty"):
        read_token_file(file)
    with pytest.raises(TokenFileError, match="No such file"):
        read_token_file(tmp_path / "missing")


PARENT = r"""
import importlib.util, os, subprocess, sys, types
errors = types.ModuleType("fixtures.errors")
errors.ToolgymError = type("ToolgymError", (Exception,), {})
sys.modules.update({"fixtures": types.ModuleType("fixtures"), "fixtures.errors": errors})
spec = importlib.util.spec_from_file_location("secrecy", sys.argv[1])
secrecy = importlib.util.module_from_spec(spec)
spec.loader.exec_module(secrecy)
if sys.argv[2] == "protect":
    assert secrecy.forbid_dumps() and secrecy.dumpable() is False
child = r'''
import os, sys
pid = os.getppid()
try:
    with open(f"/proc/{pid}/maps") as maps:
        start = int(maps.readline().split("-")[0], 16)
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(start)
        print("read", len(mem.read(64)))
except OSError as exc:
    print("refused", type(exc).__name__)
'''
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout.strip())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux's")
def test_a_non_dumpable_process_keeps_same_user_processes_out_of_its_memory() -> None:
    """As an unprivileged user: same-user children read a dumpable parent's memory, never a non-dumpable one's.

    Root may read any process's memory; when the tests run as root, both processes run as ``nobody`` with
    the system's Python (the kit's virtual environment may sit in root's home, which ``nobody`` cannot
    enter), loading servers/secrecy.py as it is.
    """
    with tempfile.TemporaryDirectory(prefix="toolgym-dumpable-") as shared:  # pytest's own folder is root's only
        if os.geteuid() == 0:
            python = shutil.which("python3", path="/usr/bin:/bin")
            if python is None:
                pytest.skip("no system Python for an unprivileged user")
            source = shutil.copy(SECRECY, Path(shared) / "secrecy.py")
            os.chmod(shared, 0o755)
            os.chmod(source, 0o644)
            run: dict[str, Any] = {"user": 65534, "group": 65534, "extra_groups": [], "cwd": "/"}
        else:
            python, run, source = sys.executable, {}, str(SECRECY)
        outcomes = {}
        for mode in ("control", "protect"):
            done = subprocess.run([python, "-c", PARENT, str(source), mode], capture_output=True, text=True, timeout=60, check=False, **run)
            assert done.returncode == 0, done.stderr
            outcomes[mode] = done.stdout.strip()
    assert outcomes["control"] == "read 64"  # the attack works on an ordinary process...
    assert outcomes["protect"].startswith("refused")  # ...and not on one marked non-dumpable


def serve_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "tests.toy_env", "serve", "--transport", "http", "--port", "0", *extra]


async def test_serve_takes_the_token_out_of_its_environment_and_banner(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(32)
    env = {**os.environ, "TOOLGYM_TOKEN": token}
    with anyio.fail_after(120):
        async with await anyio.open_process(serve_command(), cwd=REPO, env=env) as process:
            try:
                lines = await read_banner(process)
                environ, cmdline = proc_text(process.pid, "environ"), proc_text(process.pid, "cmdline")
                control_url = lines["control API"].split()[0].rstrip("/")
                async with httpx.AsyncClient(base_url=control_url) as http:
                    assert (await http.get("/health", headers={"Authorization": f"Bearer {token}"})).status_code == 200
            finally:
                process.terminate()
                await process.wait()
    assert token not in environ and "TOOLGYM_TOKEN=" not in environ  # neither the variable nor the pipe's value
    assert token not in cmdline and token not in "".join(lines.values())
    assert lines["runner"].startswith("TOOLGYM_TOKEN=<") and "control token" not in lines


async def test_serve_reads_a_private_token_file_and_refuses_a_shared_one(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(32)
    file = tmp_path / "token"
    file.write_text(token + "\n")
    file.chmod(0o640)
    env = {k: v for k, v in os.environ.items() if k != "TOOLGYM_TOKEN"}
    refused = subprocess.run(serve_command("--token-file", str(file)), cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "chmod 600" in refused.stderr and token not in refused.stderr
    file.chmod(0o600)
    with anyio.fail_after(120):
        async with await anyio.open_process(serve_command("--token-file", str(file)), cwd=REPO, env=env) as process:
            try:
                lines = await read_banner(process)
                control_url = lines["control API"].split()[0].rstrip("/")
                async with httpx.AsyncClient(base_url=control_url) as http:
                    assert (await http.get("/health", headers={"Authorization": f"Bearer {token}"})).status_code == 200
                    assert (await http.get("/health")).status_code == 401
            finally:
                process.terminate()
                await process.wait()
    assert lines["runner"].endswith(f"--token-file {file}") and token not in "".join(lines.values())


@pytest.mark.parametrize("dash", [False, True], ids=["token", "token beginning with -"])
async def test_a_token_argument_warns_and_does_not_survive_startup(dash: bool) -> None:
    # One generated token in 64 begins with "-", which argparse took for an option ("expected one argument").
    token = "-" + secrets.token_urlsafe(32) if dash else secrets.token_urlsafe(32).lstrip("-")
    env = {k: v for k, v in os.environ.items() if k != "TOOLGYM_TOKEN"}
    with anyio.fail_after(120):
        async with await anyio.open_process(serve_command("--token", token), cwd=REPO, env=env) as process:
            try:
                assert process.stderr is not None
                banner = ""
                async for chunk in process.stderr:
                    banner += chunk.decode()
                    if "claude mcp add" in banner and banner.endswith("\n"):
                        break
                cmdline = proc_text(process.pid, "cmdline")
            finally:
                process.terminate()
                await process.wait()
    assert "--token on the command line is visible to every local process" in banner
    assert token not in cmdline and token not in banner


def test_a_token_value_beginning_with_a_dash_is_attached_to_its_option_and_an_option_is_not() -> None:
    from clients.cli import _parse, build_parser

    parser = build_parser()
    assert attached_token(["run", "finance", "--token", "-k3x_9", "--seeds", "0"], parser) == ["run", "finance", "--token=-k3x_9", "--seeds", "0"]
    assert attached_token(["serve", "--token", "--no-token"], parser) == ["serve", "--token", "--no-token"]  # still a missing value
    assert attached_token(["run", "finance", "--token"], parser) == ["run", "finance", "--token"]
    assert attached_token(["run", "finance", "--token", "plain"], parser) == ["run", "finance", "--token", "plain"]
    args = _parse(parser, ["run", "finance", "--server", "http://127.0.0.1:1", "--token", "-k3x_9"])
    assert args.token == "-k3x_9" and args.server == "http://127.0.0.1:1"
