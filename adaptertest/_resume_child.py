"""The second run of RES-02, in a new interpreter: a host that restarted.

Reads one JSON job on standard input (the binding's ``module:attr``, the endpoint, the
stored session state as JSON, the backend and a timeout), rebuilds the binding and a
driver from it, decodes the state through the driver's codec, runs the resumed request
and prints one JSON line: ``{"error": "..."}``, or ``{"response": ..., "failed": "...",
"events": [...], "stream": [...], "late": N, "timed_out": false}``: with what reached the
sink, so the parent can judge the run by the rules every run obeys.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from adaptertest._scenarios import binding_from_ref, outcome_of
from adaptertest.liv import run_settled
from adaptertest.options import ModelEndpoint
from adaptertest.res import resume_request, state_from_json
from driver.events import RunEvent, StreamPayload


def _run(job: dict[str, Any]) -> dict[str, Any]:
    binding = binding_from_ref(job["ref"])
    spec = job["endpoint"]
    endpoint = ModelEndpoint(
        base_url=spec["base_url"],
        protocol=spec["protocol"],
        home=Path(spec["home"]),
        workspace=Path(spec["workspace"]),
        env=dict(spec["env"]),
        api_key=spec["api_key"],
        deadline=float(spec["deadline"]),
    )
    driver: Any = binding.driver(endpoint)
    state = state_from_json(driver, job["state"])
    request = resume_request("resume", endpoint.workspace, state)

    async def go() -> dict[str, Any]:
        result = await run_settled(driver.run, request, float(job["timeout"]))
        response = result.response
        return {
            "response": response.model_dump(mode="json") if response is not None else None,
            "failed": outcome_of(result),
            # A malformed emission has no JSON form; RUN-02 and EVT-10 judge those in
            # the same process (RES-01), so only the well-formed ones come back.
            "events": [e.model_dump(mode="json") for e in result.events if isinstance(e, RunEvent)],
            "stream": [
                p.model_dump(mode="json") for p in result.stream if isinstance(p, StreamPayload)
            ],
            "late": result.late,
            "timed_out": result.timed_out,
        }

    reply: dict[str, Any] = anyio.run(go, backend=job["backend"])
    return reply


def main() -> int:
    try:
        reply = _run(json.loads(sys.stdin.read()))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which judges it
        reply = {"error": f"{type(exc).__qualname__}: {exc}"}
    sys.stdout.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
