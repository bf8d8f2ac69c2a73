"""docs/system-prompt.md stays true: its python snippets run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "system-prompt.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_the_page_has_snippets() -> None:
    assert len(SNIPPETS) == 2


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.splitlines()[0])
def test_snippet_runs(snippet: str) -> None:
    exec(compile(snippet, str(PAGE), "exec"), {"__name__": "docs_snippet"})
