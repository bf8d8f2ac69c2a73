"""driver.clikit._proctable: processes found by a marker in their environment."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from driver.clikit._proctable import can_scan, end_marked, marked_pids, new_marker

pytestmark = pytest.mark.skipif(not can_scan(), reason="needs /proc (Linux)")

VARIABLE = "ADAPTERTEST_PROCTABLE_TEST"


def _start(marker: str, *, own_session: bool) -> subprocess.Popen[bytes]:
    env = {**os.environ, VARIABLE: marker}
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        env=env,
        start_new_session=own_session,
    )


def test_markers_are_unique() -> None:
    assert new_marker() != new_marker()


def test_a_marked_process_is_found_and_ended_even_in_its_own_session() -> None:
    marker = new_marker()
    children = [_start(marker, own_session=True), _start(marker, own_session=False)]
    other = _start(new_marker(), own_session=False)
    try:
        assert marked_pids(VARIABLE, marker) == sorted(c.pid for c in children)
        assert end_marked(VARIABLE, marker, grace=5.0) is True
        for child in children:
            assert child.wait(timeout=10) != 0
        assert marked_pids(VARIABLE, marker) == []
        assert other.poll() is None
    finally:
        for proc in (*children, other):
            proc.kill()
            proc.wait()


def test_nothing_marked_is_nothing_to_end() -> None:
    assert marked_pids(VARIABLE, new_marker()) == []
    assert end_marked(VARIABLE, new_marker(), grace=0.1) is True
