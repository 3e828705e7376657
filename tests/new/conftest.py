"""Generated environments for the ``toolgym new`` tests: written to temporary folders, never into the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from clients.cli import main
from servers import Environment
from tests.new.sample_dbs import chinook
from tests.new.specs import chinook_rules
from toolgym.new.build import import_generated, new_environment


@pytest.fixture(scope="session")
def chinook_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Chinook from PyPI, made an environment as a user would: `toolgym new` (the default spec), a rules file added
    to the spec, then `toolgym new --spec` again through the CLI, which checks every template on 2 seeds."""
    out = tmp_path_factory.mktemp("new") / "chinook"
    new_environment("chinook", source=chinook(), out=out, check=False)
    rules = chinook_rules(out / "chinook_env" / "spec.json", out.parent / "chinook-rules.json")
    with pytest.raises(SystemExit) as done:
        main(["new", "chinook", "--out", str(out), "--spec", str(rules), "--seeds", "2"])
    assert done.value.code == 0
    return out


@pytest.fixture(scope="session")
def chinook_env(chinook_project: Path) -> Environment:
    return import_generated(chinook_project, "chinook_env")
