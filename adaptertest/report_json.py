"""The machine-readable report: one JSON shape for the CLI, the pytest plugin and the API.

The shape is pinned by ``report.schema.json`` (JSON Schema 2020-12), shipped beside this
module and loaded as :data:`REPORT_SCHEMA`, so CI tooling can validate what it reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any, Literal

from adaptertest import __version__
from adaptertest._screen import screen
from adaptertest.clauses import CLAUSES
from adaptertest.report import ClauseResult, ConformanceReport, RunInfo

SCHEMA_VERSION = 1
"""Bumped whenever a field changes meaning or goes away (new optional fields keep it)."""

Producer = Literal["api", "cli", "pytest"]

REPORT_SCHEMA: dict[str, Any] = json.loads(
    resources.files("adaptertest").joinpath("report.schema.json").read_text("utf-8")
)
"""The JSON Schema every document from :func:`report_to_json` satisfies."""


def clause_to_json(result: ClauseResult) -> dict[str, Any]:
    """One clause result, with the catalogue facts a reader needs to triage it."""
    info = result.info
    return {
        "id": result.clause,
        "family": info.family,
        "title": info.title,
        "mode": info.mode.value,
        "extension": info.extension,
        "status": result.status.value,
        "messages": [screen(m) for m in result.messages],
        "notes": [screen(n) for n in result.notes],
        "duration": round(max(result.duration, 0.0), 6),
    }


def driver_to_json(
    report: ConformanceReport, *, name: str = "", nodeid: str | None = None
) -> dict[str, Any]:
    """One driver's entry: identity, level, counts and every clause in catalogue order."""
    order = {c.id: i for i, c in enumerate(CLAUSES)}
    results = sorted(report.results, key=lambda r: order[r.clause])
    entry: dict[str, Any] = {
        "name": screen(name or report.driver_type),
        "driver_type": screen(report.driver_type),
        "level": report.level.value if report.level is not None else None,
        "complete": report.complete,
        "ok": report.ok,
        "duration": round(max(report.duration, 0.0), 6),
        "counts": {status.value: n for status, n in report.counts().items()},
        "notes": [screen(n) for n in report.notes],
        "clauses": [clause_to_json(r) for r in results],
    }
    if nodeid is not None:
        entry["nodeid"] = nodeid
    if report.run is not None:
        entry["run"] = run_to_json(report.run)
    return entry


def run_to_json(run: RunInfo) -> dict[str, Any]:
    """The ``run`` block of a driver entry."""
    return {
        "started_at": run.started_at,
        "backend": run.backend,
        "driver_version": run.driver_version,
        "options": dict(run.options),
        "labels": dict(run.labels),
    }


def run_from_json(block: Mapping[str, Any] | None) -> RunInfo | None:
    """A ``run`` block read back; None for reports written before it existed."""
    if not isinstance(block, Mapping):
        return None
    version = block.get("driver_version")
    return RunInfo(
        started_at=str(block.get("started_at", "")),
        backend=str(block.get("backend", "")),
        driver_version=str(version) if version is not None else None,
        options={str(k): str(v) for k, v in dict(block.get("options") or {}).items()},
        labels={str(k): str(v) for k, v in dict(block.get("labels") or {}).items()},
    )


def document(drivers: Iterable[Mapping[str, Any]], *, producer: Producer) -> dict[str, Any]:
    """Wrap driver entries into a whole report document."""
    return {
        "schema_version": SCHEMA_VERSION,
        "kit": {"name": "adaptertest", "version": __version__},
        "producer": producer,
        "drivers": [dict(d) for d in drivers],
    }


def report_to_json(
    report: ConformanceReport, *, name: str = "", producer: Producer = "api"
) -> dict[str, Any]:
    """A one-driver report document for ``report`` (as ``check --report`` writes it)."""
    return document([driver_to_json(report, name=name)], producer=producer)


def validate_document(doc: object) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``doc`` matches :data:`REPORT_SCHEMA`."""
    import jsonschema

    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(doc)


def dumps(doc: Mapping[str, Any]) -> str:
    """The document as indented JSON text with a final newline (stable, diff-friendly)."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
