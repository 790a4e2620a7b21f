"""Runs of the real oMLX server (``tests/fixtures/real-omlx``) and what their truth asks of the tool.

``tools/real-omlx`` recorded each run: oMLX's own code serving real HTTP traffic, stopped by signals,
with GPU faults injected at ``mlx.core.synchronize``. Beside each log lies a truth JSON written by the
driver and the fault shim (UTC times; ``tz`` is the zone the log was written in). Every ``*_problems``
function here compares one aspect of the tool's reading of one log with that truth and returns the
differences, in words; an empty list is a match. Where the log's level cannot show what the truth
knows, the function asks for what the tool must say instead (unknown, or a bound).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from conftest import FIXTURES, stream_of
from omlx_logscan.analysis.attribution import Attribution, explain
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.analysis.results import INCIDENT_GAP_S, Analysis, DeadWindow, Incident, Session
from omlx_logscan.analysis.signatures import cache_clear_call

RUNS = FIXTURES / "real-omlx"
VARIANTS = ("server", "console")  # oMLX's file log, and the console capture of the same processes
# Both read together, in either order: the same processes, so the same reading as either alone.
PAIRS = ("server+console", "console+server")
# oMLX's log folder as a user hands it over: server.log and crash.log (faulthandler's, where oMLX
# wrote one), and that folder with the capture beside them as Homebrew names it (omlx.log).
FOLDERS = {"folder": ("server", "crash"), "folder+capture": ("server", "crash", "console")}
FOLDER_NAMES = {"server": "server.log", "crash": "crash.log", "console": "omlx.log"}
ORDERLY = frozenset({"sigint", "sigterm"})
# A log line is stamped by the same clock as the truth, to the millisecond, a little after the act.
LATE = timedelta(milliseconds=500)
EARLY = timedelta(milliseconds=50)
WEDGE_AFTER_S = 60.0  # the recorded wedges last about 2.5 min; nothing else is that silent
# The shim's name of a clear -> the tool's trigger for it (issue 28 item 4 names the decode clear).
TRIGGERS = {"deferred": "deferred", "periodic": "periodic", "tokens1024": "decode_interval", "pressure": "pressure"}
# Streamed Anthropic answers get a finish line from oMLX 0.5.7 on (server.py of 0.5.3 logs only the
# non-streamed one): before that, a log cannot count them.
ANTHROPIC_STREAM_LOGGED_FROM = (0, 5, 7)
# A penalty-box fault's records: the Timeout, then the driver's SubmissionsIgnored.
CODES = {"absorbed": {"Timeout"}, "penalty_box": {"Timeout", "SubmissionsIgnored"}}


@dataclass(frozen=True)
class Case:
    """The logs of one run read at once: ``run`` is ``<scenario>@<version>``, ``variant`` one of
    ``VARIANTS`` (one file), ``PAIRS`` (both files, in that order) or ``FOLDERS`` (a log folder)."""

    run: str
    variant: str

    @property
    def id(self) -> str:
        return f"{self.run}/{self.variant}"

    @property
    def arguments(self) -> list[str]:
        """What the user hands the tool: the files, or the folder."""
        if self.variant in FOLDERS:
            return [str(folder_of(self.run, FOLDERS[self.variant]))]
        return [str(file_of(self.run, part)) for part in self.variant.split("+")]

    @property
    def files(self) -> list[Path]:
        """Every file the tool reads."""
        if self.variant in FOLDERS:
            return sorted(folder_of(self.run, FOLDERS[self.variant]).iterdir())
        return [Path(argument) for argument in self.arguments]

    @property
    def truth(self) -> dict[str, Any]:
        return truth_of(self.run)

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.truth["tz"])

    @property
    def shows_info(self) -> bool:
        """INFO lines (starts, stops, finished requests) are in the log."""
        return bool(self.truth["log_level"] in ("info", "debug"))

    @property
    def shows_starts(self) -> bool:
        """A process's start lines are in the log: INFO lines, or the banner a console prints at any level."""
        return self.shows_info or "console" in self.variant or self.variant == "folder+capture"

    def local(self, utc: str) -> datetime:
        """A truth time as the log writes it: wall time in the run's zone."""
        return datetime.fromisoformat(utc).astimezone(self.zone).replace(tzinfo=None)


