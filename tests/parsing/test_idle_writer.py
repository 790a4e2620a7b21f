"""A pipe's writer that goes idle: the open record is complete (a logger writes each record whole)."""

from __future__ import annotations

from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.parsing.records import Assembler

HEAD = "2026-09-15 20:19:38,663 - omlx.engine_core - ERROR - Engine loop error: [METAL] failed"
TRACEBACK = ["Traceback (most recent call last):", '  File "omlx/scheduler.py", line 1, in step', "RuntimeError: x"]


def _feed(assembler: Assembler, first: int, texts: list[str]) -> None:
    assembler.feed(KeptLine(first + n, text) for n, text in enumerate(texts))


def test_the_open_record_is_final_once_the_writer_is_idle() -> None:
    assembler = Assembler()
    _feed(assembler, 1, [HEAD, *TRACEBACK])
    assert assembler.take_final() == []  # its traceback could go on
    assembler.pause()
    (record,) = assembler.take_final()
    assert record.lines == 4 and record.stamp == "2026-09-15T20:19:38.663"
    _feed(assembler, 5, ['  File "omlx/late.py", line 2, in f'])  # a line after the pause joins no closed record
    (late,) = assembler.take_final(everything=True)
    assert (late.line, late.lines, late.prev_stamp) == (5, 1, record.stamp) and record.lines == 4


def test_an_untimed_record_waiting_for_its_next_time_keeps_the_record_open() -> None:
    assembler = Assembler()
    _feed(assembler, 1, [HEAD, "", *TRACEBACK])  # a bare traceback after a blank line: a record of its own
    assert len(assembler.take_final()) == 1  # the fault's record; the traceback's waits for the next dated line
    assembler.pause()
    assert assembler.take_final() == []  # its place (between two times) is not known yet
    _feed(assembler, 6, ["  more of it"])
    (untimed,) = assembler.take_final(everything=True)
    assert untimed.lines == 4  # it went on taking its lines
