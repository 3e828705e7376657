"""Validation files: who or what played which task instance without the oracle, how it went, and what was wrong.

Each environment keeps one file, ``validation.jsonl``, in its package folder (``envs/<name>/``, a generated
package's folder; the folder of the package holding its ``tasks`` module). ``toolgym play --validate`` appends
to it; ``toolgym tasks`` counts it; ``--tasks verified`` selects by it. It is the kit's answer to SWE-bench
Verified: a template is *verified* when a person or an agent played an instance of it without the oracle and
judged it fair (clear prompt, a world that agrees with itself, a grade that fits the work), and no defect
found since is still open.

The format (schema version 1): one JSON object per line, UTF-8, appended and never rewritten. Two kinds:

``validation``: one played instance::

    {"schema_version": 1, "type": "validation", "id": "v-3f2a9c01d4e7", "env": "finance",
     "template": "large_wire", "seed": 503, "player": "ada", "player_kind": "human",
     "at": "2026-07-31T14:25:01Z", "score": 1.0, "passed": true, "tool_calls": 7,
     "record": "runs/play-20260731-142501/records/play.large_wire.s503.t0.jsonl",
     "record_sha256": "9c1e...", "fixture_version": "a62d659a1de7", "defect": null}

  ``player_kind`` is ``human`` or ``agent`` (then ``player`` names the model or agent); ``at`` is the machine's
  UTC time (metadata, never world time); ``defect`` is null when the player judged the task fair, else what is
  wrong with it, in the player's words (an open defect until a resolution names this line's ``id``).

``resolution``: closes a defect::

    {"schema_version": 1, "type": "resolution", "id": "r-77b0e2c5a913", "env": "finance",
     "resolves": "v-3f2a9c01d4e7", "by": "grace", "at": "2026-08-02T09:10:00Z", "fixed": true,
     "note": "the card's issue date now precedes the loss"}

  ``fixed`` true: the task was changed, so plays recorded before this line no longer vouch for it; false: the
  report was not a defect (nothing changed: earlier fair plays still count, and so does the reporting play).

The rule: a template is **verified** when it has no open defect and at least one play judged fair that was
recorded after its last fix. Lines are read strictly: a line that is not such an object (bad JSON, a missing
or unknown field, another environment, a newer schema, a resolution of nothing) is one
:class:`ValidationFileError` naming the file and the line; nothing is guessed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clients.errors import RunError
from servers.environment import Environment
from servers.lines import append_synced

__all__ = [
    "VALIDATION_FILE",
    "VALIDATION_SCHEMA_VERSION",
    "Validation",
    "Resolution",
    "Line",
    "ValidationFileError",
    "TemplateValidations",
    "validation_path",
    "read_validations",
    "append_line",
    "new_validation",
    "check_validation_fields",
    "new_resolution",
    "open_defects",
    "template_validations",
    "verified_templates",
    "file_sha256",
]

VALIDATION_FILE = "validation.jsonl"
"""The file's name in an environment's package folder."""

VALIDATION_SCHEMA_VERSION = 1
"""Version of the line format this toolgym writes and reads (a newer one is refused, never misread)."""

_Text = Annotated[str, Field(min_length=1, max_length=2000)]
_Name = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]
_Stamp = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")]


class ValidationFileError(RunError):
    """A validation file cannot be read or written as it is; the message names the file (and the line)."""


class Validation(BaseModel):
    """One instance played without the oracle, its outcome, and the player's verdict on the task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    type: Literal["validation"] = "validation"
    id: Annotated[str, Field(pattern=r"^v-[0-9a-f]{12}$")]
    """Name of this line (a resolution names it): random, given when the line is written."""
    env: _Name
    template: _Name
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)]
    player: _Name
    """A person's name, or the model / agent that played."""
    player_kind: Literal["human", "agent"]
    at: _Stamp
    """When it was played: the machine's UTC time (metadata, not the world's clock)."""
    score: Annotated[float, Field(ge=0.0, le=1.0)]
    passed: bool
    tool_calls: Annotated[int, Field(ge=0)]
    record: str | None = None
    """Where the record was saved (a run folder's ``records/...``), as given when it was written."""
    record_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    """The saved record's SHA-256: which trajectory this line vouches for, wherever the file moves."""
    fixture_version: str
    defect: _Text | None = None
    """None: the player judged the task fair; else what is wrong with it (open until resolved)."""