def runs() -> list[str]:
    return sorted(p.name.removesuffix(".truth.json") for p in RUNS.glob("*.truth.json"))


def cases() -> list[Case]:
    return [Case(run, variant) for run in runs() for variant in VARIANTS]


def together() -> list[Case]:
    """Each run's logs read together: both files in either order, and its log folder (with crash.log
    only where oMLX wrote one: without, the folder is server.log alone, read as it is above)."""
    found = [Case(run, variant) for run in runs() for variant in (*PAIRS, "folder+capture")]
    return found + [Case(run, "folder") for run in runs() if file_of(run, "crash").is_file()]


def file_of(run: str, part: str) -> Path:
    return RUNS / f"{run}.{part}.log"


@cache
def folder_of(run: str, parts: tuple[str, ...]) -> Path:
    """A log folder of the run's ``parts`` (those it has) under oMLX's and Homebrew's names, made once."""
    folder = Path(tempfile.mkdtemp(prefix=f"{run}-")) / "logs"
    folder.mkdir()
    for part in parts:
        if file_of(run, part).is_file():
            shutil.copyfile(file_of(run, part), folder / FOLDER_NAMES[part])
    return folder


@cache
def truth_of(run: str) -> dict[str, Any]:
    return json.loads((RUNS / f"{run}.truth.json").read_text())  # type: ignore[no-any-return]


@dataclass
class Reading:
    """What the tool makes of one log: the analysis, and why each fault happened."""

    analysis: Analysis
    attributions: list[Attribution]


@cache
def reading(case: Case) -> Reading:
    analysis = analyze(stream_of(*case.arguments), wedge_after_s=WEDGE_AFTER_S)
    return Reading(analysis, explain(analysis).attributions)


def at(stamp: str | None) -> datetime | None:
    return datetime.fromisoformat(stamp) if stamp else None


def version_of(run: str) -> tuple[int, ...]:
    """``0.6.3rc2`` -> (0, 6, 3): the release a run's version belongs to."""
    return tuple(int(re.match(r"\d*", part)[0] or 0) for part in run.split("@")[1].split(".")[:3])  # type: ignore[index]


def within(when: datetime | None, low: datetime, high: datetime, what: str) -> list[str]:
    if when is None:
        return [f"{what}: no time, truth between {low} and {high}"]
    if not low <= when <= high:
        return [f"{what}: {when}, truth between {low} and {high}"]
    return []


# -- truth, derived ---------------------------------------------------------------------------------


def processes(case: Case) -> list[dict[str, Any]]:
    return case.truth["sessions"]  # type: ignore[no-any-return]


def stop_of(process: dict[str, Any]) -> dict[str, Any]:
    return process["stop"] or {}


def followed(case: Case, process: dict[str, Any]) -> bool:
    return bool(process["index"] < len(processes(case)))


def stalled(case: Case, process: dict[str, Any]) -> bool:
    """The process was in a penalty box or wedged when it was stopped."""
    index = process["index"]
    return bool(process.get("penalty_box_from_utc")) or any(w["session"] == index for w in wedges(case))


def wedges(case: Case) -> list[dict[str, Any]]:
    return case.truth.get("wedges", [])  # type: ignore[no-any-return]


def killed_healthy(case: Case) -> list[dict[str, Any]]:
    """Processes a SIGKILL ended while they served, with a later process in the log to show it: a log
    that shows INFO lines proves each ended without its orderly stop (a crash)."""
    return [
        p
        for p in processes(case)
        if stop_of(p).get("how") == "sigkill" and followed(case, p) and not stalled(case, p) and case.shows_info
    ]


