"""Headless Chromium for report tests: Debian's ``/usr/bin/chromium`` driven by Playwright (no browser download).

:func:`launched_chromium` starts one (test modules hold it in a module-scoped fixture: launching costs about
a second); :func:`open_report` loads a report file in a fresh page, waits for the page's own "rendered" marker, and
collects everything the console said and every uncaught page error, so a test can require silence.
Without Chromium the tests are skipped — except under CI, where ``.ci/run`` installs it and a missing
browser is a failure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

__all__ = ["launched_chromium", "open_report", "go", "Opened", "CHROMIUM_ARGS", "chromium_path"]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Flags known to work on these machines (no sandbox as root; no background traffic on a closed network)."""


def chromium_path() -> str | None:
    """The system Chromium, or None."""
    return os.environ.get("TOOLGYM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Opened:
    """A report open in a page, and what its console said."""

    page: object
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Console messages of type error plus uncaught exceptions."""


@contextmanager
def launched_chromium() -> Iterator[object]:
    """A headless Chromium (Playwright ``Browser``); skips the test without one (fails under CI)."""
    executable = chromium_path()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs Debian's chromium package")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_report(browser: object, path: Path, route: str = "", *, width: int = 1280, height: int = 900) -> Opened:
    """Open ``path`` (at ``#/route``) in a new page and wait until the page says it has rendered."""
    page = browser.new_page(viewport={"width": width, "height": height})  # type: ignore[attr-defined]
    opened = Opened(page=page)

    def on_console(message: object) -> None:
        kind, text = message.type, message.text  # type: ignore[attr-defined]
        opened.console.append((kind, text))
        if kind == "error":
            opened.errors.append(text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: opened.errors.append(f"uncaught: {error}"))
    url = path.resolve().as_uri() + (f"#/{route}" if route else "")
    page.goto(url)
    page.wait_for_selector("body[data-route]", timeout=15_000)
    return opened


def go(opened: Opened, route: str) -> None:
    """Follow an in-page route and wait for it to render."""
    page = opened.page
    page.evaluate("route => { document.body.removeAttribute('data-route'); location.hash = '#/' + route; }", route)  # type: ignore[attr-defined]
    page.wait_for_selector("body[data-route]", timeout=15_000)  # type: ignore[attr-defined]
