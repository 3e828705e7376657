"""``toolgym new`` on databases it has never seen, with the mess real ones have (tests/new/messy_dbs.py): what it
infers, the errors it gives, and generated environments that pass the check, with and without a rules file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from clients.cli import main
from graders.metaeval import check_environment
from tests.new.messy_dbs import hospital, library, logistics
from tests.new.messy_specs import LIBRARY_RULES
from toolgym.new.build import import_generated, new_environment
from toolgym.new.data import _convert
from toolgym.new.introspect import Column, read_source


@pytest.fixture(scope="module")
def dbs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("messy")
    return {"hospital": hospital(folder / "hospital.sqlite"), "library": library(folder / "library.sqlite"),
            "logistics": logistics(folder / "logistics.sqlite")}


def test_what_is_inferred_from_messy_schemas(dbs: dict[str, Path]) -> None:
    kinds = {}
    for name in ("hospital", "library", "logistics"):
        for t in read_source(dbs[name]).tables:
            kinds.update({(name, t.name, c.name): (c.kind, c.minor, c.epoch) for c in t.columns})
    assert ("hospital", "wait_list", "entry_id") in kinds  # "wait list": a fixture name the change log can use
    assert ("hospital", "prescriptions", "doctor_s_note") in kinds  # "Doctor's Note"
    assert not any(t == "upcoming" for _, t, _ in kinds)  # views are skipped
    assert kinds["hospital", "appointments", "fee"][0] == "money"  # REAL
    assert kinds["hospital", "prescriptions", "price"][0] == "money"  # TEXT "12.50"
    assert kinds["hospital", "prescriptions", "dose_mg"][0] == "decimal"
    assert kinds["hospital", "appointments", "created_ts"] == ("date", False, "s")  # unix epoch seconds
    assert kinds["library", "member", "balance_cents"] == ("money", True, None)  # integer cents
    assert kinds["library", "loan", "loaned_at"][0] == kinds["logistics", "order", "placed"][0] == "date"
    assert kinds["library", "branch", "opened"][0] == "integer"  # a year, not an epoch
    assert kinds["logistics", "order", "group"][0] == "category"  # reserved words as names


def test_money_is_exact_and_rounded_half_up() -> None:
    money = Column(name="fee", declared="REAL", kind="money")
    assert [_convert(money, v) for v in (2.675, 0.1 + 0.2, "12.50", 30.0, 19.999, -0.005)] == [268, 30, 1250, 3000, 2000, -1]
    cents = Column(name="fine_cents", declared="INTEGER", kind="money", minor=True)
    assert _convert(cents, 1999) == 1999
    epoch = Column(name="placed", declared="INTEGER", kind="date", epoch="ms")
    assert _convert(epoch, 1_767_225_600_000) == "2026-01-01T00:00:00Z"


def _bad(tmp_path: Path, source: Path, rules: object | str) -> str:
    spec = tmp_path / "rules.json"
    spec.write_text(rules if isinstance(rules, str) else json.dumps(rules))
    return _fails(tmp_path, "--from", str(source), "--spec", str(spec))


def _fails(tmp_path: Path, *args: str) -> str:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["new", "hosp", "--out", str(out), "--no-check", *args])
    assert done.value.code == 2 and not out.exists()  # nothing half-written
    return str(done.value)


_CANCEL = {"name": "cancel_appointment", "kind": "transition", "entity": "appointment", "field": "status", "to": "cancelled",
           "rules": [{"check": "appointment.status in [scheduled]", "code": "not_cancelable", "message": "Only scheduled ones."}]}


@pytest.mark.parametrize(("change", "message"), [
    ({"entity": "apointment"}, "unknown entity 'apointment'; entities: department"),
    ({"field": "statu"}, "entity 'appointment' has no field 'statu'"),
    ({"kind": "delete"}, "actions.0.kind: Input should be 'transition', 'update', 'create' or 'children'"),
    ({"check": "appointment.statuss in [scheduled]"}, "appointment.statuss is not a field of appointment"),
    ({"check": "appointment.status in [schedulled]"}, "'schedulled' is not a value of appointment.status"),
    ({"check": "appointment.status in [scheduled"}, "not an expression"),
    ({"check": "appointment.patient.nam == 'x'"}, "appointment.patient.nam is not a field of patient"),
    ({"check": "sum(prescriptions.drug) > 1"}, "prescriptions have no number field 'drug'"),
    ({"check": "count(patients) > 1"}, "patients do not refer to appointment"),
    ({"check": "fee < 3"}, "unknown name 'fee'"),
])
def test_a_bad_rules_file_is_one_clear_error(tmp_path: Path, dbs: dict[str, Path], change: dict, message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    action = {**_CANCEL, **{k: v for k, v in change.items() if k != "check"}}
    if "check" in change:
        action["rules"] = [{**_CANCEL["rules"][0], "check": change["check"]}]
    _bad(tmp_path, dbs["hospital"], {"actions": [action]})
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_bad_sources_and_files_are_one_clear_error(tmp_path: Path, dbs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _bad(tmp_path, dbs["hospital"], '{"actions": [,]}')
    _bad(tmp_path, dbs["hospital"], {"entitiez": {}})
    (tmp_path / "text.db").write_text("not a database\n")
    (tmp_path / "empty.db").write_bytes(b"")
    for name, ddl in {"views.db": "CREATE VIEW v AS SELECT 1 AS x", "norows.db": "CREATE TABLE t (id INTEGER PRIMARY KEY, x)"}.items():
        conn = sqlite3.connect(tmp_path / name)
        conn.execute(ddl)
        conn.close()
    for name in ("text.db", "empty.db", "views.db", "norows.db", "missing.db"):
        _fails(tmp_path, "--from", str(tmp_path / name))
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(": ", 2)[2][:60] for line in lines] == [
        f"spec file '{tmp_path}/rules.json' is not valid JSON: line 1 col"[:60],
        f"spec file '{tmp_path}/rules.json' is invalid: entitiez: unknown"[:60],
        f"source '{tmp_path}/text.db' is not a SQLite database (give a"[:60],
        f"source '{tmp_path}/empty.db' is an empty file: no tables to bu"[:60],
        f"source '{tmp_path}/views.db' has no table to build from (only"[:60],
        f"source '{tmp_path}/norows.db' has tables (t) but no rows in an"[:60],
        f"source '{tmp_path}/missing.db' does not exist; give a SQLite f"[:60]]


def test_a_bad_rules_file_on_a_second_run_keeps_the_spec(tmp_path: Path, dbs: dict[str, Path]) -> None:
    out = tmp_path / "out"
    new_environment("hosp", source=dbs["hospital"], out=out, check=False, seeds=1)
    before = (out / "hosp_env" / "spec.json").read_text()
    (tmp_path / "rules.json").write_text(json.dumps({"actions": [{**_CANCEL, "field": "statu"}]}))
    with pytest.raises(SystemExit) as done:
        main(["new", "hosp", "--out", str(out), "--spec", str(tmp_path / "rules.json"), "--no-check"])
    assert done.value.code == 2 and (out / "hosp_env" / "spec.json").read_text() == before


@pytest.fixture(scope="module")
def hospital_project(tmp_path_factory: pytest.TempPathFactory, dbs: dict[str, Path]) -> Path:
    """The hospital (a table named "wait list", a column named "select", REAL and TEXT money, epoch dates, a
    composite WITHOUT ROWID key, a table without a key, a view, an empty and a one-row table), no rules file,
    every template checked on 3 seeds."""
    out = tmp_path_factory.mktemp("hospital") / "out"
    report = new_environment("hospital", source=dbs["hospital"], out=out, seeds=3)
    assert {"do_cancel_appointment", "latest_cancel_appointment", "do_update_patient_contact", "lookup_patient",
            "total_fee_appointment_of_patient", "count_appointment_of_doctor"} <= set(report.kept), report.summary()
    assert all(why.startswith(("cannot build an instance: fewer than", "one of many alike")) for why in report.dropped.values()), report.dropped
    return out


@pytest.mark.slow
async def test_the_most_adversarial_database_end_to_end(hospital_project: Path, toolgym_episode, toolgym_play, toolgym_grade) -> None:
    env = import_generated(hospital_project, "hospital_env")
    checked = await check_environment(env, seeds=20, templates=["do_cancel_appointment", "total_fee_appointment_of_patient"])
    assert checked.ok, checked.summary()
    for template in ("do_cancel_appointment", "latest_cancel_appointment"):
        for seed in (0, 1):
            episode = await toolgym_episode(env, task=template, seed=seed)
            await toolgym_play(episode, episode.task.oracle)
            assert (await toolgym_grade(episode)).score == 1.0
            assert (await toolgym_grade(await toolgym_episode(env, task=template, seed=seed))).score == 0


@pytest.mark.slow
def test_a_rules_file_written_from_the_readme(tmp_path: Path, dbs: dict[str, Path]) -> None:
    """Only `verify` and `actions`, as the README's example: transition, update and create, with `in`, comparisons of
    money, a parent's field, count(children), and verification."""
    out = tmp_path / "out"
    new_environment("library", source=dbs["library"], out=out, check=False, seeds=1)
    (tmp_path / "rules.json").write_text(json.dumps(LIBRARY_RULES))
    with pytest.raises(SystemExit) as done:
        main(["new", "library", "--out", str(out), "--spec", str(tmp_path / "rules.json"), "--seeds", "2"])
    assert done.value.code == 0
    kept = json.loads((out / "library_env" / "templates.json").read_text())
    assert {"do_suspend_member", "do_update_member_contact", "do_lend_book", "do_return_loan"} <= set(kept["kept"]), kept
    policy = (out / "library_env" / "policy.md").read_text()
    assert "`loan_limit_reached`" in policy and "*Verify first.*" in policy
