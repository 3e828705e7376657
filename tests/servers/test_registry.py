"""Environment discovery: folders under envs/ plus installed packages' ``toolgym.environments`` entry points,
listed without imports, loaded lazily, and every broken entry point a clear error naming its package."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clients.cli import main as cli_main
from fixtures.errors import EnvironmentNotFound
from servers.environment import Environment
from servers.registry import ENTRY_POINT_GROUP, environment_names, installed_environments, load_environment

Install = Callable[..., None]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """Fake installed distributions: a dist-info with entry points plus a module, on ``sys.path``."""
    monkeypatch.syspath_prepend(str(tmp_path))
    modules: list[str] = []

    def add(dist: str, points: dict[str, str], module: str | None = None, source: str = "") -> None:
        info = tmp_path / f"{dist.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
        lines = "".join(f"{name} = {value}\n" for name, value in points.items())
        (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
        if module is not None:
            (tmp_path / f"{module}.py").write_text(source)
            modules.append(module)

    yield add
    for module in modules:
        sys.modules.pop(module, None)


TOY = "from tests.toy_env import environment as _toy\nenvironment = _toy.with_templates(list(_toy.task_templates().values()), name={name!r})\n"


def test_folders_and_installed_packages_are_listed_without_importing_them(install: Install) -> None:
    install("pkg-env", {"pkg-env": "pkg_env_module:environment"}, "pkg_env_module", "raise RuntimeError('imported')\n")
    names = environment_names()
    assert {"finance", "support", "pkg-env"} <= set(names)
    assert names == sorted(names)
    assert "pkg_env_module" not in sys.modules


def test_an_installed_package_loads_by_its_name(install: Install) -> None:
    install("pkg-env", {"pkg-env": "pkg_env_ok:environment"}, "pkg_env_ok", TOY.format(name="pkg-env"))
    environment = load_environment("pkg-env")
    assert isinstance(environment, Environment) and environment.name == "pkg-env"


def test_a_module_entry_point_uses_its_environment_attribute(install: Install) -> None:
    install("pkg-env", {"pkg-env": "pkg_env_mod"}, "pkg_env_mod", TOY.format(name="pkg-env"))
    assert load_environment("pkg-env").name == "pkg-env"


def test_a_folder_wins_over_a_package_of_the_same_name(install: Install) -> None:
    install("impostor", {"finance": "impostor_mod:environment"}, "impostor_mod", "raise RuntimeError('imported')\n")
    assert load_environment("finance").name == "finance"


def test_an_entry_point_that_does_not_import_names_its_package(install: Install) -> None:
    install("broken-env", {"broken": "broken_env_mod:environment"}, "broken_env_mod", "import not_a_module_anywhere\n")
    with pytest.raises(EnvironmentNotFound, match=r"'broken' cannot be imported \(package 'broken-env'.*ModuleNotFoundError"):
        load_environment("broken")


def test_an_entry_point_to_something_else_is_refused(install: Install) -> None:
    install("odd-env", {"odd": "odd_env_mod:environment"}, "odd_env_mod", "environment = 42\n")
    with pytest.raises(EnvironmentNotFound, match=r"odd_env_mod:environment is not a toolgym Environment \(package 'odd-env'"):
        load_environment("odd")


def test_the_entry_point_name_must_be_the_environment_name(install: Install) -> None:
    install("named-env", {"alias": "named_env_mod:environment"}, "named_env_mod", TOY.format(name="real-name"))
    with pytest.raises(EnvironmentNotFound, match="is named 'real-name'.*must equal Environment.name"):
        load_environment("alias")


def test_two_packages_claiming_one_name_are_refused(install: Install) -> None:
    install("first-env", {"twin": "first_mod:environment"})
    install("second-env", {"twin": "second_mod:environment"})
    assert len(installed_environments()["twin"]) == 2
    with pytest.raises(EnvironmentNotFound, match="several installed packages.*first-env.*second-env|several installed packages.*second-env.*first-env"):
        load_environment("twin")


def test_unknown_names_list_what_exists(install: Install) -> None:
    install("pkg-env", {"pkg-env": "pkg_env_x:environment"})
    with pytest.raises(EnvironmentNotFound, match="no environment 'nowhere'; available: .*pkg-env"):
        load_environment("nowhere")


def test_cli_shows_a_broken_package_and_refuses_to_run_it(install: Install, capsys: pytest.CaptureFixture[str]) -> None:
    install("broken-env", {"broken": "broken_cli_mod:environment"}, "broken_cli_mod", "raise ImportError('missing dependency x')\n")
    with pytest.raises(SystemExit) as listed:
        cli_main(["envs"])
    assert listed.value.code == 1
    out = capsys.readouterr().out
    assert "broken" in out and "cannot load" in out and "broken-env" in out
    with pytest.raises(SystemExit) as ran:
        cli_main(["run", "broken", "--agent", "noop"])
    assert ran.value.code == 2
    err = capsys.readouterr().err
    assert "missing dependency x" in err and "Traceback" not in err
