"""The clause catalogue, as data.

Everything that lists clauses (the pytest items, the CLI, the report, the table in docs/clauses.md)
is generated from :data:`CLAUSES`; no other module spells out the catalogue.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Mode(StrEnum):
    """When a clause runs."""

    HERMETIC = "hermetic"  # always, with no provider
    OPT_IN = "opt-in"  # hermetic, but only when an option turns it on
    LIVE = "live"  # needs Options(live_run=True): runs the provider
    SCENARIO = "scenario"  # needs Options(model_binding=...): runs against the model emulator


@dataclass(frozen=True, slots=True)
class Clause:
    """One rule of the driver contract.

    ``probes`` name the suite steps that judge the clause (one driver interaction judges
    many clauses, and a few clauses are judged by two probes); ``module`` is the
    ``adaptertest`` module that holds its checks.
    """

    id: str
    family: str
    title: str
    rule: str
    mode: Mode
    probes: tuple[str, ...]
    extension: bool = False

    @property
    def module(self) -> str:
        return _MODULES.get(self.family, f"adaptertest.{self.family.lower()}")


_MODULES: dict[str, str] = {"SYS": "adaptertest.sysprompt"}
"""Families whose module is not named after them (``adaptertest.sys`` would read as ``sys``)."""

H, OPT, L, SC = Mode.HERMETIC, Mode.OPT_IN, Mode.LIVE, Mode.SCENARIO
_LIVE = ("live_run",)
_BOTH_LIVE = ("live_run", "live_structured_output")
SCENARIO_PROBES = (
    "scenario_tools",
    "scenario_reasoning",
    "scenario_resume",
    "scenario_faults",
    "scenario_deadline",
    "scenario_input",
    "scenario_output",
)
"""The probes that run scenarios against the model emulator (Options.model_binding)."""


def _c(id: str, title: str, rule: str, mode: Mode, *probes: str, extension: bool = False) -> Clause:
    return Clause(id, id.split("-")[0], title, rule, mode, probes, extension)


CLAUSES: tuple[Clause, ...] = (
    # --- DRV: the driver and its descriptor -------------------------------------------
    _c(
        "DRV-01",
        "descriptor names the driver",
        "The factory returns a driver, and descriptor() returns a Descriptor whose type and "
        "display_name are non-empty.",
        H,
        "descriptor",
    ),
    _c(
        "DRV-02",
        "descriptor is deterministic",
        "descriptor() returns equal values on repeated calls and across two instances from "
        "the factory.",
        H,
        "descriptor",
    ),
    _c(
        "DRV-03",
        "descriptor snapshots are independent",
        "Two descriptor() snapshots share no mutable object (list, dict, mutable model), so "
        "changing one can never change the next.",
        H,
        "descriptor",
    ),
    # --- CFG: configuration -----------------------------------------------------------
    _c(
        "CFG-01",
        "validate_config(None) is safe",
        "validate_config(None) returns or raises InvalidDriverConfigError; any other "
        "exception is a contract breach.",
        H,
        "config",
    ),
    _c(
        "CFG-02",
        "the supplied config is accepted",
        "validate_config accepts the config given in Options(config=...).",
        H,
        "config",
    ),
    _c(
        "CFG-03",
        "a foreign config is rejected",
        "validate_config rejects a value of a type the driver does not know, with "
        "InvalidDriverConfigError.",
        OPT,
        "config",
    ),
    # --- CAP: capability truthfulness -------------------------------------------------
    _c(
        "CAP-01",
        "resume declaration is truthful",
        "sessions.supports_resume holds exactly when session_codec() gives a codec; a "
        "resumable driver also has a non-blank, stable session_config_fingerprint(), and "
        "codec name and fingerprint agree across instances and in a fresh interpreter.",
        H,
        "capability_declarations",
        "fresh_process",
    ),
    _c(
        "CAP-02",
        "skills declaration is truthful",
        "skills.supported requires SkillSupport and mode ephemeral or persistent; an "
        "unsupported declaration uses neither mode.",
        H,
        "capability_declarations",
    ),
    _c(
        "CAP-03",
        "environment probe reports cleanly",
        "check_environment succeeds, names the descriptor's type, uses status "
        "pass/warn/fail (pass means healthy) and gives every check a code.",
        H,
        "environment",
    ),
    _c(
        "CAP-04",
        "model list is usable",
        "list_models succeeds and every model has a non-empty id.",
        H,
        "models",
    ),
    _c(
        "CAP-05",
        "model detection is usable",
        "detect_model succeeds; a result has a non-empty model, equal to "
        "Options(expected_detected_model=...) when given.",
        H,
        "detect_model",
    ),
    _c(
        "CAP-06",
        "profile report is usable",
        "get_profile succeeds, names the descriptor's type, and a supported profile has a "
        "dir and a source.",
        H,
        "profile",
    ),
    _c(
        "CAP-07",
        "quota report is usable",
        "get_quota succeeds (unavailability belongs in the report), names the descriptor's "
        "type, and every window has a label.",
        H,
        "quota",
    ),
    _c(
        "CAP-08",
        "config schema is usable",
        "config_schema succeeds with a schema whose field names are non-empty and unique "
        "and include every Options(required_config_fields=...) name.",
        H,
        "config_schema",
    ),
    _c(
        "CAP-09",
        "skill inspection echoes the selection",
        "list_skills (and sync_skills when opted in) on an empty catalogue succeeds with a "
        "supported snapshot of the descriptor's type, a declared mode and no selection.",
        H,
        "skills",
    ),
    _c(
        "CAP-10",
        "stream capability is deterministic",
        "stream_capability() returns equal values on repeated calls.",
        H,
        "stream_capability",
    ),
    _c(
        "CAP-11",
        "persistent processes can be closed",
        "process.persistent requires the driver to implement close_processes().",
        H,
        "capability_declarations",
    ),
    # --- SO: structured output --------------------------------------------------------
    _c(
        "SO-01",
        "structured-output matrix is consistent",
        "Any works_with_* flag needs a mechanism; every mechanism needs works_with_run; a "
        "true HITL-matrix kind needs its mechanism, works_with_run and the matching "
        "run_policy_caps Ask.",
        H,
        "capability_declarations",
    ),
    _c(
        "SO-02",
        "native structured output is returned",
        "A native structured run returns structured_output with source native, valid, and "
        'raw_json exactly the object {"ok": true}; a value, when present, encodes to the '
        "same object.",
        L,
        "live_structured_output",
    ),
    _c(
        "SO-03",
        "the suite sends only declared shapes",
        "The structured probe runs only when json_schema_native and works_with_run are "
        "declared, and its request asks for nothing the descriptor does not declare.",
        H,
        "capability_declarations",
        "live_structured_output",
    ),
    # --- SES: session codec -----------------------------------------------------------
    _c(
        "SES-01",
        "codec name is stable",
        "The codec's name() is non-empty and the same on every call.",
        H,
        "session_codec",
    ),
    _c(
        "SES-02",
        "canonical empty mapping",
        "to_params(None) equals SessionParams() and from_params(SessionParams()) is None.",
        H,
        "session_codec",
    ),
    _c(
        "SES-03",
        "to_params keeps the state",
        "to_params keeps resume_id and every data entry, and sets display_id when resume_id "
        "is set.",
        H,
        "session_codec",
    ),
    _c(
        "SES-04",
        "codec round trip is lossless",
        "from_params(params) is not None and to_params of it equals params.",
        H,
        "session_codec",
    ),
    _c(
        "SES-05",
        "guard fingerprint is deterministic",
        "guard_fingerprint is non-empty and equal for equal params, in this interpreter "
        "and in a fresh one with another hash seed.",
        H,
        "session_codec",
        "fresh_process",
    ),
    _c(
        "SES-06",
        "guard keys move the guard",
        "Changing the value of any Options(guard_keys=...) key changes guard_fingerprint.",
        OPT,
        "session_codec",
    ),
    _c(
        "SES-07",
        "codec never raises on empty input",
        "to_params(None), from_params(SessionParams()) and guard_fingerprint(SessionParams()) "
        "return without raising.",
        H,
        "session_codec",
    ),
    _c(
        "SES-08",
        "session keys survive the codec",
        "Every Options(session_keys=...) key keeps its seed value in params.values and in "
        "the restored state's data.",
        OPT,
        "session_codec",
    ),
    _c(
        "SES-09",
        "checkpoint stores the profile fingerprint",
        "A valid live checkpoint stores request.profile_payload.session_fingerprint() under "
        "data['profile_fingerprint'].",
        L,
        *_LIVE,
    ),
    # --- EVT: stream payload timing and fields ----------------------------------------
    _c(
        "EVT-01",
        "one run.started, first",
        "The first payload is run.started and no second run.started follows.",
        L,
        *_LIVE,
    ),
    _c(
        "EVT-02",
        "one terminal, last",
        "Exactly one terminal (run.finished or run.error, the latter with error) ends the "
        "stream and nothing follows it, nor reaches the sink after run() returns.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "EVT-03",
        "text lifecycle",
        "text.start opens a new message_id, text.content and text.end need an open one, "
        "and an id is never reopened.",
        L,
        *_LIVE,
    ),
    _c("EVT-04", "text deltas are non-empty", "text.content carries a non-empty delta.", L, *_LIVE),
    _c(
        "EVT-05",
        "tool lifecycle",
        "tool_call.start needs an id and a name and never reopens; args need an open call "
        "and a non-empty delta; end needs an open call; result needs a call seen before.",
        L,
        *_LIVE,
    ),
    _c(
        "EVT-06",
        "reasoning lifecycle",
        "reasoning.* follow the text rules: a new id to start, an open id to continue or "
        "end, non-empty deltas.",
        L,
        *_LIVE,
    ),
    _c(
        "EVT-07",
        "step lifecycle",
        "step.started and step.finished carry a name, and a step finishes only while one of "
        "that name is open.",
        L,
        *_LIVE,
    ),
    _c(
        "EVT-08",
        "HITL payloads carry their envelope",
        "hitl.requested carries hitl_requested and hitl.resolved carries hitl_resolved.",
        L,
        *_LIVE,
    ),
    _c(
        "EVT-09",
        "drivers leave role unset",
        "Every payload keeps role at its zero value (assistant).",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "EVT-10",
        "drivers leave numbering to core",
        "Every payload leaves sequence, seq and timestamp unset.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "EVT-11",
        "lifecycles close before the terminal",
        "At run.finished or run.error no text, reasoning, tool or step lifecycle is open.",
        L,
        *_LIVE,
    ),
    _c(
        "EVT-12",
        "stream capability negatives hold",
        "No tool_call.args, reasoning.* or hitl.* payload appears when stream_capability() "
        "says that kind is not exposed.",
        L,
        *_LIVE,
    ),
    _c(
        "EVT-13",
        "run frames carry no message or tool id",
        "run.started, run.finished and run.error leave message_id and tool_call_id empty.",
        L,
        *_LIVE,
    ),
    _c(
        "EVT-14",
        "tool scope coordinates are sound",
        "Tool parents are well-formed, never the call itself, and stable over the "
        "lifecycle; no args after a full args snapshot; one result per call and scope.",
        L,
        *_BOTH_LIVE,
    ),
    # --- OBS: observation facts -------------------------------------------------------
    _c(
        "OBS-01",
        "observations are declared",
        "Every capability.invocation and todo.updated fact is of a kind the descriptor's "
        "observation support declares for that transport. Facts beyond the request's "
        "observation demand are allowed (OBS-07 holds runs to the demand, on request).",
        L,
        *_BOTH_LIVE,
        "system_prompt",
    ),
    _c(
        "OBS-02",
        "observation payloads are pure",
        "An observation payload carries only its own fact (capability or todo) and no other "
        "semantic field, and a fact appears only on its own kind.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "OBS-03",
        "capability invocations are valid",
        "Invocation ids, keys, operations, parents, time, source/evidence, phase, duration "
        "and error code stay within the closed vocabulary and limits.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "OBS-04",
        "invocation lifecycle",
        "Each (scope, invocation) starts once, ends once with the same identity, and is "
        "closed before the terminal and before run returns.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "OBS-05",
        "todo snapshots are valid",
        "A todo snapshot has an item list (empty means cleared), at most 128 unique valid "
        "items, a revision, a UTC time, sound parents and a known source.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "OBS-06",
        "todo revisions advance",
        "Per scope, revisions start at 1 and grow by exactly 1, and no snapshot repeats the "
        "previous one.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "OBS-07",
        "observations stay within the demand (stricter than upstream)",
        "With Options(strict_observation_demand=True), every capability.invocation and "
        "todo.updated fact is of a kind the request's observation demand asks for "
        "(capability_invocations, todos). Upstream has no such rule: a driver may report "
        "declared facts nobody demanded, so the clause is off by default.",
        L,
        *_BOTH_LIVE,
        "system_prompt",
        extension=True,
    ),
    # --- RUN: run events --------------------------------------------------------------
    _c(
        "RUN-01",
        "chunks name their stream",
        "A chunk event's stream is 'stdout' or 'stderr'.",
        L,
        *_LIVE,
    ),
    _c(
        "RUN-02",
        "run events are well-formed; item events carry an item",
        "Every run event is a well-formed RunEvent, and an item event carries a transcript "
        "item, which obeys the TRN rules.",
        L,
        *_LIVE,
    ),
    _c(
        "RUN-03",
        "drivers leave event numbering to core",
        "Every run event leaves seq at zero.",
        L,
        *_LIVE,
    ),
    _c(
        "RUN-04",
        "item events mirror the transcript",
        "The items of the item events, in order, equal Response.transcript.",
        L,
        *_LIVE,
    ),
    # --- TRN: transcript items --------------------------------------------------------
    _c(
        "TRN-01",
        "text-bearing items have text",
        "assistant, thinking, user, stdout, stderr, system, summary, question and failure "
        "items carry text.",
        L,
        *_BOTH_LIVE,
    ),
    _c("TRN-02", "tool calls name their tool", "tool_call items carry tool_name.", L, *_BOTH_LIVE),
    _c(
        "TRN-03",
        "tool results name their call",
        "tool_result items carry tool_use_id.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "TRN-04",
        "deltas only on assistant and thinking",
        "delta=True appears only on assistant and thinking items.",
        L,
        *_BOTH_LIVE,
    ),
    # --- LIV: live success ------------------------------------------------------------
    _c(
        "LIV-01",
        "the live run succeeds",
        "The live run returns without error, exit code 0, no signal, no timeout and no failure.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "LIV-02",
        "the live run answers the prompt",
        "With the default prompt the trimmed output is 'OK'; with "
        "Options(live_expected_output=...) it equals that text, trimmed.",
        L,
        *_LIVE,
    ),
    _c(
        "LIV-03",
        "a resumable driver returns a checkpoint",
        "A driver that declares resume returns a valid checkpoint with state and a "
        "non-empty resume_id.",
        L,
        *_BOTH_LIVE,
    ),
    # --- RSP: response invariants -----------------------------------------------------
    _c(
        "RSP-01",
        "valid checkpoints only on success",
        "A valid checkpoint has state with a resume_id and comes only with exit 0, no "
        "signal, no timeout, no failure and no error from run.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "RSP-02",
        "human-decision failures are attributed",
        "failure.human_decision is set exactly when failure.code is decision_rejected or "
        "decision_timeout.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "RSP-03",
        "output is not a stdout dump",
        "output is the final answer, never protocol: not stdout's JSON lines (all or part, "
        "with or without the trailing newline, LF or CRLF), nor the terminal JSON line alone.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "RSP-04",
        "checkpoint round-trips through the codec",
        "A valid checkpoint's state goes through the driver's own codec losslessly, with a "
        "kept resume_id and a non-empty guard.",
        L,
        *_BOTH_LIVE,
    ),
    _c(
        "RSP-05",
        "terminal payload is well-formed",
        "raw_streams.terminal, when present, has a non-blank event and valid JSON.",
        L,
        *_BOTH_LIVE,
    ),
    # --- CON: Python extension clauses ------------------------------------------------
    _c(
        "CON-01",
        "concurrent runs stay apart",
        "N concurrent run() calls on one driver instance, each with its own sink and run "
        "id, each satisfy the stream, run-event, transcript and response clauses (a legal "
        "failure included), emit nothing after returning, and no payload of one run "
        "reaches another's sink.",
        L,
        "concurrent_runs",
        extension=True,
    ),
    # --- RCV: Python extension clauses ------------------------------------------------
    _c(
        "RCV-01",
        "emitted values stay as emitted",
        "No stream payload or run event (its transcript item included) changes after it "
        "reached the sink: the sink may keep the object, so it is never edited or reused.",
        L,
        *_BOTH_LIVE,
        "concurrent_runs",
        extension=True,
    ),
    _c(
        "RCV-02",
        "returned responses stay as returned",
        "The Response run() returned does not change afterwards, and the responses of "
        "concurrent runs share no mutable object (a checkpoint state, a dict, a list).",
        L,
        *_BOTH_LIVE,
        "concurrent_runs",
        extension=True,
    ),
    # --- USG: Python extension clauses ------------------------------------------------
    _c(
        "USG-01",
        "usage is coherent",
        "Every usage a live run reports (response.usage, any stream payload's usage) has no "
        "negative count and no more cached_input_tokens than input_tokens, and a "
        "run.finished payload's usage, when present, equals response.usage.",
        L,
        *_BOTH_LIVE,
        extension=True,
    ),
    # --- FLR: Python extension clauses ------------------------------------------------
    _c(
        "FLR-01",
        "a failed live run fails cleanly",
        "A failed live run reports a failure with a known code and a non-blank message, "
        "offers no valid checkpoint, keeps exit code, signal and timed_out consistent with "
        "it, ends its stream in run.error with every lifecycle closed, and carries it in the "
        "transcript; under Options(live_expect_failure=...) the live run must fail.",
        L,
        *_BOTH_LIVE,
        extension=True,
    ),
    # --- DFT: Python extension clauses (CLI format drift) -----------------------------
    _c(
        "DFT-01",
        "additive format drift changes nothing",
        "Under additive drift of a recorded CLI output (unknown line types, unknown fields at "
        "any depth, shuffled key order, blank lines, CRLF line endings; in an ACP agent's side "
        "of a conversation, extension notifications, session/update kinds and _meta fields it "
        "never sent) the run's result equals "
        "the recording's (output, transcript, stream, usage, success or failure, checkpoint; "
        "ids and timestamps the driver makes itself normalised, added fields passed on under "
        "their own names ignored), and every stream, run-event and transcript clause still "
        "holds.",
        OPT,
        "drift",
        extension=True,
    ),
    _c(
        "DFT-02",
        "corrupt output fails cleanly",
        "On corrupt CLI output (a truncated last line, a line that is not JSON, invalid UTF-8 "
        "inside a string, the process exiting mid-line; in an ACP conversation, an answer "
        "carrying an earlier answer's id) run() neither raises nor hangs, its "
        "stream, run events, transcript and response stay legal, the failure names the corrupt "
        "line or a transcript item keeps it visible, and no valid checkpoint is offered.",
        OPT,
        "drift",
        extension=True,
    ),
    _c(
        "DFT-03",
        "chunking never matters",
        "The same output bytes delivered in any chunks, with pauses, splitting lines and "
        "multi-byte UTF-8 characters, give the same result as delivered line by line.",
        OPT,
        "drift",
        extension=True,
    ),
    # --- SYS: Python extension clauses (appended system prompt) ------------------------
    _c(
        "SYS-01",
        "an append is taken exactly when declared, and refused by upstream's rules",
        "A run whose append_system_prompt is not valid UTF-8 is refused with "
        "SystemPromptUnsupportedError reason invalid_utf8, then one holding NUL with "
        "nul_byte, then, when the descriptor does not declare system_prompt.append, any "
        "non-empty one (whitespace only included) with unsupported_driver; each refusal "
        "names the driver and comes before anything reaches the sink. A declared append is "
        "accepted and the run succeeds, streaming and not, with the text in no user "
        "transcript item, run event or stream payload; at 32,768 UTF-8 bytes it is not "
        "refused as inline_limit, and a refusal of 32,769 bytes is inline_limit or "
        "command_line_limit. A refusal with conflicting_extra_args (the suite's config "
        "already sets a system prompt) skips SYS-01 to SYS-03, once it came before anything "
        "reached the sink.",
        L,
        "system_prompt",
        extension=True,
    ),
    _c(
        "SYS-02",
        "the appended text reaches the model as system text",
        "With a declared append and Options(model_requests=...), the appended text (several "
        "lines, non-ASCII, not in a Unicode normal form) appears byte for byte in the system "
        "text of at least one model request of the streaming run and of the batch run, and "
        "in the user text of none.",
        L,
        "system_prompt",
        extension=True,
    ),
    _c(
        "SYS-03",
        "the append is part of the session",
        "A valid checkpoint of a run with a declared append carries the hex SHA-256 of the "
        "append's UTF-8 bytes in its state data under append_system_prompt_fingerprint, "
        "and resuming it with a different append is refused before anything reaches the "
        "sink.",
        L,
        "system_prompt",
        extension=True,
    ),
    # --- HIL: Python extension clauses (human decisions, judged live) -----------------
    _c(
        "HIL-01",
        "a decision reaches the host as asked",
        "Under a policy that asks, an action that needs a decision (a tool that needs "
        "permission, a question) reaches the sink's request_decision as exactly one "
        "DecisionRequest of that kind.",
        L,
        "hitl",
        extension=True,
    ),
    _c(
        "HIL-02",
        "hitl payloads pair up with the decisions",
        "With stream_capability().hitl, each decision is announced by one hitl.requested "
        "before the sink is asked and closed by one hitl.resolved after the call ends (a "
        "wait the run's cancellation ends may stay open), both naming its non-empty "
        "request_id and kind; hitl.resolved says the sink's answer, timed_out when none came; "
        "no hitl payload names another id.",
        L,
        "hitl",
        extension=True,
    ),
    _c(
        "HIL-03",
        "approved: the action happens and the run goes on",
        "When the host approves a permission decision, the action happens (the tool runs and "
        "its output reaches the model) and the run succeeds.",
        L,
        "hitl",
        extension=True,
    ),
    _c(
        "HIL-04",
        "rejected: no action, then what on_reject says",
        "When the host rejects a permission decision, the action does not happen; with "
        "on_reject abort (the default) the run fails with decision_rejected and a "
        "failure.human_decision of that kind saying rejected; with continue the run succeeds.",
        L,
        "hitl",
        extension=True,
    ),
    _c(
        "HIL-05",
        "unanswered: the policy's deadline, then what on_timeout says",
        "A decision nobody answers stops waiting at the policy's timeout (not before, and "
        "within the grace after it; never the run's deadline), the sink's call ended and no "
        "process the run started left running; the action does not happen; with on_timeout "
        "abort (the default) the run fails with decision_timeout and a "
        "failure.human_decision saying timed_out; with continue it succeeds.",
        L,
        "hitl",
        extension=True,
    ),
    _c(
        "HIL-06",
        "auto policies never reach the host",
        "Under permission auto_approve or auto_reject (where declared) no decision reaches the "
        "sink; auto_approve runs the action and the run succeeds, auto_reject does not run it "
        "and the run fails with decision_rejected and a human_decision saying rejected.",
        L,
        "hitl",
        extension=True,
    ),
    _c(
        "HIL-07",
        "a question's answer reaches the model",
        "Under question ask, the host's answer text to a question decision reaches the model "
        "in a later request, and the run succeeds.",
        L,
        "hitl",
        extension=True,
    ),
    _c(
        "HIL-08",
        "a pending decision ends with a cancelled run",
        "When the run is cancelled while a decision waits at the sink, run() ends within the "
        "grace, no request_decision call is still waiting once it has, nothing is asked or "
        "emitted after it returned, no process the run started is left running, and the "
        "action does not happen.",
        L,
        "hitl",
        extension=True,
    ),
    _c(
        "HIL-09",
        "only declared kinds reach the host",
        "request_decision is called only for a kind whose ask mode run_policy_caps declares: "
        "a driver that declares none never calls it, even with a decision-capable sink and a "
        "policy left at its defaults.",
        L,
        "hitl",
        extension=True,
    ),
    # --- Scenario clauses (Python extension): the suite drives the model -------------
    # Each runs scenarios of adaptertest/scenarios/ against the model-API emulator
    # through Options(model_binding=...); see docs/scenarios.md.
    _c(
        "TOL-01",
        "a tool runs for real in the workspace",
        "When the model calls the agent's shell tool, the command runs in the run's "
        "workspace (the file it writes is there), its output reaches the model in the next "
        "request, the transcript pairs the call with its result, and the run succeeds with "
        "the model's final answer.",
        SC,
        "scenario_tools",
        extension=True,
    ),
    _c(
        "TOL-02",
        "a failing tool is reported, not fatal",
        "When the command the model asked for fails (exits non-zero), its result reaches "
        "the model in the next request, the transcript pairs the call with a result marked "
        "is_error, and the run goes on to succeed with the final answer.",
        SC,
        "scenario_tools",
        extension=True,
    ),
    _c(
        "TOL-03",
        "two tool calls in one turn stay paired",
        "Two shell calls in one model turn give two tool_call and two tool_result items "
        "with distinct ids that pair one to one, both results reach the model in the next "
        "request, and the stream's tool-call ids are the transcript's.",
        SC,
        "scenario_tools",
        extension=True,
    ),
    _c(
        "RSN-01",
        "thinking shows as reasoning only where declared",
        "A model answer with a thinking block and text gives reasoning (a thinking item or "
        "reasoning payloads carrying the thinking) when the stream capability declares "
        "reasoning and none otherwise, and the thinking never shows up in the output or an "
        "assistant item.",
        SC,
        "scenario_reasoning",
        extension=True,
    ),
    _c(
        "RES-01",
        "a live resume continues the session",
        "A second run from the first run's checkpoint, its state passed through the "
        "driver's codec as JSON into a new driver instance, succeeds, sends the model the "
        "first exchange, and reports the second run's usage alone.",
        SC,
        "scenario_resume",
        extension=True,
    ),
    _c(
        "RES-02",
        "a resume survives a host restart",
        "The same resume run from a new Python process (the binding rebuilt by "
        "ModelBinding(ref=...), the state decoded from JSON there) succeeds and sends the "
        "model the first exchange.",
        SC,
        "scenario_resume",
        extension=True,
    ),
    _c(
        "RES-03",
        "a mismatched guard is refused before launch",
        "Resuming the checkpoint under another profile (its session fingerprint changed) "
        "raises before anything starts: no model request, nothing reaches the sink.",
        SC,
        "scenario_resume",
        extension=True,
    ),
    _c(
        "FLT-01",
        "transient model faults are retried or named",
        "A burst of 429s with retry-after, an overloaded 529 and a 503, each followed by "
        "success: the run succeeds after the retries, or fails cleanly with a message that "
        "names the status.",
        SC,
        "scenario_faults",
        extension=True,
    ),
    _c(
        "FLT-02",
        "persistent model faults fail cleanly",
        "A model that keeps answering 500, 401 or 400 (prompt too long), or cuts its stream "
        "every time: a failed Response with code agent_error whose message names the status "
        "or the cut and is no protocol dump, no valid checkpoint, nothing emitted after "
        "run() returns.",
        SC,
        "scenario_faults",
        extension=True,
    ),
    _c(
        "DLN-01",
        "a model that never answers times out",
        "When the model never answers, run() returns a Response with timed_out=True within "
        "the endpoint's deadline plus the binding's grace.",
        SC,
        "scenario_deadline",
        extension=True,
    ),
    _c(
        "DLN-02",
        "cancellation while waiting on the model is prompt",
        "Cancelling the run while the agent waits on the model ends run() within the "
        "binding's grace, the cancellation propagating.",
        SC,
        "scenario_deadline",
        extension=True,
    ),
    _c(
        "INP-01",
        "a prompt of 1 MiB reaches the model intact",
        "A prompt of at least 1 MiB reaches the model byte for byte (through standard input "
        "or a file where argv cannot carry it) and the run succeeds.",
        SC,
        "scenario_input",
        extension=True,
    ),
    _c(
        "INP-02",
        "awkward prompts reach the model intact",
        "A prompt that begins with '-', and one with newlines, quotes, backslashes and "
        "non-ASCII text, each reach the model byte for byte and the run succeeds.",
        SC,
        "scenario_input",
        extension=True,
    ),
    _c(
        "INP-03",
        "a prompt with a NUL byte is refused before launch",
        "A prompt holding a NUL byte is refused before anything starts: run() raises or "
        "returns a failure whose message names the NUL byte, and no model request is made.",
        SC,
        "scenario_input",
        extension=True,
    ),
    _c(
        "OUT-01",
        "a large answer arrives exact",
        "An answer of at least 1 MB streamed in many deltas is the run's output exactly, and "
        "the text deltas of the stream, joined, are that answer.",
        SC,
        "scenario_output",
        extension=True,
    ),
    _c(
        "PRC-01",
        "nothing a scenario started outlives it",
        "After every scenario run, no process carrying the scenario's marker (the "
        "endpoint's environment) is still running, descendants that left the CLI's process "
        "group included.",
        SC,
        *SCENARIO_PROBES,
        extension=True,
    ),
)

CLAUSE_BY_ID: dict[str, Clause] = {c.id: c for c in CLAUSES}
UPSTREAM_CLAUSES: tuple[Clause, ...] = tuple(c for c in CLAUSES if not c.extension)
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(c.family for c in CLAUSES))

PROBES: tuple[str, ...] = (
    "descriptor",
    "config",
    "capability_declarations",
    "environment",
    "models",
    "detect_model",
    "profile",
    "quota",
    "config_schema",
    "skills",
    "stream_capability",
    "session_codec",
    "live_run",
    "live_structured_output",
    "concurrent_runs",
    "drift",
    "fresh_process",
    "system_prompt",
    "hitl",
    *SCENARIO_PROBES,
)
"""Every probe, in the order the suite runs them."""


def clause_ids(names: Iterable[str]) -> list[str]:
    """The clause IDs ``names`` asks for: each a clause ID (``"SES-04"``) or a family
    (``"SES"``, all its clauses), in any case; in the order given, each once.

    One rule for every front end (``check_driver(only=...)``, ``--clause``). Raises
    ``TypeError`` for a name that is not a ``str`` and ``ValueError`` for one that is
    neither a clause nor a family, so a typo fails before anything runs.
    """
    wanted: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(
                f"clause names are str (a clause ID or a family), got {type(name).__qualname__}"
            )
        token = name.strip().upper()
        if token in CLAUSE_BY_ID:
            wanted.append(token)
        elif token in FAMILIES:
            wanted.extend(c.id for c in CLAUSES if c.family == token)
        else:
            raise ValueError(
                f"unknown clause or family {name!r}: families are {', '.join(FAMILIES)} "
                "(list the clauses: adaptertest clauses)"
            )
    return list(dict.fromkeys(wanted))
