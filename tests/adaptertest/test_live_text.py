"""Provider text and secrets on every front end: withheld by default, shown on request,
secrets never.

One module of leaky drivers (provider text in output, stdout, stderr, a stray delta, a
failure message and an exception message; a config secret and an ``Options.secrets``
string in all of them) goes through the CLI (table, details, JSON report) and through
pytest (terminal output, JUnit XML, the plugin's JSON report), on both backends.
"""

from __future__ import annotations

from pathlib import Path

import hypothesis  # noqa: F401 - keep one copy loaded for pytester's in-process runs
import pytest

import adaptertest._pytest  # noqa: F401
import referencedriver  # noqa: F401
from adaptertest.cli import main

CANARY = "provider-canary-93e1"
SECRET = "sk-config-secret-5b7d"
EXTRA = "extra-secret-c4a2"

LEAKY = f'''
from pydantic import BaseModel, ConfigDict, SecretStr

import adaptertest
from adaptertest import Options
from driver import RawStreams, RunError, StreamKind, StreamPayload
from referencedriver import ReferenceConfig, ReferenceDriver

LEAK = "{CANARY} {EXTRA}"


class LeakyConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    token: SecretStr


class Leaky(ReferenceDriver):
    mode = "response"

    def __init__(self):
        super().__init__(ReferenceConfig(fail_run=self.mode == "failure"))

    def validate_config(self, config):
        if not isinstance(config, LeakyConfig):
            super().validate_config(config)

    async def run(self, request, sink):
        leak = f"{{LEAK}} {{request.config.token.get_secret_value()}}"
        if self.mode == "error":
            raise RunError(f"auth failed: {{leak}}")
        inner = request.model_copy(update={{"config": None}})
        response = await super().run(inner, sink)
        sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_CONTENT, message_id="x", delta=leak))
        if response.failure is not None:
            failure = response.failure.model_copy(update={{"message": f"budget: {{leak}}"}})
            return response.model_copy(update={{"failure": failure}})
        raw = RawStreams(stdout=leak.encode(), stderr=leak.encode())
        return response.model_copy(update={{"output": leak, "raw_streams": raw}})


class Raising(Leaky):
    mode = "error"


class Failing(Leaky):
    mode = "failure"


def options(backend="asyncio", details=False):
    return Options(
        config=LeakyConfig(token=SecretStr("{SECRET}")),
        secrets=("{EXTRA}",),
        live_run=True,
        backend=backend,
        show_live_details=details,
    )
'''

DRIVERS = ("Leaky", "Raising", "Failing")


def _texts(*paths: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in paths)


@pytest.fixture
def leaky_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "leaky_drivers.py").write_text(LEAKY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("COLUMNS", "1000")  # no wrapping: a cut canary would hide
    return "leaky_drivers"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("details", [False, True], ids=["default", "details"])
def test_cli_table_and_json(
    leaky_module: str,
    backend: str,
    details: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for driver in DRIVERS:
        report = tmp_path / f"{driver}.json"
        args = ["check", f"{leaky_module}:{driver}", "--options", f"{leaky_module}:options"]
        args += ["--clause", "LIV,EVT,FLR,RSP", "--backend", backend, "--report", str(report)]
        if details:
            args.append("--show-live-details")
        assert main(args) == 1
        out = capsys.readouterr().out
        everything = out + _texts(report)
        assert SECRET not in everything
        assert EXTRA not in everything
        assert (CANARY in out and CANARY in _texts(report)) is details, out
        if driver == "Raising":  # the driver's traceback, only with details
            assert ("driver traceback:" in out and "driver traceback:" in _texts(report)) is details
        if not details:
            assert "<withheld: " in out
            assert "--show-live-details" in out  # the hint names the CLI's own flag
            assert f"python -m adaptertest check {leaky_module}:{driver} --options" in out


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("details", [False, True], ids=["default", "details"])
def test_pytest_output_junit_and_json(
    pytester: pytest.Pytester, backend: str, details: bool
) -> None:
    pytester.makepyfile(leaky_drivers=LEAKY)
    classes = "\n".join(
        f"Test{name} = adaptertest.test_driver({name}, options({backend!r}, {details}))"
        for name in DRIVERS
    )
    pytester.makepyfile(
        test_leaky=f"import adaptertest\nfrom leaky_drivers import *\n\n{classes}\n"
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-rA", "-k", "LIV or EVT or FLR",
        "--junitxml=junit.xml", "--adaptertest-report=report.json",
    )  # fmt: skip
    out = result.stdout.str()
    files = _texts(pytester.path / "junit.xml", pytester.path / "report.json")
    everything = out + files
    assert SECRET not in everything
    assert EXTRA not in everything
    assert (CANARY in out and CANARY in files) is details
    assert ("driver traceback:" in out and "driver traceback:" in files) is details
    if not details:
        assert "<withheld: " in out
        assert "rerun with --adaptertest-show-details (or ADAPTERTEST_SHOW_DETAILS=1)" in out
        hint = "rerun alone: pytest 'test_leaky.py::TestRaising::test_clause[LIV-01]'"
        assert hint in out
