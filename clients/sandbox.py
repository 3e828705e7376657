"""The sandbox a ``cmd:`` agent runs in: it sees its MCP endpoint, its prompt and its own code, nothing of the kit.

An external agent is a program with a shell under the runner's own user. Without a sandbox it can read the
kit's source (every task template and its oracle), the template cache, earlier run folders, and other
processes' command lines, environments and memory (the control token). So by default (``--sandbox auto``)
the runner starts it under bubblewrap (``bwrap``, Debian's ``bubblewrap`` package), chosen over raw user
namespaces because it is one small audited binary that does the same as root or as a plain user (it
creates a user namespace itself when it needs one), that Flatpak relies on, and that every distribution
packages. The agent gets:

- its own PID, IPC and UTS namespaces, a fresh ``/proc`` and a minimal ``/dev``: it sees only its own
  processes, never the runner, the server or another episode's agent; no capabilities at all (``--cap-drop
  ALL``, so a root runner's agent is not root in any useful sense), a new session (no terminal injection),
  and it dies with the runner;
- read-only system folders (``/usr``, ``/bin``, ``/lib*``, ``/sbin``, ``/etc``), an empty ``/tmp``, a
  private writable home (at ``$HOME``'s path) and working directory, its prompt file and MCP config;
- what its command needs, found from the command itself (:class:`Sandbox`): the program and its package
  folder (nearest ``pyvenv.cfg``, ``package.json``, ``node_modules``, ``pyproject.toml``..., or the prefix
  above a ``bin/`` folder), a script's ``#!`` interpreter, a virtual environment's base Python
  (``pyvenv.cfg``), and files and folders named by absolute (or existing relative) paths among its
  arguments, read-only; plus ``--sandbox-bind PATH[:ro]`` for anything else (its config, its tools);
- the network, shared: it must reach its episode's MCP URL on 127.0.0.1, and its model provider.

Never visible, whatever the command names (:func:`kit_paths`): the kit's packages (``fixtures``,
``servers``, ``envs``, ``graders``, ``clients``, ``toolgym``) and a source checkout holding them, installed
environment packages, the template cache (``~/.cache/toolgym``), the run folder, and the source folders of
the run's task templates (private ones included) — and every earlier output of the kit, wherever it is (run
folders, records, exports, reports: ``clients/sandbox_outputs.py``). A bound folder that contains one of them
gets it masked by an empty one (a file: by ``/dev/null``). A program may live *inside* a checkout or the cache
folder (a virtual environment there), never in a package of the kit or in an earlier output; an argument
naming anything in there is not bound; a ``--sandbox-bind`` into one is refused.

``--sandbox none`` runs the agent as the runner's user with nothing hidden; it says so once, loudly.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from clients.errors import AgentSpecError
from clients.sandbox_outputs import OutputGuard

if TYPE_CHECKING:
    from servers.environment import Environment

__all__ = [
    "MODES",
    "SandboxMode",
    "Bind",
    "KitPaths",
    "Sandbox",
    "SandboxUnavailable",
    "parse_bind",
    "kit_paths",
    "environment_sources",
    "resolve_mode",
    "probe",
    "unsandboxed_warning",
]

SandboxMode = Literal["auto", "bwrap", "none"]
MODES: tuple[SandboxMode, ...] = ("auto", "bwrap", "none")

KIT_PACKAGES = ("fixtures", "servers", "envs", "graders", "clients", "toolgym")
"""The kit's top-level packages: their folders hold task templates, oracles and the control plane."""

SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Bound read-only (or re-created as the symlinks they are, e.g. ``/bin -> usr/bin``) when present."""

MARKERS = ("pyvenv.cfg", "package.json", "node_modules", "pyproject.toml", "setup.py", "setup.cfg", "Cargo.toml", "go.mod", ".git")
"""Files whose folder is a program's package folder (its code, its dependencies)."""

CODE_SUFFIXES = (".py", ".pyz", ".js", ".mjs", ".cjs", ".ts", ".mts", ".sh", ".bash", ".rb", ".pl", ".lua", ".jar")
"""An argument file with one of these suffixes (or executable) is code: its package folder is bound with it."""

_SEARCH_UP = 4
"""How many folders above a program or script to look for a package marker."""


class SandboxUnavailable(AgentSpecError):
    """No sandbox can be made here for a ``cmd:`` agent, and ``--sandbox none`` was not given."""


