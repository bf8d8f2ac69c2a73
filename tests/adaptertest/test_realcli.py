"""The real-CLI lock and installer: parsing, npm's command line, finding, skipping, the CLI.

npm and node are fake scripts on a PATH of their own: nothing here touches the network
or the machine's CLI cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from adaptertest import realcli
from adaptertest.__main__ import main as adaptertest_main
from adaptertest.realcli import CLISpec, InstallError, LockError

LOCK = {
    "toy": {"package": "@acme/toy-cli", "version": "1.2.3", "bin": "toy"},
    "other": {"package": "other-cli", "version": "0.1.0", "bin": "other"},
}

FAKE_NPM = f"""#!{sys.executable}
import json, os, sys, time
from pathlib import Path

args = sys.argv[1:]
with open(os.environ["FAKE_NPM_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if os.environ.get("FAKE_NPM_FAIL"):
    sys.stderr.write("npm ERR! code E404\\nnpm ERR! 404 Not Found - GET registry/acme\\n")
    sys.exit(1)
time.sleep(float(os.environ.get("FAKE_NPM_SECONDS", "0")))
flags = ["--save-exact", "--no-audit", "--no-fund"]
assert args[:2] == ["install", "--prefix"] and args[4:] == flags, args
prefix, spec = Path(args[2]), args[3]
package, _, version = spec.rpartition("@")
saved = version if "--save-exact" in args else "^" + version  # as npm saves it
(prefix / "package.json").write_text(json.dumps({{"dependencies": {{package: saved}}}}))
modules = prefix / "node_modules"
(modules / package).mkdir(parents=True, exist_ok=True)
(modules / package / "package.json").write_text(
    json.dumps({{"name": package, "version": version}})
)
if not os.environ.get("FAKE_NPM_NO_BIN"):  # npm links .bin/NAME to the package's file
    (modules / ".bin").mkdir(exist_ok=True)
    name = package.rpartition("/")[2].removesuffix("-cli")
    (modules / package / "cli.js").write_text("#!/bin/sh\\necho toy\\n")
    (modules / package / "cli.js").chmod(0o755)
    (modules / ".bin" / name).unlink(missing_ok=True)
    (modules / ".bin" / name).symlink_to(modules / package / "cli.js")
(modules / ".package-lock.json").write_text("{{}}")
"""


@pytest.fixture
def lock_file(tmp_path: Path) -> Path:
    path = tmp_path / "cli-versions.json"
    path.write_text(json.dumps(LOCK), encoding="utf-8")
    return path


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only a fake npm and a fake node; npm logs its argv to npm.log."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, text in (("npm", FAKE_NPM), ("node", "#!/bin/sh\nexit 0\n")):
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("FAKE_NPM_LOG", str(tmp_path / "npm.log"))
    monkeypatch.delenv(realcli.ROOT_ENV, raising=False)
    for name in LOCK:
        monkeypatch.delenv(realcli.BIN_ENV_PREFIX + name.upper(), raising=False)
        monkeypatch.delenv(realcli.VERSION_ENV_PREFIX + name.upper(), raising=False)
    return folder


def npm_calls(tmp_path: Path) -> list[list[str]]:
    log = tmp_path / "npm.log"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


# -- the lock -----------------------------------------------------------------------------


def test_the_kits_lock_pins_the_three_clis_and_the_acp_agents() -> None:
    specs = realcli.load_lock()
    assert specs == {
        "claude": CLISpec("claude", "@anthropic-ai/claude-code", "2.1.328", "claude"),
        "codex": CLISpec("codex", "@openai/codex", "0.169.0", "codex"),
        "gemini": CLISpec("gemini", "@google/gemini-cli", "0.61.0", "gemini"),
        "claude-acp": CLISpec(
            "claude-acp", "@agentclientprotocol/claude-agent-acp", "0.101.0", "claude-agent-acp"
        ),
        "codex-acp": CLISpec("codex-acp", "@agentclientprotocol/codex-acp", "2.6.0", "codex-acp"),
        "qwen": CLISpec("qwen", "@qwen-code/qwen-code", "0.24.4", "qwen"),
        "opencode": CLISpec("opencode", "opencode-ai", "1.18.33", "opencode"),
        "copilot": CLISpec("copilot", "@github/copilot", "1.0.102", "copilot"),
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "lock: not valid JSON"),
        ("[]", "expected a non-empty JSON object"),
        ("{}", "expected a non-empty JSON object"),
        ('{"Toy": {}}', "CLI name 'Toy' is not a lower-case word"),
        ('{"toy": "x"}', "toy: expected an object with package, version, bin"),
        ('{"toy": {"package": "p", "version": "1.0.0"}}', "toy.bin: expected a non-empty string"),
        (
            '{"toy": {"package": "p", "version": "1.0.0", "bin": "t", "tag": "x"}}',
            "toy: unknown field(s) tag",
        ),
        (
            '{"toy": {"package": "p", "version": "^1.0.0", "bin": "t"}}',
            "toy.version: '^1.0.0' is not an exact version",
        ),
        (
            '{"toy": {"package": "Bad Name", "version": "1.0.0", "bin": "t"}}',
            "toy.package: 'Bad Name' is not an npm name",
        ),
        (
            '{"toy": {"package": "p", "version": "1.0.0", "bin": "../t"}}',
            "toy.bin: '../t' is not a file name",
        ),
        (
            '{"toy": {"package": "p", "version": 1, "bin": "t"}}',
            "toy.version: expected a non-empty",
        ),
    ],
)
def test_a_bad_lock_is_refused_naming_the_entry(text: str, message: str) -> None:
    with pytest.raises(LockError) as caught:
        realcli.parse_lock(text)
    assert message in str(caught.value)


def test_a_missing_lock_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(LockError, match=r"cannot read the lock file .*nowhere\.json"):
        realcli.load_lock(tmp_path / "nowhere.json")


def test_pre_release_and_build_versions_are_exact() -> None:
    text = '{"toy": {"package": "p", "version": "1.0.0-rc.1+b7", "bin": "t"}}'
    assert realcli.parse_lock(text)["toy"].version == "1.0.0-rc.1+b7"


# -- installing ---------------------------------------------------------------------------


def test_install_runs_npm_once_per_prefix_and_reuses_a_complete_install(
    tmp_path: Path, lock_file: Path, fake_bin: Path
) -> None:
    root = tmp_path / "clis"
    first = realcli.install(["toy"], root=root, lock=lock_file)
    prefix = root / "toy-1.2.3"
    assert first == {"toy": prefix / "node_modules" / ".bin" / "toy"}
    assert npm_calls(tmp_path) == [
        [
            "install",
            "--prefix",
            str(prefix),
            "@acme/toy-cli@1.2.3",
            "--save-exact",
            "--no-audit",
            "--no-fund",
        ]
    ]
    assert json.loads((prefix / realcli.MARKER).read_text()) == {
        "package": "@acme/toy-cli",
        "version": "1.2.3",
    }
    assert realcli.install(["toy"], root=root, lock=lock_file) == first
    assert len(npm_calls(tmp_path)) == 1  # complete: npm is not run again
    everything = realcli.install(None, root=root, lock=lock_file)
    assert sorted(everything) == ["other", "toy"]
    assert len(npm_calls(tmp_path)) == 2


def test_an_install_npm_did_not_finish_is_redone(
    tmp_path: Path, lock_file: Path, fake_bin: Path
) -> None:
    root = tmp_path / "clis"
    realcli.install(["toy"], root=root, lock=lock_file)
    prefix = root / "toy-1.2.3"
    (prefix / realcli.MARKER).unlink()
    (prefix / "node_modules" / ".package-lock.json").unlink()  # as if npm was killed
    assert realcli.locate("toy", root=root, lock=lock_file) is None
    realcli.install(["toy"], root=root, lock=lock_file)
    assert len(npm_calls(tmp_path)) == 2


def test_an_install_without_a_marker_but_finished_by_npm_is_accepted(
    tmp_path: Path, lock_file: Path, fake_bin: Path
) -> None:
    """Installs made by hand with the same npm command count as complete."""
    root = tmp_path / "clis"
    realcli.install(["toy"], root=root, lock=lock_file)
    (root / "toy-1.2.3" / realcli.MARKER).unlink()
    assert realcli.locate("toy", root=root, lock=lock_file) is not None
    assert realcli.cli_version("toy", root=root, lock=lock_file) == "1.2.3"
    labels = realcli.cli_labels("toy", root=root, lock=lock_file)
    assert labels == {"cli": "toy", "cli_version": "1.2.3"}
    (root / "toy-1.2.3" / "node_modules" / "@acme" / "toy-cli" / "package.json").write_text(
        json.dumps({"name": "@acme/toy-cli", "version": "1.2.2"})
    )
    assert realcli.locate("toy", root=root, lock=lock_file) is None  # another version
    assert realcli.cli_labels("toy", root=root, lock=lock_file)["cli_version"] == ""


def test_concurrent_installs_of_one_prefix_take_turns(
    tmp_path: Path, lock_file: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_SECONDS", "0.3")  # npm takes a while: both threads overlap
    root = tmp_path / "clis"
    results: list[dict[str, Path]] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(realcli.install(["toy"], root=root, lock=lock_file))
        )
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 2
    assert results[0] == results[1]
    assert len(npm_calls(tmp_path)) == 1


def test_a_failing_npm_is_quoted(
    tmp_path: Path, lock_file: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_FAIL", "1")
    with pytest.raises(InstallError) as caught:
        realcli.install(["toy"], root=tmp_path / "clis", lock=lock_file)
    message = str(caught.value)
    assert "npm install @acme/toy-cli@1.2.3 failed (exit 1)" in message
    assert "404 Not Found" in message
    assert not (tmp_path / "clis" / "toy-1.2.3" / realcli.MARKER).exists()


def test_a_package_without_the_locked_binary_is_an_error(
    tmp_path: Path, lock_file: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_NO_BIN", "1")
    with pytest.raises(InstallError, match="has no binary 'toy'"):
        realcli.install(["toy"], root=tmp_path / "clis", lock=lock_file)


def test_missing_npm_is_named(
    tmp_path: Path, lock_file: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fake_bin / "npm").unlink()
    with pytest.raises(InstallError, match=r"npm is not on PATH: install Node\.js 20"):
        realcli.install(["toy"], root=tmp_path / "clis", lock=lock_file)


def test_unknown_names_and_bad_versions_are_refused_before_npm(
    tmp_path: Path, lock_file: Path, fake_bin: Path
) -> None:
    with pytest.raises(LockError, match="no CLI named 'nope' in the lock"):
        realcli.install(["toy", "nope"], root=tmp_path, lock=lock_file)
    with pytest.raises(LockError, match="not an exact version"):
        realcli.install(["toy"], root=tmp_path, lock=lock_file, versions={"toy": "latest"})
    assert npm_calls(tmp_path) == []


def test_the_root_and_version_overrides(
    tmp_path: Path, lock_file: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(realcli.ROOT_ENV, str(tmp_path / "elsewhere"))
    monkeypatch.setenv(realcli.VERSION_ENV_PREFIX + "TOY", "2.0.0")
    binary = realcli.install(["toy"], lock=lock_file)["toy"]
    assert binary == tmp_path / "elsewhere" / "toy-2.0.0" / "node_modules" / ".bin" / "toy"
    assert realcli.locate("toy", lock=lock_file) == binary
    assert realcli.cli_version("toy", lock=lock_file) == "2.0.0"
    monkeypatch.setenv(realcli.VERSION_ENV_PREFIX + "TOY", "two")
    assert "ADAPTERTEST_CLI_VERSION_TOY: 'two' is not an exact version" in str(
        realcli.skip_reason("toy", lock=lock_file)
    )


def test_the_prefix_pins_the_exact_version(tmp_path: Path, lock_file: Path, fake_bin: Path) -> None:
    root = tmp_path / "clis"
    realcli.install(["toy"], root=root, lock=lock_file)
    spec = realcli.resolve_spec("toy", lock=lock_file)
    saved = json.loads((realcli.prefix_for(spec, root) / "package.json").read_text())
    assert saved == {"dependencies": {"@acme/toy-cli": "1.2.3"}}


# -- finding and skipping -----------------------------------------------------------------


LOCATE_IN_A_CHILD = """
import sys
from adaptertest import realcli
print(realcli.locate("toy", root=sys.argv[1], lock=sys.argv[2]) or "")
"""


def test_a_child_process_finds_what_its_parent_found(
    tmp_path: Path, lock_file: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CLI installed by another process while this one runs (another test's install)
    does not make a child of this process (the suite's fresh interpreter) see a CLI this
    process did not: the decision is the parent's, not the moment's."""
    monkeypatch.delenv(realcli.FOUND_ENV, raising=False)
    root = tmp_path / "clis"
    assert realcli.skip_reason("toy", root=root, lock=lock_file) is not None

    def python(env: dict[str, str], *args: str) -> str:
        done = subprocess.run(
            [sys.executable, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def child(env: dict[str, str]) -> str:
        return python(env, "-c", LOCATE_IN_A_CHILD, str(root), str(lock_file))

    elsewhere = {k: v for k, v in os.environ.items() if k != realcli.FOUND_ENV}
    install = ["-m", "adaptertest", "install-clis", "toy", "--root", str(root)]
    python(elsewhere, *install, "--lock", str(lock_file))  # another process installs
    assert child(dict(os.environ)) == ""  # as its parent found: not installed
    assert child(elsewhere) == str(
        realcli.binary_path(realcli.resolve_spec("toy", lock=lock_file), root)
    )
    # What this process installs itself, it and its children find.
    realcli.install(["toy"], root=root, lock=lock_file)
    assert child(dict(os.environ)) != ""


def test_skip_reasons_name_the_installer(
    tmp_path: Path, lock_file: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "clis"
    reason = realcli.skip_reason("toy", root=root, lock=lock_file)
    assert reason == (
        f"the toy CLI (@acme/toy-cli@1.2.3) is not installed under {root}: "
        "run `adaptertest install-clis toy`"
    )
    with pytest.raises(pytest.skip.Exception, match="adaptertest install-clis toy"):
        realcli.require("toy", root=root, lock=lock_file)
    realcli.install(["toy"], root=root, lock=lock_file)
    assert realcli.skip_reason("toy", root=root, lock=lock_file) is None
    assert realcli.require("toy", root=root, lock=lock_file) == realcli.binary_path(
        realcli.resolve_spec("toy", lock=lock_file), root
    )
    (fake_bin / "node").unlink()
    assert str(realcli.skip_reason("toy", root=root, lock=lock_file)).startswith(
        "node is not on PATH: the toy CLI needs Node.js 20 or later, then run "
        "`adaptertest install-clis toy`"
    )


def test_a_binary_override_wins_and_a_bad_one_is_named(
    tmp_path: Path, lock_file: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "own" / "toy-cli"
    (package / "bin").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@acme/toy-cli", "version": "9.9.9"}))
    binary = package / "bin" / "toy"
    binary.write_text("#!/bin/sh\n")
    monkeypatch.setenv(realcli.BIN_ENV_PREFIX + "TOY", str(binary))
    assert realcli.locate("toy", root=tmp_path / "clis", lock=lock_file) == binary
    assert realcli.cli_version("toy", root=tmp_path / "clis", lock=lock_file) == "9.9.9"
    monkeypatch.setenv(realcli.BIN_ENV_PREFIX + "TOY", str(tmp_path / "missing"))
    assert realcli.locate("toy", lock=lock_file) is None
    reason = str(realcli.skip_reason("toy", lock=lock_file))
    assert reason.startswith(f"ADAPTERTEST_CLI_BIN_TOY={tmp_path / 'missing'} is not a file")


# -- the command line ---------------------------------------------------------------------


def test_install_clis_prints_where_each_binary_is(
    tmp_path: Path,
    lock_file: Path,
    fake_bin: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "clis"
    args = ["install-clis", "toy", "--root", str(root), "--lock", str(lock_file)]
    assert adaptertest_main(args) == 0
    binary = root / "toy-1.2.3" / "node_modules" / ".bin" / "toy"
    assert capsys.readouterr().out == f"toy 1.2.3: {binary} (installed)\n"
    assert adaptertest_main([*args, "--version", "toy=1.2.4"]) == 0
    out = capsys.readouterr().out
    assert out == f"toy 1.2.4: {root / 'toy-1.2.4' / 'node_modules' / '.bin' / 'toy'} (installed)\n"
    assert adaptertest_main(args) == 0
    assert capsys.readouterr().out == f"toy 1.2.3: {binary} (already installed)\n"


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["nope"], 2, "no CLI named 'nope' in the lock"),
        (["--version", "toy"], 2, "--version expects NAME=VERSION"),
        (["--version", "toy=^1"], 2, "--version toy: '^1' is not an exact version"),
        (["--version", "toy=1.0.0", "--version", "toy=1.0.1"], 2, "--version names toy twice"),
        (["other", "--version", "toy=1.0.0"], 2, "names toy, which is not being"),
        (["--bogus"], 2, "unrecognized arguments: --bogus"),
    ],
)
def test_install_clis_bad_arguments(
    tmp_path: Path,
    lock_file: Path,
    fake_bin: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    status: int,
    message: str,
) -> None:
    common = ["--root", str(tmp_path / "clis"), "--lock", str(lock_file)]
    assert adaptertest_main(["install-clis", *args, *common]) == status
    assert message in capsys.readouterr().err
    assert npm_calls(tmp_path) == []


def test_install_clis_reports_a_bad_lock_and_a_failed_npm(
    tmp_path: Path,
    fake_bin: Path,
    lock_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert adaptertest_main(["install-clis", "--lock", str(broken)]) == 2
    assert "broken.json: not valid JSON" in capsys.readouterr().err
    monkeypatch.setenv("FAKE_NPM_FAIL", "1")
    args = ["install-clis", "--root", str(tmp_path / "clis"), "--lock", str(lock_file), "toy"]
    assert adaptertest_main(args) == 1
    assert "npm ERR! 404 Not Found" in capsys.readouterr().err


def test_install_clis_is_listed_in_the_kits_help(capsys: pytest.CaptureFixture[str]) -> None:
    from adaptertest.cli import main as cli_main

    assert cli_main(["--help"]) == 0
    assert "install-clis" in capsys.readouterr().out
