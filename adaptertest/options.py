"""Options: everything a driver author can tell the suite (Go's ``With...`` options).

Every field is checked when an ``Options`` is built, by its entry in
:data:`FIELD_CHECKS`, so a wrong value fails at once with :class:`OptionsError` naming
the field, instead of deep inside a probe. A new field needs an entry there: the module
refuses to import without one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

from driver.run import SessionState

DEFAULT_LIVE_PROMPT = "Reply with exactly: OK"
"""The live probe's default prompt; its only correct answer is ``OK``."""

DEFAULT_SESSION_STATE = SessionState(
    resume_id="adaptertest-session",
    data={"adaptertest_probe": "1", "adaptertest_order": "2"},
)
"""Seed for the session-codec clauses when ``Options.session_state`` is not given.

Its ``display_id`` is empty on purpose: SES-03 checks that the codec fills it in. Its
two data keys are inserted out of sorted order, so a guard that follows dict order
(SES-05) shows on the seed already.
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
    ``lambda command: MyDriver(MyConfig(command=command))``. A recording of an ACP
    agent (every JSON line a JSON-RPC 2.0 message) is played by the two-way stand-in
    instead (``(python, "-m", "adaptertest.acpreplay", FILE, ..., "--")``). Each
    recording is run as is (the baseline), then as ``max_examples`` hypothesis-made
    variants per clause: additive drift (DFT-01), corrupt output (DFT-02) and arbitrary
    chunking (DFT-03).
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


@runtime_checkable
class ModelRequest(Protocol):
    """One request the model side received, as the live checks that need it read it.

    ``system_text`` is all the system, instructions and developer text of the request;
    ``user_text`` the text of its user turns. The model-API emulator's
    ``RecordedRequest`` has both; any object with the two ``str`` attributes will do.
    """

    @property
    def system_text(self) -> str: ...

    @property
    def user_text(self) -> str: ...


ModelRequests = Callable[[], Sequence[ModelRequest]]
"""Returns every request the model side has received so far, oldest first."""


ModelProtocol = Literal["anthropic", "openai-responses", "gemini"]
"""The model APIs the kit's emulator speaks, by the name a binding declares."""

MODEL_PROTOCOLS: tuple[str, ...] = ("anthropic", "openai-responses", "gemini")
"""Every :data:`ModelProtocol` value, for checks and messages."""

DEFAULT_SCENARIO_GRACE = 10.0
"""Seconds past a scenario's deadline a run may take to end (timed out or cancelled)."""

DEFAULT_SCENARIO_DEADLINE = 300.0
"""The run deadline a scenario endpoint asks for when the scenario is not about deadlines."""

SHELL_ROLE = "shell"
"""The tool role of the scenarios that run a command: the agent's own shell tool."""

TOOL_ROLES: tuple[str, ...] = (SHELL_ROLE,)
"""Every tool role a scenario can call (``$shell``)."""


@dataclass(frozen=True, slots=True)
class ToolShape:
    """How an agent's tool for one role is called: its name and where the text goes.

    The tool scenarios ask for a role (``shell``: run one command line) and the model-API
    emulator turns it into a call of the agent's own tool. ``argument`` names the
    parameter that takes the command; ``argv`` says it takes a list
    (``["bash", "-lc", command]``) instead of one string. ``extra`` are further fixed
    arguments the tool needs.
    """

    name: str
    argument: str = "command"
    argv: bool = False
    extra: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for label, value in (("name", self.name), ("argument", self.argument)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"ToolShape.{label} must be a non-blank str, got {value!r}")
        if not isinstance(self.argv, bool):
            raise TypeError(f"ToolShape.argv must be a bool, got {type(self.argv).__qualname__}")
        if not isinstance(self.extra, Mapping):
            raise TypeError(
                f"ToolShape.extra must be a mapping, got {type(self.extra).__qualname__}"
            )
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    def arguments(self, command: str) -> dict[str, object]:
        """The call's arguments for ``command``."""
        value: object = ["bash", "-lc", command] if self.argv else command
        return {**self.extra, self.argument: value}


