"""``toolgym new`` on sources it cannot use (issue 28): a database with damaged pages, a CSV row with more cells than
its header, a name that breaks the rule — one line naming what to fix, exit status 2, nothing written; never a
traceback."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from clients.cli import main

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _new(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, source: Path) -> str:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["new", name, "--from", str(source), "--out", str(out), "--no-check", "--seeds", "1"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and not out.exists(), err
    lines = [line for line in err.splitlines() if not line.startswith("toolgym new: reading")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _damaged(path: Path) -> Path:
    """A shop database, then garbage written into its table pages (as a disk or a bad copy leaves it)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, email TEXT, status TEXT)")
    conn.executemany("INSERT INTO customer VALUES (?, ?, ?, ?)", [(i, f"Name {i} " + "x" * 60, f"n{i}@x.test", "active") for i in range(400)])
    conn.commit()
    conn.close()
    data = bytearray(path.read_bytes())
    for page in range(3, len(data) // 4096):
        data[page * 4096 + 100: page * 4096 + 400] = bytes(range(256)) + bytes(44)
    path.write_bytes(bytes(data))
    return path


def test_a_damaged_database_is_one_line_naming_the_repair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _new(capsys, tmp_path, "shop", _damaged(tmp_path / "shop.db"))
    assert line.startswith(f"toolgym new: error: source '{tmp_path}/shop.db' is damaged (")
    assert ".recover" in line


def test_a_csv_row_with_extra_cells_is_one_line_naming_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "customer.csv").write_text("id,name,email\n1,Ann,a@x.test\n2,Bob,b@x.test,EXTRA\n")
    line = _new(capsys, tmp_path, "shop", folder)
    assert line == (f"toolgym new: error: {folder}/customer.csv, line 3: 4 cells where the header has 3; fix the row "
                    "(a comma inside a value needs quotes) and run again")


@pytest.mark.parametrize(("name", "suggested"), [("shop_x", "shop-x"), ("Shop", "shop"), ("9lives", "env-9lives")])
def test_a_name_that_breaks_the_rule_says_the_rule_and_a_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, suggested: str) -> None:
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "customer.csv").write_text("id,name\n1,Ann\n")
    line = _new(capsys, tmp_path, name, folder)
    assert "lower-case letters, digits and '-', starting with a letter" in line and f"e.g. {suggested!r}" in line


def test_readme_states_the_name_rule() -> None:
    section = README[README.index("## Your own database"):]
    assert re.search(r"The name \(`shop`\) is lower-case letters, digits and `-`, starting with a letter — no `_`", section)
    assert "`my-shop` → `my_shop_env`" in section
