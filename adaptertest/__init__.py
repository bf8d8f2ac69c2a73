"""adaptertest: the conformance suite for driver implementations.

Use it from pytest::

    TestMyDriver = adaptertest.test_driver(make_driver, adaptertest.Options(config=cfg))

or from plain code::

    report = adaptertest.check_driver(make_driver, adaptertest.Options(config=cfg))
    report.raise_for_violations()

Every clause of the contract is listed, as data, in :data:`CLAUSES`; every failure
message starts with its clause ID.

``import adaptertest`` needs only the base install; :func:`test_driver` and
:func:`check_driver` need the ``test`` extra and say so when it is missing.
"""

from __future__ import annotations

from adaptertest._imports import import_attr

# Not typing.TYPE_CHECKING: importing typing would cost every start of the replay stand-in
# (python -m adaptertest replay) milliseconds; mypy reads this name as True all the same.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from adaptertest._pytest import test_driver
    from adaptertest._suite import check_driver
    from adaptertest._violation import Violation
    from adaptertest.cap import verify_process_capability, verify_session_capability
    from adaptertest.clauses import CLAUSE_BY_ID, CLAUSES, Clause, Mode
    from adaptertest.evt import StreamVerifier, verify_stream_capability, verify_stream_sequence
    from adaptertest.options import (
        DEFAULT_LIVE_PROMPT,
        Drift,
        ModelBinding,
        ModelEndpoint,
        ModelRequest,
        Options,
        OptionsError,
        ToolShape,
    )
    from adaptertest.report import (
        ClauseResult,
        ClauseStatus,
        ConformanceError,
        ConformanceReport,
        Level,
    )
    from adaptertest.rsp import verify_checkpoint_codec, verify_outcome, verify_response
    from adaptertest.run import verify_run_events, verify_transcript_mirror
    from adaptertest.sink import DecisionScript, DecisionSink, RecordingSink
    from adaptertest.so import (
        verify_structured_output_capability,
        verify_structured_output_descriptor,
    )
    from adaptertest.trn import verify_transcript
    from referencedriver import new_reference_driver

_LAZY: dict[str, str] = {
    "test_driver": "adaptertest._pytest",
    "check_driver": "adaptertest._suite",
    "Violation": "adaptertest._violation",
    "verify_process_capability": "adaptertest.cap",
    "verify_session_capability": "adaptertest.cap",
    "CLAUSE_BY_ID": "adaptertest.clauses",
    "CLAUSES": "adaptertest.clauses",
    "Clause": "adaptertest.clauses",
    "Mode": "adaptertest.clauses",
    "StreamVerifier": "adaptertest.evt",
    "verify_stream_capability": "adaptertest.evt",
    "verify_stream_sequence": "adaptertest.evt",
    "DEFAULT_LIVE_PROMPT": "adaptertest.options",
    "Options": "adaptertest.options",
    "OptionsError": "adaptertest.options",
    "Drift": "adaptertest.options",
    "ModelRequest": "adaptertest.options",
    "ModelBinding": "adaptertest.options",
    "ModelEndpoint": "adaptertest.options",
    "ToolShape": "adaptertest.options",
    "ClauseResult": "adaptertest.report",
    "ClauseStatus": "adaptertest.report",
    "ConformanceError": "adaptertest.report",
    "ConformanceReport": "adaptertest.report",
    "Level": "adaptertest.report",
    "verify_checkpoint_codec": "adaptertest.rsp",
    "verify_outcome": "adaptertest.rsp",
    "verify_response": "adaptertest.rsp",
    "verify_run_events": "adaptertest.run",
    "verify_transcript_mirror": "adaptertest.run",
    "RecordingSink": "adaptertest.sink",
    "DecisionSink": "adaptertest.sink",
    "DecisionScript": "adaptertest.sink",
    "verify_structured_output_capability": "adaptertest.so",
    "verify_structured_output_descriptor": "adaptertest.so",
    "verify_transcript": "adaptertest.trn",
    "new_reference_driver": "referencedriver",
}


_NEEDS: dict[str, tuple[str, ...]] = {
    "test_driver": ("pytest", "hypothesis", "jsonschema"),
    "check_driver": ("hypothesis", "jsonschema"),
}
"""Names that run the suite, and the modules of the test extra they use (at call time too)."""


def __getattr__(name: str) -> Any:
    """Import public names on first use, so ``import adaptertest`` stays cheap."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'adaptertest' has no attribute {name!r}")
    from adaptertest import _extra

    _extra.require(f"adaptertest.{name}", _NEEDS.get(name, ()))
    value = import_attr(module, name)
    globals()[name] = value
    return value


__version__ = "0.1.0"

__all__ = [
    "CLAUSES",
    "CLAUSE_BY_ID",
    "DEFAULT_LIVE_PROMPT",
    "Clause",
    "ClauseResult",
    "ClauseStatus",
    "ConformanceError",
    "ConformanceReport",
    "DecisionScript",
    "DecisionSink",
    "Drift",
    "Level",
    "Mode",
    "ModelBinding",
    "ModelEndpoint",
    "ModelRequest",
    "Options",
    "OptionsError",
    "RecordingSink",
    "StreamVerifier",
    "ToolShape",
    "Violation",
    "__version__",
    "check_driver",
    "new_reference_driver",
    "test_driver",
    "verify_checkpoint_codec",
    "verify_outcome",
    "verify_process_capability",
    "verify_response",
    "verify_run_events",
    "verify_session_capability",
    "verify_stream_capability",
    "verify_stream_sequence",
    "verify_structured_output_capability",
    "verify_structured_output_descriptor",
    "verify_transcript",
    "verify_transcript_mirror",
]
