"""Validation files: the line format round trip, the verified rule, strict reading, ``toolgym tasks`` counts and
``--tasks verified`` wherever task selectors are taken."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clients.cli import main
from clients.errors import RunError
from clients.runner import RunConfig
from clients.runner import run as run_episodes
from clients.selection import select_tasks
from clients.validation import (
    Validation,
    ValidationFileError,
    append_line,
    new_resolution,
    new_validation,
    read_validations,
    template_validations,
    validation_path,
    verified_templates,
)
from servers.environment import Environment
from servers.registry import load_environment
from tests.clients.play_helpers import PlayPackages, make_packages

SHA = "ab" * 32


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> PlayPackages:
    return make_packages(tmp_path_factory.mktemp("validation-packages"))


@pytest.fixture
def finance(packages: PlayPackages, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Environment, Path]]:
    """Finance, with its validation file in a temporary folder (emptied after each test)."""
    monkeypatch.syspath_prepend(str(packages.root))
    environment = importlib.import_module("playfin").environment
    file = packages.validation_file("playfin")
    yield environment, file
    file.unlink(missing_ok=True)


def played(
    template: str,
    seed: int = 0,
    *,
    player: str = "ada",
    defect: str | None = None,
    passed: bool = True,
    env: str = "finance",
) -> Validation:
    return new_validation(
        env=env,
        template=template,
        seed=seed,
        player=player,
        player_kind="human",
        score=1.0 if passed else 0.0,
        passed=passed,
        tool_calls=4,
        record=f"runs/play-x/records/{template}.s{seed}.jsonl",
        record_sha256=SHA,
        fixture_version="f1",
        defect=defect,
    )


def test_the_environments_keep_their_file_in_their_package_folder() -> None:
    finance = load_environment("finance")
    assert (
        validation_path(finance) == Path(importlib.import_module("envs.finance").__file__).parent / "validation.jsonl"
    )
    assert validation_path(finance.with_templates([])) is None  # templates given in code: nowhere to keep one


def test_round_trip_and_the_verified_rule(finance: tuple[Environment, Path]) -> None:
    environment, file = finance
    fair = played("large_wire", 1)
    append_line(file, fair)
    append_line(file, played("large_wire", 2, player="bob", passed=False))
    broken = played("cancel_wire", 3, defect="the prompt names a wire that is not pending")
    append_line(file, broken)
    append_line(file, played("cancel_wire", 4, player="bob"))
    lines = read_validations(file, "finance")
    assert lines[0] == fair and lines[2].defect == broken.defect
    assert all(json.loads(raw)["schema_version"] == 1 for raw in file.read_text().splitlines())
    stats = template_validations(lines)
    assert (stats["large_wire"].plays, stats["large_wire"].fair, stats["large_wire"].passed) == (2, 2, 1)
    assert stats["large_wire"].players == {"ada", "bob"} and stats["large_wire"].seeds == {1, 2}
    assert stats["large_wire"].verified and not stats["cancel_wire"].verified  # an open defect
    assert verified_templates(environment) == {"large_wire"}
    # fixed: the plays before the fix no longer vouch for the template, until someone plays it again
    append_line(
        file,
        new_resolution(env="finance", resolves=broken.id, by="grace", fixed=True, note="planted wire is pending now"),
    )
    assert verified_templates(environment) == {"large_wire"}
    append_line(file, played("cancel_wire", 5, player="cy"))
    assert verified_templates(environment) == {"large_wire", "cancel_wire"}
    # not a defect: nothing changed, so earlier fair plays still count
    wrong = played("large_wire", 6, defect="I think the limit is wrong")
    append_line(file, wrong)
    assert verified_templates(environment) == {"cancel_wire"}
    append_line(
        file,
        new_resolution(
            env="finance", resolves=wrong.id, by="grace", fixed=False, note="the limit is as the policy says"
        ),
    )
    assert verified_templates(environment) == {"large_wire", "cancel_wire"}
    with pytest.raises(ValidationFileError, match="no open defect"):
        append_line(file, new_resolution(env="finance", resolves=wrong.id, by="grace", fixed=False, note="again"))


def test_verified_is_a_task_selector(finance: tuple[Environment, Path]) -> None:
    environment, file = finance
    with pytest.raises(RunError, match="no task of 'finance' is verified yet"):
        select_tasks(environment, "verified")
    append_line(file, played("large_wire", 1))
    append_line(file, played("cancel_wire", 1, defect="unclear"))
    assert select_tasks(environment, "verified") == ["large_wire"]
    order = list(environment.task_templates())
    assert select_tasks(environment, "verified,available_balance") == [
        t for t in order if t in {"large_wire", "available_balance"}
    ]


async def test_run_takes_verified(finance: tuple[Environment, Path], tmp_path: Path) -> None:
    _, file = finance
    append_line(file, played("available_balance", 2))
    outcome = await run_episodes(
        RunConfig(env="playfin:environment", agent="oracle", tasks="verified", seeds="0", out=tmp_path / "run")
    )
    assert [line.task for line in outcome.lines] == ["available_balance"] and outcome.lines[0].passed


def _line(**changes: Any) -> str:
    data = played("large_wire").model_dump(mode="json")
    data.update(changes)
    return json.dumps({k: v for k, v in data.items() if v is not ...})


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        (_line(schema_version=...), "no schema_version"),
        (_line(schema_version=2), "schema_version 2; this toolgym reads up to 1"),
        (_line(type="review"), "type must be 'validation' or 'resolution'"),
        (_line(player=...), "player: Field required"),
        (_line(player_kind="robot"), "player_kind: Input should be 'human' or 'agent'"),
        (_line(score=1.5), "score: Input should be less than or equal to 1"),
        (_line(seed=-1), "seed: Input should be greater than or equal to 0"),
        (_line(extra="x"), "extra: Extra inputs are not permitted"),
        (_line(record_sha256="abc"), "record_sha256: String should match pattern"),
        (_line(env="support"), "a line of environment 'support' in the validation file of 'finance'"),
        (
            json.dumps(
                new_resolution(env="finance", resolves="v-000000000000", by="x", fixed=True, note="n").model_dump()
            ),
            "resolves v-000000000000, which is not an earlier validation with a defect",
        ),
    ],
)
def test_a_malformed_line_is_one_error_naming_file_and_line(tmp_path: Path, text: str, problem: str) -> None:
    file = tmp_path / "validation.jsonl"
    file.write_text(_line() + "\n\n" + text + "\n")
    with pytest.raises(ValidationFileError) as raised:
        read_validations(file, "finance")
    message = str(raised.value)
    assert message.startswith(f"{file} line 3: ") and problem in message and "\n" not in message


def test_a_repeated_line_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "validation.jsonl"
    line = _line()
    file.write_text(line + "\n" + line + "\n")
    with pytest.raises(ValidationFileError, match="line 2: id v-[0-9a-f]{12} was already used"):
        read_validations(file, "finance")


def test_tasks_shows_counts_defects_and_closes_one(
    finance: tuple[Environment, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, file = finance
    append_line(file, played("large_wire", 1))
    append_line(file, played("large_wire", 2, player="bob"))
    append_line(file, played("large_wire", 2, player="bob"))  # the same instance again: one instance, two plays
    broken = played("cancel_wire", 3, defect="the wire is already cancelled")
    append_line(file, broken)

    def tasks(*argv: str) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as done:
            main(["tasks", "playfin:environment", *argv])
        out, err = capsys.readouterr()
        return int(done.value.code or 0), out, err

    code, out, _ = tasks("--json")
    rows = {json.loads(line)["id"]: json.loads(line)["validation"] for line in out.splitlines()}
    assert code == 0 and rows["large_wire"]["plays"] == 3 and rows["large_wire"]["instances"] == 2
    assert rows["large_wire"]["players"] == ["ada", "bob"] and rows["large_wire"]["verified"] is True
    assert rows["cancel_wire"]["open_defects"] == [
        {"id": broken.id, "seed": 3, "player": "ada", "defect": "the wire is already cancelled"}
    ]
    assert rows["available_balance"] == {
        "plays": 0,
        "fair": 0,
        "instances": 0,
        "players": [],
        "passed": 0,
        "open_defects": [],
        "verified": False,
    }
    code, out, _ = tasks()
    row = next(line for line in out.splitlines() if "large_wire" in line)
    assert [cell.strip() for cell in row.split("│")[7:11]] == ["3", "2", "2", "yes"]
    assert "1 defect " in next(line for line in out.splitlines() if "cancel_wire" in line)
    assert f"validation file: {file} · 4 plays · 1 verified templates · 1 open defects" in out
    code, out, _ = tasks("--verified", "--json")
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["large_wire"]
    code, out, _ = tasks("--defects")
    assert code == 0 and out.startswith(f"{broken.id}  cancel_wire seed 3  ada (human, ")
    code, _, err = tasks("--resolve", broken.id)
    assert code == 2 and "--resolve needs --note TEXT" in err
    code, _, err = tasks("--resolve", "v-000000000000", "--note", "n", "--by", "grace")
    assert code == 2 and "no open defect 'v-000000000000'" in err
    code, out, _ = tasks("--resolve", broken.id, "--note", "replanted", "--by", "grace")
    assert code == 0 and "closed (fixed)" in out
    code, out, _ = tasks("--defects")
    assert out.strip() == "no open defects"
    file.write_text(file.read_text() + "{broken\n")
    code, out, err = tasks()
    assert code == 2 and out == "" and f"{file} line 6: not JSON" in err and err.count("\n") == 1
    with pytest.raises(RunError, match="line 6: not JSON"):
        select_tasks(finance[0], "verified")
