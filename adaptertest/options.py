"""Options: everything a driver author can tell the suite (Go's ``With...`` options)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from driver.run import SessionState

DEFAULT_LIVE_PROMPT = "Reply with exactly: OK"
"""The live probe's default prompt; its only correct answer is ``OK``."""

DEFAULT_SESSION_STATE = SessionState(
    resume_id="adaptertest-session", data={"adaptertest_probe": "1"}
)
"""Seed for the session-codec clauses when ``Options.session_state`` is not given.

Its ``display_id`` is empty on purpose: SES-03 checks that the codec fills it in.
"""

Backend = Literal["asyncio", "trio"]

DEFAULT_DRIFT_EXAMPLES = 8
"""Drifted variants per recording and drift clause when ``Drift(max_examples=...)`` is not given."""


@dataclass(frozen=True, init=False)
class Drift:
    """The format-drift probe (DFT-01..03) for a driver that runs a CLI and parses its lines.

    ``recordings`` are files of that CLI's stdout: plain JSONL, or recordings written by
    ``adaptertest record`` (format v1, which also carry stderr and the exit status).
    ``driver`` builds the driver around a command line: it gets the argv of the kit's
    replay stand-in playing one variant (``(python, "-m", "adaptertest", "replay", FILE,
    ..., "--")``, a tuple of str) and returns a driver whose CLI is that command, e.g.
    ``lambda command: MyDriver(MyConfig(command=command))``. Each recording is run as is
    (the baseline), then as ``max_examples`` hypothesis-made variants per clause:
    additive drift (DFT-01), corrupt output (DFT-02) and arbitrary chunking (DFT-03).
    """

    recordings: tuple[Path, ...]
    """The recordings to drift, checked to exist when the option is built."""
    driver: Callable[[tuple[str, ...]], object]
    """Builds the driver whose CLI is the given command (the replay of one variant)."""
    max_examples: int = DEFAULT_DRIFT_EXAMPLES
    """Hypothesis examples per recording and clause (derandomized; shrinking on)."""

    def __init__(
        self,
        *,
        recordings: Iterable[str | os.PathLike[str]],
        driver: Callable[[tuple[str, ...]], object],
        max_examples: int = DEFAULT_DRIFT_EXAMPLES,
    ) -> None:
        if isinstance(recordings, str | bytes | os.PathLike):
            raise TypeError("Drift.recordings takes a list of paths, not one path")
        paths: list[Path] = []
        for entry in recordings:
            if not isinstance(entry, str | os.PathLike) or isinstance(entry, bytes):
                raise TypeError(
                    f"Drift.recordings takes str or os.PathLike paths, got "
                    f"{type(entry).__qualname__}"
                )
            path = Path(entry)
            if not path.is_file():
                raise ValueError(f"Drift.recordings: no such file: {path}")
            paths.append(path)
        if not paths:
            raise ValueError("Drift.recordings needs at least one recording")
        if not callable(driver):
            raise TypeError(
                "Drift.driver must be callable (command -> driver), got "
                f"{type(driver).__qualname__}"
            )
        if isinstance(max_examples, bool) or not isinstance(max_examples, int):
            raise TypeError(
                f"Drift.max_examples must be an int, got {type(max_examples).__qualname__}"
            )
        if max_examples < 1:
            raise ValueError("Drift.max_examples must be at least 1")
        object.__setattr__(self, "recordings", tuple(paths))
        object.__setattr__(self, "driver", driver)
        object.__setattr__(self, "max_examples", max_examples)


