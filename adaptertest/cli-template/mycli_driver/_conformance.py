"""How this driver is checked: the suite options its authors run it with.

``python -m adaptertest check mycli_driver:new_mycli_driver`` picks these up (a
module-level ``adaptertest_options`` next to the factory), and so does
``tests/test_conformance.py``, which swaps in a config that replays a recording.
Live probes stay off until asked for (``--live`` runs the real CLI); the format-drift
probe (DFT-01..03) runs with ``--drift``, on the recordings beside the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from driver import SESSION_PARAM_CWD, SESSION_PARAM_PROFILE_FINGERPRINT, SessionState
from mycli_driver._config import MycliConfig
from mycli_driver._driver import MycliDriver, new_mycli_driver

if TYPE_CHECKING:
    from adaptertest.options import Drift, Options

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"
"""The project's recordings: beside the package in a checkout (not in an installed wheel)."""
DRIFT_RECORDINGS = ("success.jsonl", "tool_use.jsonl")
"""The recordings the drift probe replays as the CLI's next release might print them."""


def drift_option() -> Drift | None:
    """The format-drift probe (DFT-01..03) on :data:`DRIFT_RECORDINGS`, each variant run
    by a driver built around the replay's command; None where the recordings are absent."""
    from adaptertest.options import Drift

    paths = [RECORDINGS / name for name in DRIFT_RECORDINGS]
    if not all(path.is_file() for path in paths):
        return None

    def driver(command: tuple[str, ...]) -> MycliDriver:
        return new_mycli_driver(MycliConfig(command=command))

    return Drift(recordings=paths, driver=driver)


def adaptertest_options() -> Options:
    """The config, the seed session and its guard keys, and the opt-in checks that apply."""
    from adaptertest.options import Options  # the suite is a test dependency only

    return Options(
        config=MycliConfig(),
        live_expected_output="OK",  # the answer to the suite's live prompt
        live_run_timeout=120,
        session_state=SessionState(
            resume_id="mycli-session-1",
            data={SESSION_PARAM_CWD: "workspace-a", SESSION_PARAM_PROFILE_FINGERPRINT: "p-1"},
        ),
        session_keys=(SESSION_PARAM_CWD,),
        guard_keys=(SESSION_PARAM_CWD, SESSION_PARAM_PROFILE_FINGERPRINT),
        required_config_fields=("command", "model", "cwd", "extra_args", "timeout"),
        expect_reject_foreign_config=True,
        drift=drift_option(),
    )
