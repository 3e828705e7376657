"""Workflows a model proposes (``toolgym new --llm-base-url``): kept only when ``toolgym check`` proves them.

The deterministic generator derives actions from the schema alone (:mod:`toolgym.new.defaults`); a model that reads
the schema and the policy may know more of what a desk like this does (issue a store credit, hold an order, reassign a
plane). So ``toolgym new`` asks the endpoint once for up to :data:`MAX_PROPOSALS` further actions, in the spec's own
format (an action with its rules as data, :mod:`toolgym.new.spec`). Each proposal is then treated like a person's
rules file, and more strictly:

1. it must parse as part of the spec — entity, fields, kinds, every rule's names and values
   (:func:`toolgym.new.spec.parse_spec`), and it may not reuse an action's name — or it is rejected with the reason;
2. the ones that parse become *candidates*: the package's ``proposals.json`` holds them, the environment loads them
   like the spec's own actions (a tool, a line of the policy, ``do_``/``latest_``/``requester_`` templates with a
   refusal twin per rule), and the same check every generated template passes decides;
3. a candidate none of whose templates survives the check is *dropped* (with the check's reason) and leaves no tool
   and no policy line behind; the others are *kept* and load on every later run (re-proved by each ``toolgym new``).

The model sees the schema and the policy, never a row of the data. Any endpoint failure keeps the environment as the
generator made it and records why.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgym.new.errors import NewError
from toolgym.new.spec import Spec, parse_spec

if TYPE_CHECKING:
    from toolgym.new.reword import RewordConfig

__all__ = ["PROPOSALS_FILE", "MAX_PROPOSALS", "schema_text", "ask_proposals", "check_proposal", "proposed_actions",
           "propose_package", "settle_proposals", "proposal_summary"]

PROPOSALS_FILE = "proposals.json"
MAX_PROPOSALS = 6

_SYSTEM = (
    "You design the workflows of a help desk that works on one database. You get its schema, the actions the desk already "
    "has, and its policy. Propose up to {n} further actions such a desk really performs on these records, each with the "
    "rules its policy would state (when the action is refused). Answer with JSON only: {{\"actions\": [...]}}, each action "
    "in this format:\n"
    '{{"name": "hold_order", "kind": "transition", "entity": "order", "field": "status", "to": "on_hold", '
    '"description": "Put an order on hold.", "rules": [{{"check": "order.status in [pending]", "code": "order_not_holdable", '
    '"message": "Only pending orders can be put on hold."}}]}}\n'
    "kind is transition (field, to), update (fields: the fields it may change), create (entity: the child created, parent: "
    "its reference field, fields: what the agent gives) or children (entity: the child, parent: its reference field, set: "
    "values set on each chosen child). A rule's check is an expression over the row (entity.field, entity.parent.field), "
    "the action's arguments (a field name), today, sum(children.field), count(children) and values(children.field), with "
    "comparisons, in [..], and/or/not. Use only the entities, fields and values of the schema. Codes are snake_case."
)


def schema_text(spec: Spec) -> str:
    """The schema as the model reads it: each entity's fields with their kind, a category's values, references."""
    lines = []
    for name, e in spec.entities.items():
        parts = []
        for fname, f in e.fields.items():
            if not f.visible or f.kind == "secret":
                continue
            what = f.kind + (f" -> {f.ref}" if f.kind == "ref" else "") + (f" [{', '.join(f.values[:12])}]" if f.values else "")
            parts.append(f"{fname} ({what})")
        lines.append(f"- {name} (key {e.key or 'none'}): " + ", ".join(parts))
    lines.append("Actions it has: " + (", ".join(f"{a.name} ({a.kind} {a.entity})" for a in spec.actions) or "none"))
    return "\n".join(lines)


def ask_proposals(config: RewordConfig, spec: Spec, policy: str) -> tuple[list[Any], str]:
    """The model's proposed actions (JSON objects, unchecked) and, when there are none, why."""
    import httpx

    body = {"model": config.model, "temperature": 0, "max_tokens": 2000, "messages": [
        {"role": "system", "content": _SYSTEM.format(n=MAX_PROPOSALS)},
        {"role": "user", "content": f"Schema:\n{schema_text(spec)}\n\nPolicy:\n{policy[:6000]}"}]}
    key = os.environ.get(config.api_key_env) if config.api_key_env else None
    try:
        with httpx.Client(timeout=config.timeout) as http:
            response = http.post(f"{config.base_url.rstrip('/')}/chat/completions", json=body,
                                 headers={"Authorization": f"Bearer {key}"} if key else {})
    except httpx.HTTPError as exc:
        return [], f"endpoint unreachable: {type(exc).__name__}"
    except Exception as exc:  # noqa: BLE001  (a bad URL: no proposals, never a crash)
        return [], f"endpoint unusable: {type(exc).__name__}"
    if response.status_code != 200:
        return [], f"endpoint answered HTTP {response.status_code}"
    try:
        content = response.json()["choices"][0]["message"]["content"]
        text = re.sub(r"^```(json)?|```$", "", content.strip(), flags=re.M).strip()
        actions = json.loads(text)["actions"]
    except (ValueError, KeyError, IndexError, TypeError):
        return [], "endpoint answered no JSON object with 'actions'"
    if not isinstance(actions, list):
        return [], "'actions' is not a list"
    return actions[:MAX_PROPOSALS], ""