def answered(case: Case, index: int) -> list[dict[str, Any]]:
    """The requests of one process that got their whole answer."""
    return [q for q in case.truth["requests"] if q["session"] == index and q["outcome"] == "ok"]


def last_answer(case: Case, index: int, otherwise: str) -> datetime:
    """When a process last finished an answer (``otherwise``, a UTC time, when it never did)."""
    return case.local(max((q["done_utc"] for q in answered(case, index)), default=otherwise))


def finished_requests(case: Case, index: int) -> int:
    """The requests of one process the log can show as finished: the ones that were answered whole,
    of the kinds its version writes a finish line for."""
    logged = version_of(case.run) >= ANTHROPIC_STREAM_LOGGED_FROM
    return len([q for q in answered(case, index) if q["kind"] != "anthropic_stream" or logged])


def shim_stack(case: Case, label: str) -> list[str]:
    """Where the shim raised a fault: ``file:line:function`` frames, innermost first."""
    record = next(r for r in case.truth["shim_records"] if r.get("label") == label and r.get("seq") is not None)
    return record["stack"]  # type: ignore[no-any-return]


def failed_while_dead(case: Case, window: dict[str, Any]) -> int:
    """Failures a dead window repeats: the requests that reached the engine after it died (each fails
    again), less those within the tool's two seconds of the entry (one fault with it), plus the
    engine's own failure in the orderly stop when the shim raised there."""
    start = datetime.fromisoformat(window["start_utc"])
    process = processes(case)[window["session"] - 1]
    sent = [
        datetime.fromisoformat(q["sent_utc"])
        for q in case.truth["requests"]
        if q["session"] == window["session"]
        and not q["kind"].startswith("bad_")
        and q["sent_utc"] >= window["start_utc"]
    ]
    later = [t for t in sent if (t - start).total_seconds() >= INCIDENT_GAP_S]
    signal = stop_of(process).get("signal_utc")
    raised_in_stop = signal is not None and any(
        r["kind"] == "submissions_ignored" and r["pid"] == process["pid"] and r["utc"] >= signal
        for r in case.truth["shim_records"]
    )
    return len(later) + raised_in_stop


# -- aspects ----------------------------------------------------------------------------------------


def session_problems(case: Case) -> list[str]:
    """One session per process, each starting and ending inside it, ended as the truth says."""
    truth, found = processes(case), reading(case).analysis.sessions
    if len(found) != len(truth):
        listed = ", ".join(f"{s.index}: {s.start} -> {s.end} {s.end_reason}" for s in found)
        return [f"{len(found)} sessions for {len(truth)} processes ({listed})"]
    problems: list[str] = []
    for process, session in zip(truth, found, strict=True):
        problems += _start_problems(case, process, session) + _end_problems(case, process, session)
    return problems


def _start_problems(case: Case, process: dict[str, Any], session: Session) -> list[str]:
    what = f"session {session.index} start"
    began, ready = case.local(process["start_utc"]), case.local(process.get("ready_utc") or process["start_utc"])
    exited = case.local(stop_of(process)["exited_utc"])
    if case.shows_info and not session.start_exact:
        return [f"{what}: not exact, though the log shows the process start"]
    if session.start_exact:  # the start lines are written between the exec and the first answer
        return within(at(session.start), began - EARLY, ready + LATE, what)
    return within(at(session.start), began - EARLY, exited + LATE, what + " (the first line seen)")


