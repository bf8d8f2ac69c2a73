"""The matrix page in a real browser: headless Chromium driven by Playwright.

Playwright's wheel carries its own driver and waits for elements by itself, so no
separate chromedriver has to match the browser; it drives the system's Chromium
(Debian's ``chromium`` package) through ``executable_path``. Every page opens in a
1280x800 window, a laptop's, where a 75-row table is taller than the screen.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adaptertest.matrix import load, render_html

VIEWPORT = {"width": 1280, "height": 800}
INSTALL = "apt-get install -y chromium (and python -m pip install -e '.[dev]' for playwright)"
_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str | None:
    return os.environ.get("ADAPTERTEST_CHROMIUM") or shutil.which("chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason=f"needs playwright: {INSTALL}")
    executable = _chromium()
    if executable is None:
        pytest.skip(f"needs a Chromium browser: {INSTALL}")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any, report_files: list[Path], tmp_path: Path) -> Iterator[Any]:
    html = tmp_path / "matrix.html"
    html.write_text(render_html(load(report_files)), "utf-8")
    context = browser.new_context(viewport=VIEWPORT, offline=True)
    opened = context.new_page()
    opened.goto(html.as_uri())
    try:
        yield opened
    finally:
        context.close()


def test_every_cell_renders(page: Any, report_files: list[Path]) -> None:
    matrix = load(report_files)
    assert page.locator("td.cell").count() == len(matrix.rows) * len(matrix.columns)
    assert page.locator("th.run").count() == 3
    levels = page.locator("th.run .level").all_inner_texts()
    assert levels == ["full", "none", "none"]
    failed = page.locator('tr[data-clause="EVT-03"] td.cell').nth(1)
    assert failed.get_attribute("data-status") == "failed"
    assert failed.inner_text() == "✗"


def test_filter_keeps_only_rows_that_differ(page: Any, report_files: list[Path]) -> None:
    matrix = load(report_files)
    rows = page.locator("tr.clause-row")
    assert rows.evaluate_all("rs => rs.filter(r => r.offsetParent !== null).length") == len(
        matrix.rows
    )
    page.check("#only-differing")
    shown = rows.evaluate_all(
        "rs => rs.filter(r => r.offsetParent !== null).map(r => r.dataset.clause)"
    )
    assert shown == list(matrix.differing)
    assert page.locator('tr[data-clause="DRV-01"]').is_hidden()
    assert page.locator('tr.family[data-family="DRV"]').is_hidden()
    page.uncheck("#only-differing")
    assert page.locator('tr[data-clause="DRV-01"]').is_visible()


def test_diff_of_two_chosen_columns(page: Any) -> None:
    page.select_option("#diff-a", "0")
    page.select_option("#diff-b", "1")
    page.click("#diff-go")
    clauses = page.locator("#diff tr.diff-row").evaluate_all("rs => rs.map(r => r.dataset.clause)")
    assert clauses == ["EVT-03"]  # SES-04 only went from run to skipped
    assert "1 clause(s) differ" in page.locator("#diff").inner_text()
    page.check("#count-skips")  # the diff follows the choice
    clauses = page.locator("#diff tr.diff-row").evaluate_all("rs => rs.map(r => r.dataset.clause)")
    assert sorted(clauses) == ["EVT-03", "SES-04"]
    assert "2 clause(s) differ" in page.locator("#diff").inner_text()
    page.select_option("#diff-b", "0")
    page.click("#diff-go")
    assert page.locator("#diff tr.diff-row").count() == 0


def in_view(locator: Any) -> bool:
    """Whether the element is shown and wholly inside the window as it is scrolled now."""
    return bool(
        locator.evaluate(
            "e => { const r = e.getBoundingClientRect(); return r.height > 0 && r.top >= 0"
            " && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }"
        )
    )


def test_skipped_against_run_is_no_difference_unless_asked(
    page: Any, report_files: list[Path]
) -> None:
    matrix = load(report_files)
    assert len(matrix.differing) < len(matrix.differing_with_skips)
    count = page.locator("#differing-count")
    assert count.inner_text() == str(len(matrix.differing))
    page.check("#only-differing")
    shown = page.locator("tr.clause-row").evaluate_all(
        "rs => rs.filter(r => r.offsetParent !== null).map(r => r.dataset.clause)"
    )
    assert shown == list(matrix.differing) == ["EVT-03"]
    page.check("#count-skips")
    assert count.inner_text() == str(len(matrix.differing_with_skips))
    shown = page.locator("tr.clause-row").evaluate_all(
        "rs => rs.filter(r => r.offsetParent !== null).map(r => r.dataset.clause)"
    )
    assert shown == list(matrix.differing_with_skips)


def test_a_click_far_down_the_table_shows_its_messages_in_the_window(page: Any) -> None:
    rows = page.locator("tr.clause-row")
    assert page.evaluate("() => document.documentElement.scrollHeight > innerHeight")
    last = rows.nth(rows.count() - 1).locator("td.cell").nth(1)
    last.scroll_into_view_if_needed()
    last.click()
    panel = page.locator("#panel")
    assert panel.is_visible()
    assert in_view(panel)
    assert last.get_attribute("data-row") is not None
    # Again at the top, for a cell the panel does not cover.
    page.evaluate("() => window.scrollTo(0, 0)")
    page.locator('tr[data-clause="EVT-03"] td.cell').nth(1).click()
    assert in_view(panel)
    assert "EVT-03" in panel.inner_text()
    page.keyboard.press("Escape")
    assert panel.is_hidden()


def test_the_diff_shows_where_its_button_is(page: Any) -> None:
    page.click("#diff-go")
    diff = page.locator("#diff")
    assert diff.is_visible()
    top = diff.evaluate("d => d.getBoundingClientRect().top")
    assert 0 <= top < page.evaluate("() => innerHeight") / 2


def test_heads_tell_the_runs_apart(
    browser: Any, reference_doc: dict[str, Any], tmp_path: Path
) -> None:
    """Four reports of one driver, one with a --label: four different heads, each naming
    its labels, its test class and its report file, with no tooltip needed."""
    paths = []
    runs: list[tuple[str, dict[str, str]]] = [
        ("TestAcme", {}),
        ("TestAcmeOnTrio", {}),
        ("TestAcme", {"variant": "nightly"}),
        ("TestAcme", {}),
    ]
    for index, (cls, labels) in enumerate(runs):
        doc = copy.deepcopy(reference_doc)
        doc["drivers"][0]["nodeid"] = f"tests/test_acme.py::{cls}"
        doc["drivers"][0]["run"]["labels"].update(labels)
        path = tmp_path / f"run-{index}.json"
        path.write_text(json.dumps(doc), "utf-8")
        paths.append(path)
    html = tmp_path / "heads.html"
    html.write_text(render_html(load(paths)), "utf-8")
    context = browser.new_context(viewport=VIEWPORT, offline=True)
    try:
        opened = context.new_page()
        opened.goto(html.as_uri())
        heads = opened.locator("th.run").all_inner_texts()
        assert len(set(heads)) == 4
        assert "variant=nightly" in heads[2]
        assert "class TestAcmeOnTrio" in heads[1]
        assert all(f"file run-{i}.json" in head for i, head in enumerate(heads))
        facts = opened.locator("th.run .fact").first
        assert facts.is_visible()
    finally:
        context.close()


def test_click_shows_the_whole_message_and_a_long_one_keeps_the_layout(page: Any) -> None:
    table_width = page.locator("#matrix").evaluate("t => t.getBoundingClientRect().width")
    page.locator('tr[data-clause="EVT-03"] td.cell').nth(1).click()
    panel = page.locator("#panel")
    text = panel.inner_text()
    assert "EVT-03" in text
    assert "a second violation" in text
    assert "\\x1b]0;owned" in text
    assert "<script>alert(1)</script>" in text
    assert page.evaluate("() => window.alerted === undefined")
    # The 6,000-character message wraps inside the panel; nothing gets wider than the page.
    assert panel.evaluate("p => p.scrollWidth <= p.clientWidth + 1")
    viewport = page.evaluate("() => document.documentElement.clientWidth")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport
    assert page.locator("#matrix").evaluate("t => t.getBoundingClientRect().width") == table_width
    cell_widths = page.locator('tr[data-clause="EVT-03"] td.cell').evaluate_all(
        "cs => cs.map(c => c.getBoundingClientRect().width)"
    )
    assert max(cell_widths) - min(cell_widths) < 1


def test_many_columns_keep_their_width_and_scroll_in_their_frame(
    browser: Any, report_files: list[Path], tmp_path: Path
) -> None:
    # A sweep of ten releases on two backends gives twenty columns: each keeps its
    # declared width (9em) instead of being squeezed to a letter per line, and the
    # table scrolls inside its frame while the page stays as wide as the window.
    html = tmp_path / "wide.html"
    html.write_text(render_html(load(report_files * 7)), "utf-8")
    context = browser.new_context(viewport=VIEWPORT, offline=True)
    try:
        opened = context.new_page()
        opened.goto(html.as_uri())
        assert opened.locator("th.run").count() == 21
        em = opened.evaluate("() => parseFloat(getComputedStyle(document.body).fontSize)")
        widths = opened.locator("th.run").evaluate_all(
            "hs => hs.map(h => h.getBoundingClientRect().width)"
        )
        assert min(widths) >= 9 * em - 1
        frame = opened.locator(".wrap")
        assert frame.evaluate("w => w.scrollWidth > w.clientWidth")
        viewport = opened.evaluate("() => document.documentElement.clientWidth")
        assert opened.evaluate("() => document.documentElement.scrollWidth") <= viewport
    finally:
        context.close()