@dataclass(frozen=True, kw_only=True)
class Options:
    """How to run the suite against one driver. Immutable; every field is optional.

    List-valued options accept any iterable and are stored as tuples.
    """

    config: object | None = None
    """Config handed to every probe and to live runs (Go ``WithConfig``); enables CFG-02."""
    session_state: SessionState | None = None
    """Seed state for the session-codec clauses (``WithSessionState``)."""
    session_keys: tuple[str, ...] = ()
    """Data keys that must survive the codec (``WithSessionKeys``); enables SES-08."""
    guard_keys: tuple[str, ...] = ()
    """Param keys whose change must move the guard (``WithGuardKeys``); enables SES-06."""
    workspace: str | None = None
    """A working directory leased to live runs (``WithWorkspace``)."""
    expected_detected_model: str | None = None
    """The model detect_model must report (``WithExpectedDetectedModel``; CAP-05)."""
    required_config_fields: tuple[str, ...] = ()
    """Names the config schema must contain (``WithRequiredConfigFields``; CAP-08)."""
    expect_reject_foreign_config: bool = False
    """Check that a foreign config is rejected (``ExpectRejectForeignConfig``; CFG-03)."""
    sync_skills_probe: bool = False
    """Also call sync_skills, which may write to the profile (``WithSyncSkillsProbe``)."""
    live_run: bool = False
    """Run the provider once (``WithLiveRun``); enables the live clauses."""
    live_prompt: str = DEFAULT_LIVE_PROMPT
    """The live prompt, sent byte for byte."""
    live_expected_output: str | None = None
    """Expected live output, compared trimmed (``WithLiveExpectedOutput``; LIV-02)."""
    live_run_timeout: float = 300.0
    """Seconds a live run may take (``WithLiveRunTimeout``)."""
    skip_live_run: str | None = None
    """Skip every live probe with this reason; wins over live_run (``SkipLiveRun``)."""
    live_structured_output: bool = False
    """Also run the native structured-output probe (``WithLiveStructuredOutput``)."""
    probe_timeout: float = 30.0
    """Seconds each hermetic driver call may take."""
    known_failures: Mapping[str, str] = field(default_factory=dict)
    """Clause ID -> reason. Those clauses are expected to fail; one that passes fails."""
    show_live_details: bool = False
    """Show provider text in live failures (withheld by default, as upstream)."""
    secrets: tuple[str, ...] = ()
    """Extra strings never to print; pydantic SecretStr/SecretBytes in config are added."""
    max_examples: int = 25
    """Hypothesis examples per session-codec property."""
    backend: Backend = "asyncio"
    """The anyio backend the driver's coroutines run on."""
    concurrent_runs: int = 0
    """Run this many concurrent runs on one instance (CON-01); 0 turns it off."""
    drift: Drift | None = None
    """The format-drift probe (DFT-01..03) for a CLI driver: its recordings and how to build
    it around a command; None turns it off. See :class:`Drift`."""

    def __post_init__(self) -> None:
        from adaptertest.clauses import CLAUSE_BY_ID

        for name in ("session_keys", "guard_keys", "required_config_fields", "secrets"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise TypeError(f"Options.{name} takes a sequence of strings, not one string")
            object.__setattr__(self, name, tuple(value))
        known = dict(self.known_failures)
        for clause, reason in known.items():
            if clause not in CLAUSE_BY_ID:
                raise ValueError(f"Options.known_failures names unknown clause {clause!r}")
            if not isinstance(reason, str) or not reason.strip():
                raise ValueError(f"Options.known_failures[{clause!r}] needs a reason")
        object.__setattr__(self, "known_failures", MappingProxyType(known))
        if self.backend not in ("asyncio", "trio"):
            raise ValueError(f"Options.backend must be 'asyncio' or 'trio', not {self.backend!r}")
        for name in ("probe_timeout", "live_run_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Options.{name} must be a positive number of seconds")
        if self.max_examples < 1:
            raise ValueError("Options.max_examples must be at least 1")
        if self.concurrent_runs < 0:
            raise ValueError("Options.concurrent_runs must be 0 (off) or more")
        if self.drift is not None and not isinstance(self.drift, Drift):
            raise TypeError(
                f"Options.drift must be an adaptertest.Drift or None, got "
                f"{type(self.drift).__qualname__}"
            )

    @property
    def live_enabled(self) -> bool:
        """Whether the live probes may run at all."""
        return self.live_run and self.skip_live_run is None

    @property
    def live_skip_reason(self) -> str:
        """Why the live probes are skipped (meaningful only when not live_enabled)."""
        if self.skip_live_run is not None:
            return self.skip_live_run.strip() or "live run skipped"
        return "live probes are off: pass Options(live_run=True) to run the provider"