def _end_problems(case: Case, process: dict[str, Any], session: Session) -> list[str]:
    what = f"session {session.index} end"
    stop = stop_of(process)
    signal, exited = case.local(stop["signal_utc"]), case.local(stop["exited_utc"])
    if stop["how"] in ORDERLY:
        if session.end_reason == "shutdown":
            return within(at(session.end), signal - EARLY, exited + LATE, what)
        if case.shows_info:
            return [f"{what}: {session.end_reason}, truth an orderly stop ({stop['how']}) the log shows"]
        allowed = "restart" if followed(case, process) else "eof"
    else:
        allowed = (
            ("restart" if stalled(case, process) or not case.shows_info else "crash")
            if followed(case, process)
            else "eof"
        )
    if session.end_reason != allowed:
        return [f"{what}: {session.end_reason}, truth {stop['how']}: the tool must say {allowed}"]
    low = last_answer(case, process["index"], process["start_utc"]) - LATE
    return within(at(session.end), low, exited + LATE, what + " (its last line)")


def fault_pairs(case: Case) -> Iterator[tuple[dict[str, Any], Incident | None, Attribution | None]]:
    """Each injected fault with the tool's fault nearest in time (within the stamping delay)."""
    found = reading(case)
    taken: set[int] = set()
    for fault in case.truth["faults"]:
        when = case.local(fault["time_utc"])
        near = [
            (abs(t - when), i)
            for i, incident in enumerate(found.analysis.faults)
            if i not in taken and (t := at(incident.time)) is not None and when - EARLY <= t <= when + LATE
        ]
        if not near:
            yield fault, None, None
            continue
        index = min(near)[1]
        taken.add(index)
        yield fault, found.analysis.faults[index], found.attributions[index]


def fault_problems(case: Case) -> list[str]:
    """Every injected fault found once, with its codes, outcome and call site; no other fault."""
    problems: list[str] = []
    matched = 0
    for fault, incident, attribution in fault_pairs(case):
        label = fault["label"]
        if incident is None or attribution is None:
            problems.append(f"{label} at {case.local(fault['time_utc'])}: not found")
            continue
        matched += 1
        if incident.code_names[:1] != ["Timeout"] or set(incident.code_names) != CODES[fault["expected_outcome"]]:
            problems.append(f"{label}: codes {incident.code_names}, truth {fault['expected_outcome']}")
        if incident.outcome != fault["expected_outcome"]:
            problems.append(f"{label}: {incident.outcome}, truth {fault['expected_outcome']}")
        problems += _call_site_problems(case, label, attribution)
    extra = len(reading(case).analysis.faults) - matched
    if extra:
        problems.append(f"{extra} faults the truth does not have")
    return problems


def _call_site_problems(case: Case, label: str, attribution: Attribution) -> list[str]:
    raised, caller = (frame.split(":") for frame in shim_stack(case, label)[:2])
    if attribution.call_site != "cache_clear" or attribution.signature is None:
        return [f"{label}: call site {attribution.call_site}, truth {raised[2]} (a cache clear)"]
    where = cache_clear_call(attribution.signature.frames)
    want = (f"{Path(raised[0]).stem}.{raised[2]}", f"{Path(caller[0]).stem}.{caller[2]}")
    got = tuple(".".join(name.split(".")[-2:]) for name in where) if where and where[1] else where
    return [] if got == want else [f"{label}: the clear {got}, truth {want}"]


def trigger_problems(case: Case) -> list[str]:
    """The clear each fault hit, named where the log level shows what asked for it; "unknown", with
    what the level hid, where it does not."""
    problems: list[str] = []
    for fault, _incident, attribution in fault_pairs(case):
        if attribution is None:
            continue  # fault_problems reports it
        named = TRIGGERS[fault["trigger"]]
        # The decode-interval clear is told by its stack, an ERROR record every level shows.
        shown = case.shows_info or named == "decode_interval"
        want = named if shown else "unknown"
        if attribution.trigger != want:
            problems.append(
                f"{fault['label']}: {attribution.trigger}, truth {fault['trigger']} (the tool must say {want})"
            )
        if not shown and attribution.hidden is None:
            problems.append(f"{fault['label']}: does not say the log level hid the trigger")
    return problems


