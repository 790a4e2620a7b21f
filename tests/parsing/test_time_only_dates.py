"""Time-only lines are dated from the log only where the date is known (review B7, B8, B9)."""

from __future__ import annotations

from pathlib import Path

from conftest import stream_of

DATED = (
    "2026-09-19 {} - omlx.server - INFO - [-] - Chat completion: model=m, 10 tokens in 1.00s (10.0 tok/s), prompt: 5\n"
)
TIME_ONLY = "{} - omlx.scheduler - WARNING - a warning\n"


def times(tmp_path: Path, text: str) -> list[str | None]:
    log = tmp_path / "paste.log"
    log.write_text(text)
    return [ev.time for ev in stream_of(log).events if ev.kind == "warning"]


def test_after_a_line_no_date_fits_the_next_time_only_lines_stay_undated(tmp_path: Path) -> None:
    # 08:00 comes back from 09:00: no date; 09:30 after it is then dated from nothing known.
    text = DATED.format("09:00:00,000") + "".join(TIME_ONLY.format(t) for t in ("08:00:00", "08:00:30", "09:30:00"))
    assert times(tmp_path, text) == [None, None, None]


def test_a_dated_line_dates_the_time_only_lines_after_it_again(tmp_path: Path) -> None:
    text = DATED.format("09:00:00,000") + TIME_ONLY.format("08:00:00")
    text += DATED.format("10:00:00,000") + TIME_ONLY.format("10:05:00")
    assert times(tmp_path, text) == [None, "2026-09-19T10:05:00"]


def test_a_long_step_back_in_the_clock_is_no_next_day(tmp_path: Path) -> None:
    # 15:00 to 10:00 is 19 h on past midnight, or a line from earlier that day: no date is known.
    assert times(tmp_path, DATED.format("15:00:00,000") + TIME_ONLY.format("10:00:00")) == [None]


def test_a_short_step_past_midnight_is_the_next_day(tmp_path: Path) -> None:
    assert times(tmp_path, DATED.format("23:00:00,000") + TIME_ONLY.format("01:30:00")) == ["2026-09-20T01:30:00"]


def test_the_span_takes_in_the_lines_dated_from_the_log(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(DATED.format("23:00:00,000") + TIME_ONLY.format("01:30:00"))
    source = stream_of(log).sources[0]
    assert (source.first, source.last) == ("2026-09-19T23:00:00.000", "2026-09-20T01:30:00")