@dataclass(frozen=True, slots=True)
class ModelEndpoint:
    """Where a driver under test finds its model, handed to :attr:`ModelBinding.driver`.

    The suite makes one per scenario: a running model-API emulator, a fresh empty home
    and workspace, and the environment the driver must pass to every process it
    starts (``env`` holds at least the scenario's process marker, so the suite can find
    whatever the run left running, even outside the CLI's process group).
    """

    base_url: str
    """The emulator's root, such as ``http://127.0.0.1:43117`` (no trailing slash)."""
    protocol: str
    """The model API the binding declared (one of :data:`MODEL_PROTOCOLS`)."""
    home: Path
    """A fresh, empty folder for the agent's home (config, sessions, caches)."""
    workspace: Path
    """A fresh, empty folder: the run's working directory."""
    env: Mapping[str, str]
    """Variables to add to the environment of every process the driver starts."""
    api_key: str
    """A dummy key the emulator accepts; pass it where the agent wants a key."""
    deadline: float = DEFAULT_SCENARIO_DEADLINE
    """Seconds a run may take before the driver ends it as timed out (``timed_out``): set
    it as the driver's own run deadline. Short for the deadline scenario (DLN-01)."""


@dataclass(frozen=True, init=False)
class ModelBinding:
    """How the suite points a driver at a model endpoint it runs: enables the scenario
    clauses (see ``docs/scenarios.md``).

    ``driver`` takes a :class:`ModelEndpoint` and returns a driver wired to it; it is
    called once per scenario (and per instance a scenario needs). ``protocol`` names
    the model API the driver speaks. ``cannot`` maps a scenario clause ID to why the
    agent cannot do it (no parallel tool calls, no retries ...): those clauses are
    skipped with that reason, never passed. ``grace`` is how long past a deadline or a
    cancellation a run may take to end. ``tools`` names the agent's tool for a role
    (``{"shell": ToolShape("Bash")}``) where the suite cannot tell it from the tools the
    agent offers the model. ``ref`` is ``"module:attr"`` naming this binding (or a
    function taking no arguments that returns it), so a fresh interpreter can rebuild it
    for the resume scenario of a restarted host (RES-02); None skips that check.
    """

    driver: Callable[[ModelEndpoint], object]
    protocol: str
    cannot: Mapping[str, str]
    grace: float
    tools: Mapping[str, ToolShape]
    ref: str | None

    def __init__(
        self,
        *,
        driver: Callable[[ModelEndpoint], object],
        protocol: str,
        cannot: Mapping[str, str] | None = None,
        grace: float = DEFAULT_SCENARIO_GRACE,
        tools: Mapping[str, ToolShape] | None = None,
        ref: str | None = None,
    ) -> None:
        if not callable(driver) or isinstance(driver, type):
            raise TypeError(
                "ModelBinding.driver must be a callable taking a ModelEndpoint and "
                f"returning a driver, got {type(driver).__qualname__}"
            )
        if not isinstance(protocol, str) or protocol not in MODEL_PROTOCOLS:
            raise ValueError(
                f"ModelBinding.protocol must be one of {', '.join(map(repr, MODEL_PROTOCOLS))}, "
                f"got {protocol!r}"
            )
        reasons = dict(cannot or {})
        from adaptertest.clauses import CLAUSE_BY_ID, Mode

        for clause, reason in reasons.items():
            if not isinstance(clause, str) or not isinstance(reason, str) or not reason.strip():
                raise ValueError(
                    "ModelBinding.cannot maps a clause ID (str) to a non-blank reason, got "
                    f"{clause!r}: {reason!r}"
                )
            known = CLAUSE_BY_ID.get(clause)
            if known is None or known.mode is not Mode.SCENARIO:
                raise ValueError(
                    f"ModelBinding.cannot names {clause!r}, which is no scenario clause (list "
                    "them: adaptertest clauses; their mode is 'scenario')"
                )
        number = isinstance(grace, int | float) and not isinstance(grace, bool)
        if not number or not math.isfinite(grace) or grace < 0:
            raise ValueError(f"ModelBinding.grace must be seconds >= 0, got {grace!r}")
        object.__setattr__(self, "driver", driver)
        object.__setattr__(self, "protocol", protocol)
        object.__setattr__(self, "cannot", MappingProxyType(reasons))
        shapes = dict(tools or {})
        for role, shape in shapes.items():
            if role not in TOOL_ROLES or not isinstance(shape, ToolShape):
                raise ValueError(
                    f"ModelBinding.tools maps a role ({', '.join(map(repr, TOOL_ROLES))}) to a "
                    f"ToolShape, got {role!r}: {type(shape).__qualname__}"
                )
        if ref is not None:
            try:
                _factory_ref("ref", ref)
            except OptionsError:
                raise ValueError(
                    "ModelBinding.ref must be None or 'module:attr' naming the binding, such "
                    f"as 'yourpkg.conformance:binding', got {ref!r}"
                ) from None
        object.__setattr__(self, "grace", float(grace))
        object.__setattr__(self, "tools", MappingProxyType(shapes))
        object.__setattr__(self, "ref", ref)


