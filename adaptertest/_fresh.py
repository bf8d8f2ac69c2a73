"""Cross-process determinism: the guard (SES-05) and the session-config fingerprint
(CAP-01) computed again in fresh interpreters with other hash seeds.

A value built on ``hash()`` of a str, on the iteration order of a set of strings, or on a
default object repr (a memory address) is stable inside one interpreter and different in
the next, so a host that restarts can no longer resume anything. The only way to see it
is to compute the value in another process: this module starts ``python -m
adaptertest._fresh`` with another ``PYTHONHASHSEED``, which imports the factory by name
(``module:attr``), builds a driver, and prints the guard of each seed state and the
driver's ``session_config_fingerprint()`` as JSON on stdout.

One child is not enough: a small set has few orders, so a parent whose (random) seed
happens to order it as the child's does lets a set-order guard pass by chance. Two
children run, with two fixed seeds (:data:`FRESH_SEEDS`, both other than the parent's when
that is known), and every pair is compared: the parent with each child and the children
with each other. The children's verdict is the same on every run, whatever the parent's
seed.

Each child is started once per factory name, seed states and seed (cached for the
process) on a thread of its own, as early as the suite knows it will need it, so it runs
beside the other probes. A factory that cannot be imported by name (a lambda, a local function,
``__main__`` without a file) skips this half with a reason that says what to publish.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from adaptertest.options import DEFAULT_SESSION_STATE, Options
from driver.run import SessionState

__all__ = [
    "FRESH_EXTRA_KEYS",
    "FRESH_SEEDS",
    "FreshResult",
    "derive_factory_ref",
    "factory_ref_of",
    "for_suite",
    "fresh_hash_seeds",
    "fresh_states",
    "prefetch",
    "start_for",
    "unavailable_reason",
]

FRESH_EXTRA_KEYS = 12
"""Data keys added to a second seed state, so a guard that follows set order shows."""

FRESH_SEEDS = ("1", "2", "3")
"""The children's ``PYTHONHASHSEED`` values: the first two that differ from the parent's."""

_PUBLISH = 'Options(factory_ref="yourpkg.module:new_driver")'


@dataclass(frozen=True)
class FreshResult:
    """What the fresh interpreter computed, or why it could not.

    ``guards`` holds one ``(params as JSON, guard)`` per seed state whose params and guard
    the child could compute; ``failures`` what it could not compute, and why.
    """

    hash_seed: str
    guards: tuple[tuple[dict[str, Any], str], ...] = ()
    fingerprint: str | None = None
    failures: tuple[str, ...] = ()
    error: str | None = None
    """Set when the child gave nothing at all (it could not start, import, or build)."""
    elapsed: float = 0.0


# -- naming the factory -------------------------------------------------------------------


def derive_factory_ref(factory: object) -> str | None:
    """``module:qualname`` of a module-level function or class that a fresh interpreter
    can import; None for a lambda, a local, a partial, or ``__main__`` without a file.

    A factory defined in a script run as ``__main__`` is named by its file path (the
    child loads the file under another name, so its ``if __name__ == "__main__"`` block
    does not run).
    """
    module_name = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if not isinstance(module_name, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    module = sys.modules.get(module_name)
    if module is None or _resolve(module, qualname) is not factory:
        return None
    if module_name == "__main__":
        spec = getattr(module, "__spec__", None)
        spec_name = getattr(spec, "name", None)
        if isinstance(spec_name, str) and spec_name and spec_name != "__main__":
            module_name = spec_name
        else:
            filename = getattr(module, "__file__", None)
            if not isinstance(filename, str) or not os.path.isfile(filename):
                return None
            module_name = os.path.abspath(filename)
    return f"{module_name}:{qualname}"


def factory_ref_of(factory: object, given: str | None) -> str | None:
    """The name the child imports: ``Options.factory_ref`` when given, else derived."""
    return given if given else derive_factory_ref(factory)


def unavailable_reason(factory: object) -> str:
    """Why the cross-process half was skipped, and what to publish instead."""
    qualname = getattr(factory, "__qualname__", None)
    if not isinstance(qualname, str):
        what = f"a {type(factory).__qualname__} object"
    elif "<lambda>" in qualname:
        what = "a lambda"
    elif "<locals>" in qualname:
        what = f"a local function ({qualname})"
    elif getattr(factory, "__module__", None) == "__main__":
        what = f"{qualname} in __main__, which has no file"
    else:
        what = f"{qualname}, which is not reachable by its module and name"
    return (
        f"not checked in a fresh interpreter: the factory is {what}, which another process "
        f"cannot import by name; publish a module-level factory and pass {_PUBLISH} so a "
        "restarted host's guard and fingerprint can be checked"
    )


def _resolve(module: ModuleType, qualname: str) -> object:
    obj: object = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _import_ref(ref: str) -> object:
    module_part, _, qualname = ref.rpartition(":")
    if not module_part or not qualname:
        raise ValueError(f"factory_ref {ref!r} is not of the form 'module:attr'")
    if module_part.endswith(".py") and os.path.isfile(module_part):
        spec = importlib.util.spec_from_file_location("adaptertest_fresh_main", module_part)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {module_part}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_part)
    found = _resolve(module, qualname)
    if found is None:
        raise AttributeError(f"{module_part} has no attribute {qualname}")
    return found


# -- what is compared -----------------------------------------------------------------------


def fresh_states(seed: SessionState) -> tuple[SessionState, ...]:
    """The seed, and the seed with :data:`FRESH_EXTRA_KEYS` more data keys."""
    data = dict(seed.data)
    data.update({f"adaptertest_fresh_{i:02d}": f"v{i}" for i in range(FRESH_EXTRA_KEYS)})
    return seed, seed.model_copy(update={"data": data}, deep=True)


def fresh_hash_seeds(environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """Two ``PYTHONHASHSEED`` values, fixed, and both other than this interpreter's when
    it runs with a fixed one (a randomised parent differs from any fixed seed)."""
    current = (os.environ if environ is None else environ).get("PYTHONHASHSEED", "")
    first, second = [seed for seed in FRESH_SEEDS if seed != current][:2]
    return first, second


def for_suite(factory: object, options: Options) -> tuple[FreshResult, ...] | str | None:
    """The fresh interpreters' results for this suite run (one per seed of
    :func:`fresh_hash_seeds`); the reason they were skipped (a str); None when
    ``Options(fresh_process=False)`` turned them off."""
    futures = start_for(factory, options)
    if isinstance(futures, str | None):
        return futures
    results: list[FreshResult] = []
    for seed, future in zip(fresh_hash_seeds(), futures, strict=True):
        try:
            results.append(future.result(timeout=options.probe_timeout + 5.0))
        except TimeoutError:
            why = f"it did not answer within {options.probe_timeout:g} s"
            results.append(FreshResult(seed, error=why))
    return tuple(results)


def start_for(factory: object, options: Options) -> tuple[Future[FreshResult], ...] | str | None:
    """Start the fresh interpreters for this suite run (once); see :func:`for_suite`."""
    if not options.fresh_process:
        return None
    ref = factory_ref_of(factory, options.factory_ref)
    if ref is None:
        return unavailable_reason(factory)
    seed = options.session_state if options.session_state is not None else DEFAULT_SESSION_STATE
    states = fresh_states(seed)
    return tuple(
        prefetch(ref, states, options.probe_timeout, hash_seed) for hash_seed in fresh_hash_seeds()
    )


# -- running the child --------------------------------------------------------------------

_lock = threading.Lock()
_cache: dict[tuple[str, str, str], Future[FreshResult]] = {}


def prefetch(
    ref: str, states: tuple[SessionState, ...], timeout: float, seed: str
) -> Future[FreshResult]:
    """Start (once per factory name, states and hash seed) a fresh interpreter on a thread."""
    payload = json.dumps(
        {"ref": ref, "states": [s.model_dump(mode="json") for s in states]}, sort_keys=True
    )
    key = (ref, payload, seed)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            return found
        future: Future[FreshResult] = Future()
        _cache[key] = future
    thread = threading.Thread(
        target=_fill, args=(future, payload, seed, timeout), name="adaptertest-fresh", daemon=True
    )
    thread.start()
    return future


def _child_env(seed: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = seed
    # The child sees the modules this process sees (a test directory on sys.path included).
    entries = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(entries))
    return env


def _fill(future: Future[FreshResult], payload: str, seed: str, timeout: float) -> None:
    import time

    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "adaptertest._fresh"],
            input=payload,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_child_env(seed),
            check=False,
        )
    except subprocess.TimeoutExpired:
        future.set_result(FreshResult(seed, error=f"it did not answer within {timeout:g} s"))
        return
    except OSError as exc:
        future.set_result(FreshResult(seed, error=f"it could not start ({exc})"))
        return
    elapsed = time.perf_counter() - start
    future.set_result(_parse(done.stdout, done.returncode, done.stderr, seed, elapsed))


def _parse(stdout: str, code: int, stderr: str, seed: str, elapsed: float) -> FreshResult:
    last = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    try:
        data = json.loads(last)
    except ValueError:
        tail = stderr.strip().splitlines()[-1:] or [f"exit status {code}"]
        return FreshResult(seed, error=f"it gave no result ({tail[0][:200]})", elapsed=elapsed)
    if not isinstance(data, dict):
        return FreshResult(seed, error="it gave no result", elapsed=elapsed)
    if data.get("error"):
        return FreshResult(seed, error=str(data["error"]), elapsed=elapsed)
    guards = tuple(
        (g["params"], g["guard"])
        for g in data.get("guards", [])
        if isinstance(g, dict) and isinstance(g.get("guard"), str)
    )
    fingerprint = data.get("fingerprint")
    return FreshResult(
        seed,
        guards=guards,
        fingerprint=fingerprint if isinstance(fingerprint, str) else None,
        failures=tuple(str(f) for f in data.get("failures", [])),
        elapsed=elapsed,
    )


# -- the child ----------------------------------------------------------------------------


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    value = fn(*args)
    if inspect.isawaitable(value):
        import anyio

        async def wait() -> Any:
            return await value

        value = anyio.run(wait)
    return value


def _raised(label: str, exc: BaseException) -> str:
    return f"{label} raised {type(exc).__module__}.{type(exc).__qualname__}"


def _child(payload: dict[str, Any]) -> dict[str, Any]:
    from driver.run import SessionState as State

    try:
        factory = _import_ref(str(payload["ref"]))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        return {"error": f"importing factory_ref {payload.get('ref')!r}: {_raised('it', exc)}"}
    if not callable(factory):
        return {"error": f"factory_ref {payload['ref']!r} names a {type(factory).__name__}"}
    try:
        driver = _call(factory)
    except Exception as exc:  # noqa: BLE001
        return {"error": _raised("the factory", exc)}
    out: dict[str, Any] = {"guards": [], "failures": []}
    fingerprint = getattr(driver, "session_config_fingerprint", None)
    if callable(fingerprint):
        try:
            value = _call(fingerprint)
            out["fingerprint"] = value if isinstance(value, str) else None
        except Exception as exc:  # noqa: BLE001
            out["failures"].append(_raised("session_config_fingerprint()", exc))
    get_codec = getattr(driver, "session_codec", None)
    codec = None
    if callable(get_codec):
        try:
            codec = _call(get_codec)
        except Exception as exc:  # noqa: BLE001
            out["failures"].append(_raised("session_codec()", exc))
    if codec is None:
        return out
    for index, raw in enumerate(payload.get("states", [])):
        try:
            params = _call(codec.to_params, State.model_validate(raw))
            guard = _call(codec.guard_fingerprint, params)
            out["guards"].append({"params": params.model_dump(mode="json"), "guard": guard})
        except Exception as exc:  # noqa: BLE001
            out["failures"].append(_raised(f"state {index}", exc))
    return out


def main() -> int:
    """``python -m adaptertest._fresh``: JSON request on stdin, one JSON line on stdout."""
    try:
        payload = json.loads(sys.stdin.read())
    except ValueError as exc:
        print(json.dumps({"error": f"bad request ({exc})"}))
        return 2
    result = _child(payload)
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