class Resolution(BaseModel):
    """Closes the defect of one validation line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    type: Literal["resolution"] = "resolution"
    id: Annotated[str, Field(pattern=r"^r-[0-9a-f]{12}$")]
    env: _Name
    resolves: Annotated[str, Field(pattern=r"^v-[0-9a-f]{12}$")]
    by: _Name
    at: _Stamp
    fixed: bool
    """True: the task was changed (plays recorded before this line no longer vouch for it); False: not a defect."""
    note: _Text


Line = Validation | Resolution


def _line_id(prefix: str) -> str:
    """A fresh line id: random, so two plays of one instance in the same second still differ."""
    return f"{prefix}-{secrets.token_hex(6)}"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_validation(**fields: Any) -> Validation:
    """A validation line from its fields (``id``, ``at`` and ``schema_version`` filled in).

    Raises:
        ValidationFileError: a field is invalid (an empty player name, a defect of 5,000 characters...).
    """
    data = {"schema_version": VALIDATION_SCHEMA_VERSION, "type": "validation", "at": _now(), **fields}
    data["id"] = _line_id("v")
    return _build(Validation, data)


def check_validation_fields(**fields: Any) -> None:
    """Check a player's own fields (``player``, ``player_kind``, ``defect``) before the play, not after it.

    Raises:
        ValidationFileError: a field the line would refuse (an empty name, a control character, a defect too long).
    """
    placeholder = {
        "env": "x",
        "template": "x",
        "seed": 0,
        "player": "x",
        "player_kind": "human",
        "score": 0.0,
        "passed": False,
        "tool_calls": 0,
        "record_sha256": "0" * 64,
        "fixture_version": "",
    }
    new_validation(**{**placeholder, **fields})


def new_resolution(**fields: Any) -> Resolution:
    """A resolution line from its fields (``id``, ``at`` and ``schema_version`` filled in).

    Raises:
        ValidationFileError: a field is invalid.
    """
    data = {"schema_version": VALIDATION_SCHEMA_VERSION, "type": "resolution", "at": _now(), **fields}
    data["id"] = _line_id("r")
    return _build(Resolution, data)


def _build(model: type[Validation] | type[Resolution], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "line"
        raise ValidationFileError(f"invalid {data.get('type')} line: {where}: {problem['msg']}") from None


def validation_path(environment: Environment) -> Path | None:
    """Where ``environment``'s validation file lives: beside the package holding its tasks module.

    ``envs.finance.tasks`` → ``envs/finance/validation.jsonl``; a generated package's ``<pkg>.tasks`` → its
    folder. None for an environment without a tasks module (templates given in code): it has nowhere to keep one.
    """
    generated = getattr(environment, "generated", None)
    folder = getattr(generated, "folder", None)
    if folder is not None:
        return Path(folder) / VALIDATION_FILE
    module = environment.tasks_module
    if not module:
        return None
    package = module.rpartition(".")[0] or module
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / VALIDATION_FILE
    if spec.origin:
        return Path(spec.origin).parent / VALIDATION_FILE
    return None


def read_validations(path: Path | None, env: str) -> list[Line]:
    """Every line of a validation file, in file order (a missing file, or None, holds none).

    Raises:
        ValidationFileError: unreadable; or a line is not a valid validation or resolution of ``env`` (the
            error names the file and the line); or a resolution names no earlier validation with a defect.
    """
    if path is None or not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationFileError(
            f"cannot read validation file {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    lines: list[Line] = []
    ids: dict[str, Line] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path} line {number}"
        line = _parse_line(raw, where)
        if line.env != env:
            raise ValidationFileError(f"{where}: a line of environment {line.env!r} in the validation file of {env!r}")
        if line.id in ids:
            raise ValidationFileError(f"{where}: id {line.id} was already used by an earlier line")
        if isinstance(line, Resolution):
            target = ids.get(line.resolves)
            if not isinstance(target, Validation) or target.defect is None:
                raise ValidationFileError(
                    f"{where}: resolves {line.resolves}, which is not an earlier validation with a defect"
                )
        ids[line.id] = line
        lines.append(line)
    return lines


def _parse_line(raw: str, where: str) -> Line:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationFileError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValidationFileError(f"{where}: not a JSON object")
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValidationFileError(f"{where}: no schema_version (an integer)")
    if version > VALIDATION_SCHEMA_VERSION:
        raise ValidationFileError(
            f"{where}: schema_version {version}; this toolgym reads up to {VALIDATION_SCHEMA_VERSION}"
        )
    kind = data.get("type")
    model = {"validation": Validation, "resolution": Resolution}.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise ValidationFileError(f"{where}: type must be 'validation' or 'resolution', not {kind!r}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        field_name = ".".join(str(p) for p in problem["loc"]) or "line"
        raise ValidationFileError(f"{where}: {field_name}: {problem['msg']}") from None


def append_line(path: Path, line: Line, lines: Sequence[Line] | None = None) -> None:
    """Append ``line`` to the validation file at ``path`` (created when missing), whole or not at all.

    Args:
        lines: the file's current lines, when already read (checked again otherwise): a resolution must name
            an open defect, and a malformed file is never appended to.

    Raises:
        ValidationFileError: the file is malformed, the resolution names no open defect, or the system refused.
    """
    existing = read_validations(path, line.env) if lines is None else lines
    if isinstance(line, Resolution):
        open_ids = {v.id for v in open_defects(existing)}
        if line.resolves not in open_ids:
            known = ", ".join(sorted(open_ids)[:8]) or "none"
            raise ValidationFileError(f"{path}: no open defect {line.resolves!r} (open: {known})")
    data = (json.dumps(line.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    try:
        append_synced(path, data)
    except OSError as exc:
        raise ValidationFileError(f"cannot write validation file {path}: {exc.strerror or exc}") from None


def open_defects(lines: Iterable[Line]) -> list[Validation]:
    """Validation lines with a defect no resolution names, in file order."""
    lines = list(lines)
    resolved = {line.resolves for line in lines if isinstance(line, Resolution)}
    return [
        line for line in lines if isinstance(line, Validation) and line.defect is not None and line.id not in resolved
    ]


@dataclass
class TemplateValidations:
    """What a validation file says about one template."""

    template: str
    plays: int = 0
    """Validation lines of this template (all of them, fair or not)."""
    fair: int = 0
    """Plays that vouch for the template: judged fair (or their defect found not to be one), after its last fix."""
    seeds: set[int] = field(default_factory=set)
    """Distinct instances (seeds) played."""
    players: set[str] = field(default_factory=set)
    passed: int = 0
    open_defects: list[Validation] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        """At least one fair play since the last fix, and no open defect (the rule in the module docstring)."""
        return self.fair > 0 and not self.open_defects

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready summary (``toolgym tasks --json``)."""
        return {
            "plays": self.plays,
            "fair": self.fair,
            "instances": len(self.seeds),
            "players": sorted(self.players),
            "passed": self.passed,
            "open_defects": [
                {"id": d.id, "seed": d.seed, "player": d.player, "defect": d.defect} for d in self.open_defects
            ],
            "verified": self.verified,
        }