class OptionsError(TypeError, ValueError):
    """An ``Options`` field was given a value it cannot take.

    One error per construction (the first bad field). It is both a ``TypeError`` and a
    ``ValueError``, so code written against either keeps catching it whatever the
    mistake was (a wrong type or a wrong value of the right type). ``field`` names the
    field, ``expected`` says what it takes and ``got`` is the type of the value given.
    """

    def __init__(
        self, field: str, expected: str, value: object, *, where: str = "", hint: str = ""
    ) -> None:
        self.field = field
        self.expected = expected
        self.got = type(value).__qualname__
        shown = f": {_shown(value)}" if field not in _UNSHOWN and _is_scalar(value) else ""
        hint = f" ({hint})" if hint else ""
        super().__init__(
            f"Options.{where or field} must be {expected}, got {self.got}{shown}{hint}"
        )


@dataclass(frozen=True, kw_only=True)
class Options:
    """How to run the suite against one driver. Immutable; every field is optional.

    Each field is checked at construction by its entry in :data:`FIELD_CHECKS`; a bad
    value raises :class:`OptionsError`. ``bool`` is no number here and no number is a
    ``bool``. List-valued options accept any iterable of ``str`` and are stored as
    tuples; ``known_failures`` is stored read-only; timeouts are stored as floats.
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
    strict_observation_demand: bool = False
    """Also hold live runs to their observation demand (OBS-07, stricter than upstream):
    no observation fact of a kind the request did not demand."""
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
    """Run this many concurrent runs on one instance (CON-01; needs live_run); 0 is off."""
    live_expect_failure: str | None = None
    """Why the live run is expected to fail (a replayed 429, an account without credit):
    a failed run then skips LIV-01 instead of failing it, and FLR-01 judges that it failed
    cleanly; a run that succeeds fails FLR-01."""
    drift: Drift | None = None
    """The format-drift probe (DFT-01..03) for a CLI or ACP driver: its recordings and how
    to build it around a command; None turns it off. See :class:`Drift`."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Free-form facts about this run for reports and the matrix, such as
    ``{"cli": "claude", "cli_version": "2.1.328"}``: non-blank names, string values."""
    model_requests: ModelRequests | None = None
    """What the model side of a live run received (for example ``lambda: emu.requests``
    with the model-API emulator): a callable returning every :class:`ModelRequest` so
    far. Enables the live checks that need the model side (SYS-02, and HIL-01..08 with a
    scripted model that records ``tool_results``); None skips them."""
    factory_ref: str | None = None
    """``"module:attr"`` naming the factory, so a fresh interpreter can rebuild the driver
    (SES-05, CAP-01 across processes); None derives it from a module-level factory."""
    fresh_process: bool = True
    """Check the guard and the session-config fingerprint again in a fresh interpreter
    with another hash seed (SES-05, CAP-01); False skips that half."""
    model_binding: ModelBinding | None = None
    """Points the driver at a model endpoint the suite runs (the model-API emulator), which
    enables the scenario clauses and the HIL cases' own emulators; None skips them. See
    :class:`ModelBinding`."""

    def __post_init__(self) -> None:
        # Every field goes through its entry in FIELD_CHECKS; the first bad one raises.
        for item in fields(self):
            stored = FIELD_CHECKS[item.name](item.name, getattr(self, item.name))
            object.__setattr__(self, item.name, stored)

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


# -- the field checks ----------------------------------------------------------------------

Check = Callable[[str, Any], Any]
"""Checks one field: ``(field name, value given) -> value stored``, or raise OptionsError."""

_UNSHOWN = frozenset({"config", "secrets", "session_state"})
"""Fields whose values are never quoted in an error: they may hold secrets."""
_SHOWN_CHARS = 60


def _is_scalar(value: object) -> bool:
    return value is None or isinstance(value, bool | int | float | str | bytes)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]}..."


def _bool_hint(value: object) -> str:
    return "a bool is not accepted as a number" if isinstance(value, bool) else ""


def _anything(name: str, value: Any) -> Any:
    return value


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise OptionsError(name, "a bool (True or False)", value)
    return value


def _text(*, blank: bool = True) -> Check:
    expected = "a str" if blank else "a non-blank str"

    def check(name: str, value: Any) -> str:
        if not isinstance(value, str) or (not blank and not value.strip()):
            raise OptionsError(name, expected, value)
        return value

    return check


def _optional(check: Check, expected: str) -> Check:
    def optional(name: str, value: Any) -> Any:
        if value is None:
            return None
        try:
            return check(name, value)
        except OptionsError:
            raise OptionsError(name, expected, value) from None

    return optional


def _count(minimum: int, expected: str) -> Check:
    def check(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise OptionsError(name, expected, value, hint=_bool_hint(value))
        return value

    return check


def _seconds(name: str, value: Any) -> float:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value <= 0:
        raise OptionsError(
            name,
            "a positive, finite number of seconds (int or float)",
            value,
            hint=_bool_hint(value),
        )
    return float(value)


def _choice(*allowed: str) -> Check:
    expected = " or ".join(repr(a) for a in allowed)

    def check(name: str, value: Any) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise OptionsError(name, expected, value)
        return value

    return check


def _backend(name: str, value: Any) -> str:
    """An anyio backend that can run here: "trio" needs the trio package installed."""
    chosen: str = _choice("asyncio", "trio")(name, value)
    if chosen == "trio":
        import importlib.util

        if importlib.util.find_spec("trio") is None:
            raise OptionsError(
                name,
                "a backend that is installed",
                value,
                hint="trio is not: python -m pip install 'agent-driver-kit[trio]'",
            )
    return chosen


def _strings(name: str, value: Any) -> tuple[str, ...]:
    expected = "a sequence of strings (a list or tuple of str)"
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise OptionsError(name, expected, value)
    items = tuple(value)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise OptionsError(name, "a str", item, where=f"{name}[{index}]")
    return items


def _session_state(name: str, value: Any) -> SessionState | None:
    if value is not None and not isinstance(value, SessionState):
        raise OptionsError(name, "a driver.SessionState or None", value)
    return value


def _known_failures(name: str, value: Any) -> Mapping[str, str]:
    from adaptertest.clauses import CLAUSE_BY_ID

    if not isinstance(value, Mapping):
        raise OptionsError(
            name, "a mapping of clause ID to reason, such as {'EVT-12': 'why'}", value
        )
    known = dict(value)
    for clause, reason in known.items():
        where = f"{name}[{clause!r}]"
        if not isinstance(clause, str) or clause not in CLAUSE_BY_ID:
            raise OptionsError(
                name,
                "a clause ID such as 'EVT-12' (list them: adaptertest clauses)",
                clause,
                where=f"{name} names unknown clause {clause!r}: each key",
            )
        if not isinstance(reason, str) or not reason.strip():
            raise OptionsError(
                name, "a non-blank str: every entry needs a reason", reason, where=where
            )
    return MappingProxyType(known)


def _factory_ref(name: str, value: Any) -> str | None:
    """None, or ``module:attr`` (the module a dotted name or a ``.py`` file path)."""
    if value is None:
        return None
    module, _, attr = value.rpartition(":") if isinstance(value, str) else ("", "", "")
    names = attr.split(".") if attr else []
    dotted = module.endswith(".py") or all(p.isidentifier() for p in module.split("."))
    if not module or not names or not dotted or not all(p.isidentifier() for p in names):
        raise OptionsError(
            name, "None or 'module:attr', such as 'yourpkg.module:new_driver'", value
        )
    ref: str = value
    return ref


def _drift(name: str, value: Any) -> Drift | None:
    if value is not None and not isinstance(value, Drift):
        raise OptionsError(name, "an adaptertest.Drift or None", value)
    return value


def _model_binding(name: str, value: Any) -> ModelBinding | None:
    if value is not None and not isinstance(value, ModelBinding):
        raise OptionsError(name, "an adaptertest.ModelBinding or None", value)
    return value


def _labels(name: str, value: Any) -> Mapping[str, str]:
    if not isinstance(value, Mapping):
        raise OptionsError(name, "a mapping of label name to str, such as {'cli': 'claude'}", value)
    labels = dict(value)
    for key, text in labels.items():
        if not isinstance(key, str) or not key.strip() or any(c in key for c in "=\n"):
            raise OptionsError(
                name, "a non-blank str with no '=' or newline", key, where=f"{name}: each key"
            )
        if not isinstance(text, str):
            raise OptionsError(name, "a str", text, where=f"{name}[{key!r}]")
    return MappingProxyType(labels)


def _model_requests(name: str, value: Any) -> ModelRequests | None:
    if value is not None and (not callable(value) or isinstance(value, type)):
        raise OptionsError(
            name,
            "a callable taking no arguments that returns the model requests so far "
            "(for example lambda: emulator.requests), or None",
            value,
        )
    checked: ModelRequests | None = value
    return checked


FIELD_CHECKS: dict[str, Check] = {
    "config": _anything,
    "session_state": _session_state,
    "session_keys": _strings,
    "guard_keys": _strings,
    "workspace": _optional(_text(), "a str or None"),
    "expected_detected_model": _optional(_text(), "a str or None"),
    "required_config_fields": _strings,
    "expect_reject_foreign_config": _flag,
    "sync_skills_probe": _flag,
    "live_run": _flag,
    "live_prompt": _text(blank=False),
    "live_expected_output": _optional(_text(), "a str or None"),
    "live_run_timeout": _seconds,
    "skip_live_run": _optional(_text(), "a str (the reason) or None"),
    "live_structured_output": _flag,
    "strict_observation_demand": _flag,
    "probe_timeout": _seconds,
    "known_failures": _known_failures,
    "show_live_details": _flag,
    "secrets": _strings,
    "max_examples": _count(1, "a positive int"),
    "backend": _backend,
    "concurrent_runs": _count(0, "0 (off) or a positive int"),
    "live_expect_failure": _optional(
        _text(blank=False), "a non-blank str (why the run is expected to fail) or None"
    ),
    "drift": _drift,
    "labels": _labels,
    "model_requests": _model_requests,
    "factory_ref": _factory_ref,
    "fresh_process": _flag,
    "model_binding": _model_binding,
}
"""Field name -> its check. Every ``Options`` field has exactly one entry."""


def _check_table() -> None:
    names = [f.name for f in fields(Options)]
    missing = [n for n in names if n not in FIELD_CHECKS]
    extra = [n for n in FIELD_CHECKS if n not in names]
    if missing or extra:
        raise RuntimeError(
            f"adaptertest.options.FIELD_CHECKS is out of step with Options: no check for "
            f"{missing}, checks for unknown fields {extra}"
        )


_check_table()
