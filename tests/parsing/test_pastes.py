"""Pastes that begin mid-record and time-only pastes (issue 14): the rules the spec cases do not name."""

from __future__ import annotations

from pathlib import Path

from omlx_logscan import analyze, read_events, resolve
from omlx_logscan.stream.event_stream import EventStream

CODE = "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)"


def _stream(tmp_path: Path, text: str) -> EventStream:
    log = tmp_path / "paste.log"
    log.write_text(text, encoding="utf-8")
    return read_events(resolve([str(log)]), keep_all=True)


def test_a_chained_traceback_stays_one_record(tmp_path: Path) -> None:
    text = (
        "2026-09-15 20:19:38,123 - omlx.engine_core - ERROR - [-] - Engine loop error: boom\n"
        "Traceback (most recent call last):\n"
        '  File "/x/a.py", line 1, in f\n'
        "ValueError: x\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/x/b.py", line 2, in g\n'
        "RuntimeError: boom\n"
    )
    stream = _stream(tmp_path, text)
    assert [(e.line, e.kind) for e in stream.events] == [(1, "error")]
    assert [f["func"] for f in stream.events[0].fields["traceback"]] == ["f", "g"]


def test_a_cut_tail_before_a_record_is_a_record_but_a_note_is_not(tmp_path: Path) -> None:
    dated = "2026-09-15 20:19:38,123 - omlx.x - INFO - [-] - next\n"
    tail = _stream(tmp_path, "value=3, more)\n" + dated)
    assert tail.accounting.unparsed == 0 and tail.events[0].line == 1
    (tmp_path / "b").mkdir()
    note = _stream(tmp_path / "b", "my own words\n" + dated)
    assert note.accounting.unparsed == 1


def test_time_only_faults_group_by_their_time_of_day(tmp_path: Path) -> None:
    text = "".join(
        f"{hms}  Engine loop error: [METAL] Command buffer execution failed: Caused GPU Timeout Error {CODE}\n"
        for hms in ("10:00:00.000", "10:00:01.000", "10:05:00.000")
    )
    log = tmp_path / "paste.log"
    log.write_text(text, encoding="utf-8")
    analysis = analyze(read_events(resolve([str(log)])))
    assert [len(f.records) for f in analysis.faults] == [2, 1]


def test_a_crash_report_pasted_in_parts_leaves_no_line_unparsed(tmp_path: Path) -> None:
    """Its JSON body pasted before the translated header, and the rules of dashes around it, are all
    report text: one crash report, its JSON a record of its own, nothing unparsed."""
    log = tmp_path / "paste.log"
    log.write_text(
        '  "wakeTime" : 9442,\n'
        '  "sip" : "enabled",\n'
        "\n"
        "-------------------------------------\n"
        "Translated Report (Full Report Below)\n"
        "-------------------------------------\n"
        "Process:             Python [35683]\n"
        "Exception Type:    EXC_CRASH (SIGABRT)\n"
    )
    stream = read_events(resolve([str(log)]))
    assert [event.kind for event in stream.events] == ["crash_report"]
    assert stream.accounting.unparsed == 0
    assert stream.accounting.lines == stream.accounting.accounted == 8


def test_a_crash_report_pasted_from_its_header_is_one_crash_report(tmp_path: Path) -> None:
    """A paste that begins at the report's first header field (``Process:``, its name and pid) is the
    report, its ``Date/Time:`` among its fields; a ``Process:`` line without a pid is no header."""
    fields = [
        ("Process", "Python [4242]"),
        ("Coalition", "homebrew.mxcl.omlx [901]"),
        ("Date/Time", "2026-09-15 20:19:38.1234 +0100"),
        ("Exception Type", "EXC_CRASH (SIGABRT)"),
        ("Termination Reason", "Namespace SIGNAL, Code 6, Abort trap: 6"),
    ]
    stream = _stream(tmp_path, "".join(f"{name + ':':<22}{value}\n" for name, value in fields))
    assert [(event.line, event.kind) for event in stream.events] == [(1, "crash_report")]
    assert stream.events[0].fields["exception_type"] == "EXC_CRASH (SIGABRT)" and stream.accounting.unparsed == 0
    (tmp_path / "note").mkdir()
    note = _stream(tmp_path / "note", "Process: the model loads, then it stops\n")
    assert not note.events and note.accounting.unparsed == 1
