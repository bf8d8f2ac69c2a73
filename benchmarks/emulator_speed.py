"""Benchmarks of the model-API emulator: ``python benchmarks/emulator_speed.py [--quick]``.

Printed, measured on this machine in this run (medians of repeated runs):

- start and stop: from ``Emulator(...).start()`` to accepting connections, and ``stop()``;
- the latency of one answer per protocol, streamed and whole, on a kept-alive
  connection (the standard library's client, so the SDKs' own cost is left out);
- requests per second with two clients at once (what two concurrent CLIs cost).

Targets: start under 0.5 s and stop under 0.5 s (a real-CLI tier starts one per test),
a streamed answer under 20 ms. Nothing here is asserted by the test suite; a test only
runs these functions at tiny sizes to prove they work.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from adaptertest.emulator import Emulator, Scenario, Turn, TurnUsage

SCENARIO = Scenario(
    turns=[
        Turn(
            text="The answer is OK, and here it is in a few pieces.",
            deltas=8,
            usage=TurnUsage(input_tokens=1200, cached_input_tokens=1000, output_tokens=20),
        )
    ],
    repeat_last=True,
)
REQUESTS: dict[str, tuple[str, dict[str, object]]] = {
    "anthropic": (
        "/v1/messages",
        {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "openai": ("/v1/responses", {"model": "gpt-5.5", "input": "hi"}),
    "gemini": (
        "/v1beta/models/gemini-2.5-flash:generateContent",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
}


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str
    target: float | None = None

    def line(self) -> str:
        verdict = (
            "info" if self.target is None else ("PASS" if self.value <= self.target else "MISS")
        )
        goal = "" if self.target is None else f"(target <= {self.target:g} {self.unit})"
        return f"{self.name:<44} {self.value:>10.3f} {self.unit:<6} {verdict:<5} {goal}"


def _median(run: Callable[[], float], repeat: int) -> float:
    return statistics.median(run() for _ in range(repeat))


def start_stop(repeat: int) -> list[Figure]:
    starts: list[float] = []
    stops: list[float] = []
    for _ in range(repeat):
        began = time.perf_counter()
        emu = Emulator(SCENARIO).start()
        starts.append(time.perf_counter() - began)
        began = time.perf_counter()
        emu.stop()
        stops.append(time.perf_counter() - began)
    return [
        Figure("emulator start (to accepting)", statistics.median(starts), "s", 0.5),
        Figure("emulator stop (thread joined)", statistics.median(stops), "s", 0.5),
    ]


def _ask(connection: http.client.HTTPConnection, path: str, body: dict[str, object]) -> None:
    connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    reply = connection.getresponse()
    reply.read()
    if reply.status != 200:
        raise RuntimeError(f"{path}: HTTP {reply.status}")


def latency(repeat: int) -> list[Figure]:
    figures = []
    with Emulator(SCENARIO) as emu:
        connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
        for protocol, (path, body) in REQUESTS.items():
            for stream in (True, False):
                if protocol == "gemini":
                    where = path.replace(":generateContent", ":streamGenerateContent?alt=sse")
                    target_path, target_body = (where if stream else path), body
                else:
                    target_path, target_body = path, {**body, "stream": stream}

                def once(p: str = target_path, b: dict[str, object] = target_body) -> float:
                    began = time.perf_counter()
                    _ask(connection, p, b)
                    return time.perf_counter() - began

                kind = "streamed" if stream else "whole"
                value = _median(once, repeat) * 1000
                figures.append(
                    Figure(f"{protocol} answer, {kind}", value, "ms", 20.0 if stream else None)
                )
        connection.close()
    return figures


def throughput(count: int) -> list[Figure]:
    path, body = REQUESTS["anthropic"]
    body = {**body, "stream": True}
    with Emulator(SCENARIO) as emu:

        def client() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
            for _ in range(count):
                _ask(connection, path, body)
            connection.close()

        workers = [threading.Thread(target=client) for _ in range(2)]
        began = time.perf_counter()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - began
        served = len(emu.requests)
    return [Figure("streamed answers per second, 2 clients", served / elapsed, "req/s")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    ns = parser.parse_args(argv)
    repeat = 3 if ns.quick else 15
    figures = [*start_stop(repeat), *latency(repeat * 4), *throughput(repeat * 10)]
    for figure in figures:
        print(figure.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
