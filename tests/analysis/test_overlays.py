"""Overlay correlation and the exact statistics under it, checked against hand-computed and published values."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conftest import EXAMPLE
from fault_logs import analysis_from, completion, fault, record
from omlx_logscan.analysis.overlays import correlate, subtract
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.analysis.stats import binomial_test, clopper_pearson, rate_ratio
from omlx_logscan.cli.values import overlay_specs, parse_gap, zone
from omlx_logscan.errors import LogscanError
from omlx_logscan.inputs.overlays import merge, parse_overlays
from omlx_logscan.output.overlays import overlay_sentence

# -- stats -------------------------------------------------------------------------------------


def test_clopper_pearson_against_published_and_closed_form_values() -> None:
    # Published 95 % exact intervals (Clopper & Pearson tables; R's binom.test gives the same).
    assert clopper_pearson(1, 10) == pytest.approx((0.0025286, 0.4450161), abs=1e-6)
    assert clopper_pearson(5, 10) == pytest.approx((0.1870860, 0.8129140), abs=1e-6)
    assert clopper_pearson(3, 4) == pytest.approx((0.1941204, 0.9936905), abs=1e-6)
    # Closed forms at the edges: k = 0 gives high = 1 - (α/2)^(1/n); k = n gives low = (α/2)^(1/n).
    assert clopper_pearson(0, 10) == (0.0, pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-12))
    assert clopper_pearson(6, 6) == (pytest.approx(0.025 ** (1 / 6), abs=1e-12), 1.0)
    with pytest.raises(ValueError):
        clopper_pearson(3, 2)


def test_binomial_test_against_r_documentation_example() -> None:
    # R ?binom.test: binom.test(682, 925, p = 3/4) → p-value = 0.3825, CI 0.7076683 0.7654066.
    assert binomial_test(682, 925, 0.75) == pytest.approx(0.3825, abs=5e-5)
    assert clopper_pearson(682, 925) == pytest.approx((0.7076683, 0.7654066), abs=1e-7)
    # By hand: 3 of 4 with p0 = 0.1; outcomes no likelier than P(3) = 0.0036 are 3 and 4 (P(4) = 0.0001).
    assert binomial_test(3, 4, 0.1) == pytest.approx(0.0037, abs=1e-12)


def test_rate_ratio_against_r_poisson_test_example() -> None:
    # R ?poisson.test: poisson.test(c(11, 6 + 8 + 7), c(800, 1083 + 1050 + 878))
    # → rate ratio 1.971488, 95 % CI 0.8584264 4.2772659, p-value = 0.07967.
    ratio = rate_ratio(11, 800, 21, 3011)
    assert ratio is not None and not ratio.lower_bound_only
    assert ratio.estimate == pytest.approx(1.971488, abs=1e-6)
    assert (ratio.low, ratio.high) == pytest.approx((0.8584264, 4.2772659), abs=1e-6)
    assert ratio.p_value == pytest.approx(0.07967, abs=5e-6)


def test_rate_ratio_with_no_event_outside_is_a_lower_bound() -> None:
    ratio = rate_ratio(6, 9.0, 0, 2000.0)
    assert ratio is not None and ratio.lower_bound_only and math.isinf(ratio.high)
    share = 0.025 ** (1 / 6)  # by hand: the Clopper–Pearson low end for 6 of 6
    assert ratio.low == pytest.approx(share / (1 - share) * 2000 / 9, rel=1e-9)
    assert ratio.p_value == pytest.approx((9 / 2009) ** 6, rel=1e-9)  # only 6 of 6 is that unlikely
    assert rate_ratio(0, 1.0, 0, 1.0) is None and rate_ratio(1, 0.0, 1, 1.0) is None


# -- overlays ----------------------------------------------------------------------------------

LOG_START = datetime(2026, 9, 1)
INSIDE = [datetime(2026, 9, 1, 11), datetime(2026, 9, 1, 13, 30), datetime(2026, 9, 2, 5)]
OUTSIDE = [datetime(2026, 9, 3, 12)]


def hundred_hours(tmp_path: Path) -> Analysis:
    """A 100-hour log with four absorbed cache-clear faults (each followed by a served request)."""
    lines = [record(LOG_START, "INFO", "omlx.server", "CORS origins: ['*']")]
    for moment in sorted(INSIDE + OUTSIDE):
        lines += [*fault(moment), completion(moment + timedelta(minutes=5), 10)]
    lines.append(completion(LOG_START + timedelta(hours=100), 10))
    return analysis_from(tmp_path, lines)


def write_csv(tmp_path: Path, text: str, name: str = "busy.csv") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_csv_overlay_counts_hours_faults_and_the_exact_ratio(tmp_path: Path) -> None:
    analysis = hundred_hours(tmp_path)
    csv_path = write_csv(
        tmp_path, "start,end\n2026-09-01T10:00:00,2026-09-01T14:00:00\n2026-09-02 00:00,2026-09-02 06:00\n"
    )
    (result,) = correlate(analysis, parse_overlays(overlay_specs([f"busy={csv_path}"])))
    assert (result.faults_inside, result.faults_outside, result.faults_untimed) == (3, 1, 0)
    assert result.hours_inside == pytest.approx(10.0) and result.hours_outside == pytest.approx(90.0)
    assert result.hours_dead_excluded == pytest.approx(0.0)
    ratio = result.ratio
    assert ratio is not None
    assert ratio.estimate == pytest.approx((3 / 10) / (1 / 90))  # 27
    high_share = 0.975 ** (1 / 4)  # by hand: P(X ≤ 3) = 1 - p⁴ = 0.025
    assert ratio.high == pytest.approx(high_share / (1 - high_share) * 9, rel=1e-9)
    low_share = 0.1941204  # published 95 % low end for 3 of 4
    assert ratio.low == pytest.approx(low_share / (1 - low_share) * 9, rel=1e-5)
    assert ratio.p_value == pytest.approx(0.0037, abs=1e-12)  # by hand, see the binomial test above
    row = result.as_dict()
    assert row["rate_ratio"] == 27.0 and row["rate_ratio_is_lower_bound"] is False
    assert row["ci95"] == [pytest.approx(2.16792, abs=1e-5), pytest.approx(1417.4288, abs=1e-4)]
    assert overlay_sentence(result) == (
        "3 of 4 faults fell in the 10 h 00 min when busy was active, 1 in 3 d 18 h without; "
        "rate ratio 27 (95 % CI 2.17–1,417), p = 0.004"
    )


def test_example_overlay_six_of_six_inside_with_dead_windows_left_out(example_analysis: Analysis) -> None:
    (result,) = correlate(
        example_analysis, parse_overlays(overlay_specs([f"gpu={EXAMPLE.parent / 'gpu-overlay.csv'}"]))
    )
    assert (result.faults_inside, result.faults_outside) == (6, 0)
    # The two dead windows (22:20:21.140 → 23:07:36.110, 02:07:02.207 → 02:41:41.525) are not at risk.
    dead_s = (47 * 60 + 14.970) + (34 * 60 + 39.318)
    assert result.hours_dead_excluded == pytest.approx(dead_s / 3600, abs=1e-6)
    assert result.hours_inside == pytest.approx(9 + 20 / 60 - dead_s / 3600, abs=1e-6)
    row = result.as_dict()
    assert row["rate_ratio_is_lower_bound"] is True and row["ci95"][1] is None
    assert row["rate_ratio"] == row["ci95"][0] and row["p_value"] < 0.001
    assert "6 of 6 faults fell in the 7 h 58 min when gpu was active, 0 in 87 d 12 h without; rate ratio ≥" in (
        overlay_sentence(result)
    )


def test_an_overlay_outside_the_log_has_nothing_to_compare(example_analysis: Analysis, tmp_path: Path) -> None:
    path = write_csv(tmp_path, "start,end\n2030-01-01 00:00,2030-01-02 00:00\n")
    (result,) = correlate(example_analysis, parse_overlays(overlay_specs([f"later={path}"])))
    assert (result.hours_inside, result.faults_inside, result.faults_outside, result.ratio) == (0.0, 0, 6, None)
    assert overlay_sentence(result) == "later covers none of the log's hours at risk: nothing to compare"
    assert result.as_dict()["ci95"] is None and result.as_dict()["p_value"] is None


def test_log_overlay_runs_split_at_the_gap(tmp_path: Path) -> None:
    other = tmp_path / "other-server.log"
    other.write_text(
        "2026-09-01 10:00:00 loading model\n"
        "   a continuation line without a time\n"
        "time=2026-09-01T08:04:00.250Z level=INFO msg=serving\n"  # UTC, read in the --tz zone
        "[2026-09-01 10:20:00,125] request done\n"
        "2026-09-01T10:21:00 idle\n"
    )
    (overlay,) = parse_overlays(overlay_specs([f"other={other}"]), parse_gap(None), zone("Europe/Berlin"))
    assert overlay.intervals == (
        (datetime(2026, 9, 1, 10), datetime(2026, 9, 1, 10, 4, 0, 250000)),
        (datetime(2026, 9, 1, 10, 20, 0, 125000), datetime(2026, 9, 1, 10, 21)),
    )
    (joined,) = parse_overlays(overlay_specs([f"other={other}"]), parse_gap("30m"), zone("Europe/Berlin"))
    assert joined.intervals == ((datetime(2026, 9, 1, 10), datetime(2026, 9, 1, 10, 21)),)


def test_csv_columns_by_header_and_overlapping_rows_merge(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path,
        "# when the other server ran\nhost,end,start\nm1,2026-09-01 12:00,2026-09-01 10:00\n"
        "m1,2026-09-01 13:00,2026-09-01 11:00\n",
        "runs.txt",
    )
    (overlay,) = parse_overlays(overlay_specs([f"m1={path}"]))
    assert overlay.intervals == ((datetime(2026, 9, 1, 10), datetime(2026, 9, 1, 13)),)


def test_interval_helpers() -> None:
    day = datetime(2026, 9, 1)

    def at(hour: int) -> datetime:
        return day + timedelta(hours=hour)

    assert merge([(at(5), at(6)), (at(1), at(3)), (at(2), at(4))]) == [(at(1), at(4)), (at(5), at(6))]
    assert subtract([(at(0), at(10))], [(at(2), at(3)), (at(9), at(12))]) == [(at(0), at(2)), (at(3), at(9))]


@pytest.mark.parametrize(
    ("spec", "content", "message"),
    [
        ("gpu", None, "expected NAME=FILE"),
        ("=x.csv", None, "expected NAME=FILE"),
        ("gpu=/no/such/overlay.csv", None, "no such file"),
        ("gpu={csv}", "start,end\n2026-09-01 10:00,yesterday\n", "line 2: 'yesterday' is not an ISO time"),
        ("gpu={csv}", "start,end\n2026-09-01 10:00,2026-09-01 09:00\n", "line 2 ends before it starts"),
        ("gpu={csv}", "start,end\n2026-09-01 10:00\n", "line 2 has no end time"),
        ("gpu={csv}", "begin,finish\n2026-09-01 10:00,2026-09-01 11:00\n", "needs start and end columns"),
        ("gpu={csv}", "start,end\n", "no start,end rows"),
        ("gpu={log}", "no time on any line\n", "no timestamped lines"),
    ],
)
def test_bad_overlay_options_are_one_line_errors(tmp_path: Path, spec: str, content: str | None, message: str) -> None:
    if content is not None:
        write_csv(tmp_path, content, "o.csv")
        write_csv(tmp_path, content, "o.log")
    with pytest.raises(LogscanError, match=message):
        parse_overlays(overlay_specs([spec.format(csv=tmp_path / "o.csv", log=tmp_path / "o.log")]))


def test_duplicate_overlay_names_are_refused(tmp_path: Path) -> None:
    path = write_csv(tmp_path, "start,end\n2026-09-01 10:00,2026-09-01 11:00\n")
    with pytest.raises(LogscanError, match="given twice"):
        parse_overlays(overlay_specs([f"a={path}", f"a={path}"]))


@pytest.mark.parametrize(("text", "expected"), [(None, 300.0), ("5m", 300.0), ("90s", 90.0), ("1.5 h", 5400.0)])
def test_overlay_gap(text: str | None, expected: float) -> None:
    assert parse_gap(text) == expected


@pytest.mark.parametrize("text", ["soon", "0m", "2 months", "5m ago"])
def test_bad_overlay_gap(text: str) -> None:
    with pytest.raises(LogscanError, match="--overlay-gap"):
        parse_gap(text)