@dataclass(frozen=True)
class Bind:
    """A path made visible inside the sandbox at the same path."""

    path: Path
    writable: bool = False


def parse_bind(text: str) -> Bind:
    """``PATH`` (read-write), ``PATH:ro`` or ``PATH:rw``, as ``--sandbox-bind`` takes it.

    Raises:
        AgentSpecError: a relative or missing path.
    """
    path, writable = text, True
    for suffix, rw in ((":ro", False), (":rw", True)):
        if text.endswith(suffix):
            path, writable = text[: -len(suffix)], rw
    resolved = Path(os.path.expanduser(path))
    if not resolved.is_absolute():
        resolved = Path.cwd() / resolved
    if not resolved.exists():
        raise AgentSpecError(f"--sandbox-bind {text}: {resolved} does not exist")
    return Bind(Path(os.path.normpath(resolved)), writable)


@dataclass(frozen=True)
class KitPaths:
    """What no agent may see.

    ``core``: never bound, masked under anything bound. ``zones``: folders whose own contents are the kit's
    (a source checkout, the template cache) but that may hold an agent's program (a virtual environment);
    a program or ``--sandbox-bind`` may be inside one, an argument may not, and nothing may bind one whole.
    """

    core: tuple[Path, ...]
    zones: tuple[Path, ...]

    def secret(self, path: Path) -> bool:
        """Whether ``path`` is, or is inside, a core path."""
        return any(_within(path, c) for c in self.core)

    def zoned(self, path: Path) -> bool:
        """Whether ``path`` is, or is inside, a zone."""
        return any(_within(path, z) for z in self.zones)

    def under(self, path: Path) -> list[Path]:
        """Core paths and zones strictly inside ``path`` (what binding it must mask), as the agent sees them
        through ``path`` (compared by real paths too: ``path`` may be a symbolic link to the folder holding them)."""
        real = _real(path)
        found: set[Path] = set()
        for hidden in (*self.core, *self.zones):
            if hidden != path and _within(hidden, path):
                found.add(hidden)
            resolved = _real(hidden)
            if resolved != real and _within(resolved, real):
                found.add(path / resolved.relative_to(real))
        return sorted(found)


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def _package_dirs(name: str) -> list[Path]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [_real(p) for p in spec.submodule_search_locations]
    return [_real(spec.origin)] if spec.origin and spec.origin not in ("built-in", "frozen") else []


