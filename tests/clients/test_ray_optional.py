"""Ray stays optional: only ``clients.ray``'s actor modules import it; ``--ray`` without it is a clear error."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from clients.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_outside_the_ray_package_imports_ray() -> None:
    script = textwrap.dedent(
        """
        import importlib, pkgutil, sys
        names = []
        for package in ("fixtures", "servers", "envs", "graders", "clients"):
            module = importlib.import_module(package)
            names += [m.name for m in pkgutil.walk_packages(module.__path__, package + ".")]
        # the Ray package's door and its options are importable without Ray; its actor modules are not
        skipped = {"clients.ray.actor", "clients.ray.pool", "clients.ray.episode", "clients.ray.runs"}
        for name in names:
            if name not in skipped and not name.endswith(".__main__"):  # a __main__ runs its command
                importlib.import_module(name)
        from clients.cli import build_parser
        from clients.ray import RayOptions
        from clients.runner import RunConfig
        build_parser().parse_args(["run", "finance", "--ray", "--actors", "2"])
        RunConfig(env="finance", agent="oracle", ray=RayOptions(actors=2))
        loaded = sorted(m for m in sys.modules if m == "ray" or m.startswith("ray."))
        assert not loaded, loaded
        print(len(names))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) > 50


def test_ray_flags_are_clear_errors_when_they_cannot_work(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = "tests.clients.toyenv:environment"
    with pytest.raises(SystemExit) as exited:
        main(["run", env, "--actors", "2", "--quiet"])
    assert exited.value.code == 2 and "--actors needs --ray" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    with pytest.raises(SystemExit) as exited:
        main(["run", env, "--ray", "--quiet"])
    assert exited.value.code == 2 and "pip install 'toolgym[ray]'" in capsys.readouterr().err
