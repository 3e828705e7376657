"""Generated environments for the ``toolgym new`` tests: written to temporary folders, never into the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from clients.cli import main
from servers import Environment
from tests.new.sample_dbs import chinook
from tests.new.specs import chinook_rules
from tests.session_cache import build_once
from toolgym.new.build import import_generated, new_environment


@pytest.fixture(scope="session")
def chinook_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Chinook from PyPI, made an environment as a user would: `toolgym new` (the default spec), a rules file added
    to the spec, then `toolgym new --spec` again through the CLI, which checks every template on 2 seeds. Built
    once per test session, whichever worker asks first (``build_once``); tests only read it."""

    def build(folder: Path) -> None:
        out = folder / "chinook"
        new_environment("chinook", source=chinook(), out=out, check=False)
        rules = chinook_rules(out / "chinook_env" / "spec.json", folder / "chinook-rules.json")
        with pytest.raises(SystemExit) as done:
            main(["new", "chinook", "--out", str(out), "--spec", str(rules), "--seeds", "2"])
        assert done.value.code == 0

    return build_once(tmp_path_factory, "chinook-project", build) / "chinook"


@pytest.fixture(scope="session")
def chinook_env(chinook_project: Path) -> Environment:
    return import_generated(chinook_project, "chinook_env")