def check_proposal(spec_data: dict[str, Any], proposal: Any, where: str) -> str | None:
    """Why ``proposal`` cannot join the spec ``spec_data`` (None: it parses, rules and all, and its name is new)."""
    if not isinstance(proposal, dict):
        return "not a JSON object"
    name = proposal.get("name")
    if any(a.get("name") == name for a in spec_data.get("actions", [])):
        return f"an action named {name!r} exists already"
    try:
        parse_spec({**spec_data, "actions": [*spec_data.get("actions", []), proposal]}, where)
    except NewError as exc:
        return str(exc).replace(f"spec file {where!r}", "the proposal")[:300]
    return None


def _read(folder: Path) -> dict[str, Any]:
    path = folder / PROPOSALS_FILE
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def proposed_actions(folder: Path) -> list[dict[str, Any]]:
    """The proposals a package loads: candidates being checked, and those the check kept."""
    entries = _read(folder).get("proposals", [])
    return [e["action"] for e in entries if isinstance(e, dict) and e.get("status") in ("candidate", "kept") and isinstance(e.get("action"), dict)]


def propose_package(spec: Spec, folder: Path, config: RewordConfig, say: Any = lambda _msg: None) -> list[str]:
    """Ask for proposals, validate each against the spec, and write ``proposals.json`` (candidates and rejections).

    Returns the names of the candidates (their templates join the check). Never raises for the endpoint's sake."""
    say("asking the model for further workflows")
    policy = (folder / "policy.md").read_text() if (folder / "policy.md").exists() else ""
    proposals, why = ask_proposals(config, spec, policy)
    data = spec.model_dump(mode="json", exclude_defaults=True)
    previous = [e for e in _read(folder).get("proposals", []) if isinstance(e, dict) and e.get("status") == "kept"]
    data["actions"] = [*data.get("actions", []), *(e["action"] for e in previous)]
    entries = list(previous)
    for i, proposal in enumerate(proposals):
        problem = check_proposal(data, proposal, f"{PROPOSALS_FILE}#{i}")
        if problem is None:
            data["actions"].append(proposal)
            entries.append({"status": "candidate", "action": proposal})
        else:
            entries.append({"status": f"rejected: {problem}", "action": proposal})
    record = {"note": "generated by toolgym new: workflows a model proposed; only those toolgym check proved are kept",
              "model": {"endpoint": config.where(), "model": config.model, "temperature": 0},
              **({"endpoint": why} if why else {}), "proposals": entries}
    (folder / PROPOSALS_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return [e["action"]["name"] for e in entries if e["status"] == "candidate"]


def _owner(template_id: str, names: set[str]) -> str | None:
    head, _, rest = template_id.partition("_")
    return rest if head in ("do", "latest", "requester") and rest in names else None


def settle_proposals(folder: Path, kept: list[str], dropped: dict[str, str]) -> dict[str, str]:
    """After the check: a candidate with a kept template is kept, the others dropped with their templates' reasons.
    Returns proposal name → status."""
    data = _read(folder)
    entries = data.get("proposals", [])
    names = {e["action"]["name"] for e in entries if isinstance(e, dict) and e.get("status") in ("candidate", "kept")}
    mine = {n: [t for t in [*kept, *dropped] if _owner(t, {n})] for n in names}
    out = {}
    for e in entries:
        if not isinstance(e, dict) or e.get("status") not in ("candidate", "kept"):
            continue
        name = e["action"]["name"]
        if any(t in kept for t in mine[name]):
            e["status"] = "kept"
        else:
            reasons = "; ".join(f"{t}: {dropped[t]}" for t in mine[name] if t in dropped)[:400]
            e["status"] = f"dropped: {reasons or 'no template could be derived'}"
        out[name] = e["status"]
    if entries:
        (folder / PROPOSALS_FILE).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return out


def proposal_summary(folder: Path) -> dict[str, str]:
    """Proposal name → status, for the report."""
    return {e["action"].get("name", "?"): e["status"] for e in _read(folder).get("proposals", [])
            if isinstance(e, dict) and isinstance(e.get("action"), dict)}