def template_validations(lines: Sequence[Line]) -> dict[str, TemplateValidations]:
    """Per template: plays, fair plays since its last fix, instances, players, passes and open defects."""
    by_id = {line.id: line for line in lines}
    found: dict[str, TemplateValidations] = {}
    for line in lines:
        if isinstance(line, Resolution):
            target = by_id[line.resolves]
            assert isinstance(target, Validation)
            if line.fixed:  # the template changed: what was played before no longer vouches for it
                found[target.template].fair = 0
            else:  # reviewed and found fine: that play vouches for the task after all
                found[target.template].fair += 1
            continue
        stats = found.setdefault(line.template, TemplateValidations(template=line.template))
        stats.plays += 1
        stats.seeds.add(line.seed)
        stats.players.add(line.player)
        stats.passed += int(line.passed)
        if line.defect is None:
            stats.fair += 1
    for defect in open_defects(lines):
        found[defect.template].open_defects.append(defect)
    return found


def verified_templates(environment: Environment) -> set[str]:
    """Ids of ``environment``'s templates that are verified (see the module docstring for the rule).

    Raises:
        ValidationFileError: the environment's validation file is malformed.
    """
    stats = template_validations(read_validations(validation_path(environment), environment.name))
    return {tid for tid in environment.task_templates() if tid in stats and stats[tid].verified}


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes (a saved record's identity in a validation line)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