def dead_window_problems(case: Case) -> list[str]:
    """One window per penalty box, from the fault to the end of its process, ended as the process
    ended (or bounded by the next start when the stop cannot be seen), with its repeated failures."""
    truth, found = case.truth["dead_windows"], reading(case).analysis.dead_windows
    if len(found) != len(truth):
        return [f"{len(found)} dead windows, truth {len(truth)}"]
    problems: list[str] = []
    for window, dead in zip(truth, found, strict=True):
        what = f"window of session {window['session']}"
        start = case.local(window["start_utc"])
        problems += within(at(dead.start), start - EARLY, start + LATE, what + " start")
        problems += _window_end_problems(case, window, dead, what)
        repeats = failed_while_dead(case, window)
        if dead.repeats != repeats:
            problems.append(f"{what}: {dead.repeats} repeats, truth {repeats} failures after the entry")
        if dead.requests_completed != (0 if case.shows_info else None):
            problems.append(f"{what}: {dead.requests_completed} requests completed")
    return problems


def _window_end_problems(case: Case, window: dict[str, Any], dead: DeadWindow, what: str) -> list[str]:
    process = processes(case)[window["session"] - 1]
    stop = stop_of(process)
    signal, exited = case.local(stop["signal_utc"]), case.local(stop["exited_utc"])
    if dead.end_reason == "shutdown" and window["end_how"] in ORDERLY:
        return within(at(dead.end), signal - EARLY, exited + LATE, what + " end")
    if window["end_how"] in ORDERLY and case.shows_info:
        return [
            f"{what}: ends {dead.end_reason} at {dead.end}, truth an orderly stop ({window['end_how']}) the log shows"
        ]
    allowed = "restart" if followed(case, process) else "eof"
    if dead.end_reason != allowed:
        return [f"{what}: ends {dead.end_reason}, truth {window['end_how']}: the tool must say {allowed}"]
    if allowed == "eof":
        return []
    if not case.shows_starts:  # the kill and the next start unseen: the tool must bound the end
        return _bounded_end_problems(dead, exited, what)
    # Ended by the next process: at its start, after this one was killed.
    following = processes(case)[process["index"]]
    ready = case.local(following.get("ready_utc") or following["start_utc"])
    return within(at(dead.end), exited - EARLY, ready + LATE, what + " end (the next start)")


def _bounded_end_problems(dead: DeadWindow, exited: datetime, what: str) -> list[str]:
    """A window whose end the log level hides: the tool must say so (an inexact end) and bound it,
    after its last line the dead process alone can have written and by the next process's first."""
    low, high = at(dead.end_after), at(dead.end)
    if dead.end_exact or low is None or high is None:
        return [f"{what} end: {dead.end} stated as seen (after {dead.end_after}), though the level hides it"]
    return within(exited, low - EARLY, high + LATE, f"{what} end (the truth, within the bounds the tool states)")


def wedge_problems(case: Case) -> list[str]:
    """A wedge (the shim's hang: no error) is an outage from the hang while requests go on arriving:
    proven at DEBUG, possible at INFO, unseen above; no wedge where the truth has none."""
    found = reading(case).analysis.outages.of_kind("wedge")
    truth = wedges(case)
    level = case.truth["log_level"]
    want = len(truth) if level in ("info", "debug") else 0
    if len(found) != want:
        return [f"{len(found)} wedges, truth {len(truth)} at {level.upper()}"]
    problems: list[str] = []
    for wedge, outage in zip(truth, found, strict=False):
        if outage.certain != (level == "debug"):
            problems.append(f"wedge of session {wedge['session']}: certain={outage.certain} at {level.upper()}")
        # A wedge starts after the last request that finished: at or before the hang.
        low = last_answer(case, wedge["session"], wedge["start_utc"]) - LATE
        problems += within(at(outage.start), low, case.local(wedge["start_utc"]) + LATE, "wedge start")
        if outage.unfinished_requests is not None and outage.unfinished_requests != wedge["requests_sent_while_wedged"]:
            problems.append(
                f"wedge: {outage.unfinished_requests} unfinished requests, truth {wedge['requests_sent_while_wedged']}"
            )
    return problems