def _cache_dirs() -> list[Path]:
    found = [Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolgym"]
    setting = os.environ.get("TOOLGYM_CACHE_DIR", "").strip()
    if setting and setting.lower() not in ("off", "0", "none"):
        found.append(Path(setting))
    return [_real(p) for p in found]


def kit_paths(hidden: Iterable[Path] = ()) -> KitPaths:
    """The kit's own paths on this machine, plus ``hidden`` (the run folder, task template sources...) as core."""
    core: set[Path] = {_real(p) for p in hidden}
    zones: set[Path] = set(_cache_dirs())
    for name in KIT_PACKAGES:
        for folder in _package_dirs(name):
            core.add(folder)
            parent = folder.parent
            if parent.name not in ("site-packages", "dist-packages"):
                zones.add(parent)  # a source checkout: its tests, docs and history hold templates too
    try:
        from servers.registry import installed_environments

        for points in installed_environments().values():
            for point in points:
                core.update(_package_dirs(point.module.split(".")[0]))
    except Exception:  # noqa: BLE001 - a broken installed package must not stop an agent from being sandboxed
        pass
    return KitPaths(core=tuple(sorted(core)), zones=tuple(sorted(zones - core)))


def environment_sources(environment: Environment) -> list[Path]:
    """Folders holding ``environment``'s task templates (private ones included) and its own template cache."""
    found: set[Path] = set()
    if environment.tasks_module:
        module = environment.tasks_module.rsplit(".", 1)[0] if "." in environment.tasks_module else environment.tasks_module
        found.update(_package_dirs(module))
    for template in environment.task_templates().values():
        try:
            source = inspect.getsourcefile(getattr(template, "build", template))  # type: ignore[arg-type]
        except TypeError:
            source = None
        if source:
            found.add(_real(source).parent)
    cache_dir = getattr(environment.fixture, "cache_dir", None)
    if cache_dir is not None:
        found.add(_real(cache_dir))
    return sorted(found)


# ---------------------------------------------------------------------------------------------------------
# Probing and choosing the mode


def _system_arguments() -> list[str]:
    args: list[str] = []
    for name in SYSTEM_PATHS:
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    resolv = Path("/etc/resolv.conf")
    if resolv.is_symlink():
        target = _real(resolv)
        if target.exists() and not _within(target, Path("/etc")) and not _within(target, Path("/usr")):
            args += ["--ro-bind", str(target), str(target)]  # e.g. systemd-resolved's stub in /run
    return args


BASE_OPTIONS = (
    "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL",
    "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
)
"""Namespaces, no capabilities, fresh /proc, /dev and /tmp: the same for every sandboxed agent."""


@functools.cache
def probe(bwrap: str | None = None) -> str | None:
    """Why no sandbox can be made here, or None when bubblewrap works (checked once per process and binary)."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap needs Linux (this is {sys.platform})"
    binary = bwrap or shutil.which("bwrap")
    if binary is None or not os.access(binary, os.X_OK):
        return "bubblewrap (bwrap) is not installed"
    true = shutil.which("true") or "/bin/true"
    try:
        done = subprocess.run(
            [binary, *BASE_OPTIONS, *_system_arguments(), "--", true],
            capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed to start: {exc}"
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"bubblewrap cannot create a sandbox here ({reason})"
    return None


def resolve_mode(mode: str, *, bwrap: str | None = None) -> Literal["bwrap", "none"]:
    """The sandbox a ``cmd:`` agent gets for ``--sandbox mode``.

    Raises:
        SandboxUnavailable: ``auto`` or ``bwrap`` where bubblewrap does not work; the message says why and
            what to install, or to pass ``--sandbox none``.
        AgentSpecError: an unknown mode.
    """
    if mode not in MODES:
        raise AgentSpecError(f"--sandbox {mode!r}: choose one of {', '.join(MODES)}")
    if mode == "none":
        return "none"
    reason = probe(bwrap)
    if reason is None:
        return "bwrap"
    raise SandboxUnavailable(
        f"cmd: agents run in a sandbox, and {reason}: install bubblewrap (Debian/Ubuntu: apt-get install "
        "bubblewrap; Fedora: dnf install bubblewrap; in a container, allow user namespaces), or pass "
        "--sandbox none to run the agent unsandboxed as yourself, able to read the kit's tasks and oracles"
    )


_warned = False


def unsandboxed_warning(kit: KitPaths) -> str | None:
    """The loud warning of ``--sandbox none``, the first time it is asked for in this process (None after)."""
    global _warned
    if _warned:
        return None
    _warned = True
    user = _user()
    reach = ", ".join(str(p) for p in (*kit.zones, *kit.core)[:6])
    return (
        f"WARNING: --sandbox none: cmd: agents run unsandboxed as {user}. They can read the kit's source with "
        f"every task template and oracle, the template cache, this run's folder and every earlier run ({reach}...), see every "
        f"process of {user} (command lines, environments; memory where ptrace is allowed, which for root is "
        "always), and use the network. Run only agents you trust this way."
    )


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return "this user"


# ---------------------------------------------------------------------------------------------------------
# What one command needs


@dataclass
class Sandbox:
    """The bubblewrap sandbox of one ``cmd:`` command line, its binds worked out once for every episode.

    Args:
        words: the command's words, placeholders not yet filled in.
        binds: ``--sandbox-bind`` paths.
        kit: what must stay hidden.
        path: the ``PATH`` the command is looked up on.
        bwrap: the bubblewrap binary (default: on ``PATH``).
        guard: the kit's earlier outputs to hide (default: the registered ones; ``clients/sandbox_outputs.py``);
            the folders the sandbox shows are walked for more.

    Raises:
        AgentSpecError: the program itself lies in a folder the sandbox hides, a bind exposes one (the kit, an
            earlier run...), or a shown folder is too large to check for earlier runs.
    """

    words: list[str]
    binds: Sequence[Bind] = ()
    kit: KitPaths = field(default_factory=kit_paths)
    path: str | None = None
    bwrap: str = ""
    guard: OutputGuard | None = None
    programs: list[Path] = field(default_factory=list, init=False)
    arguments: list[Path] = field(default_factory=list, init=False)
    absolute: dict[int, str] = field(default_factory=dict, init=False)
    """Word index → absolute path, for words naming existing relative paths (the agent's cwd is its own)."""
    home: Path = field(default=Path("/"), init=False)
    withheld: list[Path] = field(default_factory=list, init=False)
    """Paths named by the arguments that the sandbox hides all the same (the kit's own)."""

    def __post_init__(self) -> None:
        self.bwrap = self.bwrap or shutil.which("bwrap") or "bwrap"
        self.home = Path(os.path.normpath(os.environ.get("HOME") or Path.home()))
        guard = self.guard = self.guard if self.guard is not None else OutputGuard()
        for bind in self.binds:
            if self.kit.secret(bind.path) or bind.path in self.kit.zones:
                raise AgentSpecError(f"--sandbox-bind {bind.path}: that is the kit's own (tasks, oracles, runs); agents never see it")
            guard.refuse_bind(bind.path)
        program = self._absolute(0)
        if program is None:
            raise AgentSpecError(f"cmd: {self.words[0]!r} is not an executable on PATH or a file")
        guard.refuse_program(Path(program))
        self._add_program(Path(program), depth=0)
        if not any(_within(_real(program), p) or _within(Path(program), p) for p in (*self.programs, *map(Path, SYSTEM_PATHS))):
            raise AgentSpecError(
                f"cmd: {program} lies in the kit's own folders ({', '.join(map(str, self.kit.zones))}), which the sandbox "
                "hides from agents; move the agent elsewhere, or pass --sandbox none"
            )
        for index in range(1, len(self.words)):
            word = self.words[index]
            if "{" in word:
                continue  # a placeholder: filled with our own files (bound apart) or the prompt
            for candidate in dict.fromkeys([word, word.partition("=")[2]]):
                found = self._absolute(index, candidate)
                if found is not None:
                    self._add_argument(Path(found))
        # Every folder shown from the host is walked once for the kit's earlier outputs (run folders...).
        guard.walk(
            [(p, "cmd: the agent's folder") for p in self.programs]
            + [(p, "cmd: argument") for p in self.arguments]
            + [(b.path, "--sandbox-bind") for b in self.binds]
        )

    # -- finding paths ----------------------------------------------------------------------------------

    def _absolute(self, index: int, word: str | None = None) -> str | None:
        """The absolute path ``word`` names (the program is looked up on PATH), or None."""
        text = self.words[index] if word is None else word
        if not text:
            return None
        if index == 0 and "/" not in text:
            return shutil.which(text, path=self.path or os.environ.get("PATH"))
        if text.startswith("-") or not os.path.exists(text):
            return None
        absolute = os.path.normpath(os.path.abspath(text))
        if absolute != text and text == self.words[index]:
            self.absolute[index] = absolute
        return absolute

    def _allowed(self, root: Path, *, program: bool) -> bool:
        # Never a folder holding the home or the temporary folder whole: the private home would be replaced,
        # and other episodes' agent folders (prompts, MCP configs) live in the temporary folder.
        if root == Path("/") or _within(self.home, root) or _within(_real(self.home), root):
            return False
        if _within(_real(tempfile.gettempdir()), root):
            return False
        if any(_within(root, Path(s)) for s in SYSTEM_PATHS):
            return False
        if self.kit.secret(root) or root in self.kit.zones:
            return False
        if not self.kit.zoned(root):
            return True
        # Inside a checkout or the cache folder: a program's own file, or its own environment (a virtual
        # environment, a Node package), never any other folder of it, and never for an argument.
        return program and (root.is_file() or any((root / m).exists() for m in ("pyvenv.cfg", "package.json", "node_modules")))

    def _package_folder(self, file: Path) -> Path:
        folder = file.parent
        if folder.name == "bin":
            return folder.parent  # a prefix (a virtual environment, /opt/x, a pyenv version): bin/, lib/...
        for level, candidate in enumerate([folder, *folder.parents]):
            if level >= _SEARCH_UP or candidate in (self.home, Path("/"), _real(tempfile.gettempdir())):
                break
            if any((candidate / marker).exists() for marker in MARKERS):
                return candidate
        return folder

    def _add(self, found: list[Path], candidates: Iterable[Path], *, program: bool) -> None:
        for candidate in candidates:
            if self._allowed(candidate, program=program):
                if candidate not in found:
                    found.append(candidate)
                return

    def _add_program(self, program: Path, depth: int) -> None:
        for path in dict.fromkeys([program, _real(program)]):
            folder = self._package_folder(path)
            self._add(self.programs, [folder, path], program=True)
            config = folder / "pyvenv.cfg"
            if config.is_file():
                self._add_base_python(config)
        if depth < 2:
            self._add_interpreter(_real(program), depth)

    def _add_base_python(self, config: Path) -> None:
        for line in config.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                home = _real(value.strip())
                self._add(self.programs, [home.parent if home.name == "bin" else home], program=True)

    def _add_interpreter(self, script: Path, depth: int) -> None:
        try:
            with script.open("rb") as handle:
                first = handle.readline(512)
        except OSError:
            return
        if not first.startswith(b"#!"):
            return
        words = first[2:].decode(errors="replace").split()
        if not words:
            return
        interpreter = words[0]
        if os.path.basename(interpreter) == "env":
            rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
            found = shutil.which(rest[0], path=self.path or os.environ.get("PATH")) if rest else None
            interpreter = found or interpreter
        if os.path.isabs(interpreter) and os.path.exists(interpreter):
            self._add_program(Path(interpreter), depth + 1)

    def _add_argument(self, path: Path) -> None:
        real = _real(path)
        kit = self.kit
        held = self.guard is not None and self.guard.holder(path) is not None
        if held or kit.secret(real) or kit.zoned(real) or kit.secret(path) or kit.zoned(path):
            self.withheld.append(path)  # the kit's own, named on purpose or not: never bound for an argument
            return
        if real.is_dir():
            self._add(self.arguments, [real], program=False)
        elif real.suffix in CODE_SUFFIXES or os.access(real, os.X_OK):
            self._add(self.arguments, [self._package_folder(real), real], program=False)
        else:
            self._add(self.arguments, [real], program=False)
        if path != real:
            self._add(self.arguments, [path], program=False)  # through a symlink: where the agent will look

    # -- the command line --------------------------------------------------------------------------------

    def render_words(self, argv: list[str]) -> list[str]:
        """``argv`` (the rendered command) with relative paths made absolute, as the sandbox needs them."""
        return [self.absolute.get(i, word) if i < len(self.words) else word for i, word in enumerate(argv)]

    def command(self, argv: list[str], *, work: Path, home: Path, files: Sequence[Path]) -> list[str]:
        """The ``bwrap ... -- argv`` command line of one episode.

        Args:
            argv: the episode's command (placeholders filled).
            work: a fresh writable folder: the agent's working directory, at its own path.
            home: a fresh writable folder mounted at ``$HOME``'s path.
            files: the episode's prompt file and MCP config, bound read-only at their paths.
        """
        if self.guard is not None:
            self.guard.refresh()  # a run started since: its folder is registered, and masked from this episode on
        args = [self.bwrap, *BASE_OPTIONS, *_system_arguments()]
        outer: list[Path] = [Path(s) for s in SYSTEM_PATHS if os.path.isdir(s) and not os.path.islink(s)]
        if self.home != Path("/"):
            args += ["--bind", str(home), str(self.home)]
        args += ["--bind", str(work), str(work)]
        for path in self.arguments:
            args += ["--ro-bind", str(path), str(path)]
        outer += self.arguments
        # Masks first, programs after: a virtual environment kept inside the template cache folder shows
        # through the empty folder masking the cache; the rest of the cache does not.
        args += self._masks(outer)
        for path in self.programs:
            args += ["--ro-bind", str(path), str(path)]
        for bind in self.binds:
            args += ["--bind" if bind.writable else "--ro-bind", str(bind.path), str(bind.path)]
        args += self._masks([*self.programs, *(b.path for b in self.binds)])
        for file in files:
            args += ["--ro-bind", str(file), str(file)]
        args += ["--chdir", str(work), "--setenv", "TMPDIR", "/tmp", "--", *argv]
        return args

    def _masks(self, bound: Sequence[Path]) -> list[str]:
        """Options hiding the kit's paths inside ``bound`` folders (an empty folder, or /dev/null for a file)."""
        args: list[str] = []
        seen: set[Path] = set()
        for folder in bound:
            earlier = self.guard.under(folder) if self.guard is not None else []
            for hidden in [*self.kit.under(folder), *earlier]:
                if hidden in seen or not os.path.lexists(hidden):
                    continue
                seen.add(hidden)
                if hidden.is_dir():
                    args += ["--tmpfs", str(hidden)]
                else:
                    args += ["--ro-bind", "/dev/null", str(hidden)]
        return args

    def visible(self) -> list[Path]:
        """Everything bound from the host besides the system folders, the private folders and the episode's files."""
        return [*self.arguments, *self.programs, *(b.path for b in self.binds)]