def request_problems(case: Case) -> list[str]:
    """The finished requests of each process, as many as the log can show; unknown where the level
    hides them."""
    found = reading(case).analysis.sessions
    if not case.shows_info:
        shown = [s.requests_completed for s in found if s.requests_completed is not None]
        return [f"finished requests {shown} at a level that hides them"] if shown else []
    problems: list[str] = []
    for process in processes(case):
        began = case.local(process["start_utc"]) - EARLY
        exited = case.local(stop_of(process)["exited_utc"]) + LATE
        inside = [s for s in found if (t := at(s.start)) is not None and began <= t <= exited]
        counted = sum(s.requests_completed or 0 for s in inside)
        want = finished_requests(case, process["index"])
        if counted != want:
            problems.append(f"process {process['index']}: {counted} finished requests, truth {want}")
    return problems


def unparsed_problems(case: Case) -> list[str]:
    """Every line of real oMLX output is read: none unparsed, none lost."""
    accounting = reading(case).analysis.stream.accounting
    lines = sum(len(path.read_bytes().splitlines()) for path in case.files)
    problems = [] if accounting.unparsed == 0 else [f"{accounting.unparsed} unparsed lines"]
    if not accounting.lines == accounting.accounted == lines:
        problems.append(f"{lines} lines, read {accounting.lines}, accounted {accounting.accounted}")
    return problems


# -- check ------------------------------------------------------------------------------------------

CHECK_RULES = "penalty_box,dead_engine,crash,wedge"


def check_arguments(case: Case) -> list[str]:
    return [
        "check",
        *case.arguments,
        "--tz",
        case.truth["tz"],
        "--fail-on",
        CHECK_RULES,
        "--wedge-after",
        f"{int(WEDGE_AFTER_S)}s",
        "--format",
        "json",
        "--quiet",
    ]


def expected_findings(case: Case) -> list[tuple[str, datetime, datetime]]:
    """The findings the truth calls for, each as (rule, earliest, latest) UTC time."""
    utc = datetime.fromisoformat
    found = [
        ("penalty_box", utc(f["time_utc"]) - EARLY, utc(f["time_utc"]) + LATE)
        for f in case.truth["faults"]
        if f["expected_outcome"] == "penalty_box"
    ]
    found += [
        ("dead_engine", utc(w["start_utc"]) - EARLY, utc(w["start_utc"]) + LATE) for w in case.truth["dead_windows"]
    ]
    for p in killed_healthy(case):  # its last line: after it last answered, before the kill
        low = last_answer(case, p["index"], p["start_utc"]).replace(tzinfo=case.zone).astimezone(UTC) - LATE
        found.append(("crash", low, utc(stop_of(p)["signal_utc"]) + LATE))
    if case.truth["log_level"] == "debug":  # a wedge is proven only where arrivals are logged
        found += [
            ("wedge", utc(w["start_utc"]) - timedelta(minutes=1), utc(w["start_utc"]) + LATE) for w in wedges(case)
        ]
    return sorted(found)


def check_problems(case: Case, exit_code: int, document: dict[str, Any]) -> list[str]:
    """``check``'s exit code and findings against the truth's faults, dead windows, crashes, wedges."""
    want = expected_findings(case)
    got = sorted((f["rule"], datetime.fromisoformat(f["time"])) for f in document["findings"])
    problems = [] if exit_code == (1 if want else 0) else [f"exit code {exit_code}, truth {1 if want else 0}"]
    unmatched = list(got)
    for rule, low, high in want:
        hit = next((g for g in unmatched if g[0] == rule and low <= g[1] <= high), None)
        if hit is None:
            problems.append(f"no {rule} finding between {low} and {high}")
        else:
            unmatched.remove(hit)
    problems += [f"{rule} finding at {when}: the truth has none" for rule, when in unmatched]
    return problems
