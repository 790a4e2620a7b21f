"""The words of the version bounds: row headings, table cells and the report's sentence."""

from __future__ import annotations

from omlx_logscan.analysis.bounds import UNKNOWN, Bounds, BoundsRow, Grouping, TimeBounds
from omlx_logscan.timeutil import human_duration, human_time


def rate_figure(value: float | None) -> str:
    """A fault rate or its upper bound: three significant digits, ``—`` when there is none."""
    return "—" if value is None else f"{value:.3g}"


def rate_cell(rate_and_upper: tuple[float | None, float | None]) -> str:
    """``1.5 (95 % ≤ 2.96)``: the rate and its upper bound."""
    rate, upper = rate_and_upper
    return "—" if rate is None else f"{rate_figure(rate)} (95 % ≤ {rate_figure(upper)})"


def covered_hours(hours: float) -> str:
    """Hours of log a version covers, in the one duration style: ``86 d 22 h``, ``1 h 24 min``."""
    return human_duration(hours * 3600)


def time_bounds_phrase(bounds: TimeBounds) -> str:
    """``1 h 30 min``, ``2 h 23 min to 2 h 38 min``, ``at least 2 h 23 min``: as exact as the log allows."""
    if bounds.exact_s is not None:
        return human_duration(bounds.exact_s)
    if bounds.min_s is not None and bounds.max_s is not None:
        low, high = human_duration(bounds.min_s), human_duration(bounds.max_s)
        return low if low == high else f"{low} to {high}"
    if bounds.min_s is not None:
        return f"at least {human_duration(bounds.min_s)}"
    if bounds.max_s is not None:
        return f"at most {human_duration(bounds.max_s)}"
    return "?"


def outage_hours_cell(hours: dict[str, float]) -> str:
    """``wedge 17 h 54 min, fatal exit 36 s``: how long each kind of outage lasted, or ``0``."""
    return ", ".join(f"{kind.replace('_', ' ')} {covered_hours(h)}" for kind, h in hours.items()) or "0"


def bounds_measures(row: BoundsRow) -> list[tuple[str, str]]:
    """What the table shows of one row, measure by measure."""
    engine_starts = "— (INFO hidden)" if row.engine_starts is None else f"{row.engine_starts:,}"
    after_install = row.first_fault_after_os_install_s
    return [
        ("first seen", human_time(row.first)),
        ("last seen", human_time(row.last)),
        ("log covered", covered_hours(row.hours)),
        ("session starts", f"{row.process_starts:,}"),
        ("engine starts", engine_starts),
        ("faults", ", ".join(f"{kind} {count}" for kind, count in row.faults.items()) or "0"),
        ("penalty-box entries", str(row.penalty_box_entries)),
        ("generation-dead", covered_hours(row.dead_hours) if row.dead_hours else "0"),
        ("outages", outage_hours_cell(row.outage_hours)),
        ("first fault", human_time(row.first_fault) if row.first_fault else "—"),
        ("  after the first start", time_bounds_phrase(row.after_first_start) if row.first_fault else "—"),
        ("  after the OS install", human_duration(after_install) if after_install is not None else "—"),
        ("faults per start", rate_cell(row.per_start())),
        ("faults per hour", rate_cell(row.per_hour())),
    ]


def bounds_heading(row: BoundsRow, by: Grouping) -> list[str]:
    """A row's column heading, one line per grouped version: ``macOS 27.0``, ``oMLX (several)``."""
    os_part = f"macOS {row.os_version or '(several)'}"
    omlx_part = f"oMLX {row.omlx_version or '(several)'}"
    return {Grouping.os: [os_part], Grouping.omlx: [omlx_part], Grouping.both: [os_part, omlx_part]}[by]


def row_label(row: BoundsRow, by: Grouping) -> str:
    """How the sentence names the row: ``macOS 27.0``, ``oMLX 0.5.7``, ``macOS 27.0 with oMLX 0.5.7``."""
    os_label = version_label("macOS", row.os_version)
    omlx_label = version_label("oMLX", row.omlx_version)
    return {Grouping.os: os_label, Grouping.omlx: omlx_label, Grouping.both: f"{os_label} with {omlx_label}"}[by]


def version_label(product: str, version: str | None) -> str:
    """``macOS 27.0``, ``an unknown macOS version`` or ``several macOS versions``."""
    if version is None:
        return f"several {product} versions"
    return f"an unknown {product} version" if version == UNKNOWN else f"{product} {version}"


def exposure_phrase(row: BoundsRow) -> str:
    """``156 starts, 2,086 h``: how long a version was watched."""
    starts = f"{row.process_starts:,} start{'s' if row.process_starts != 1 else ''}"
    return f"{starts}, {covered_hours(row.hours)}"


def either_phrase(names: list[str]) -> str:
    """``Timeout``, ``Timeout or SubmissionsIgnored``, ``A, B or C``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def bounds_sentence(bounds: Bounds) -> str:
    """The report's hand-written claim, rebuilt from the rows."""
    if not bounds.rows:
        return "No session in the log."
    clean = [row for row in bounds.rows if row.fault_count == 0]
    clean_text = " or ".join(f"{row_label(row, bounds.by)} ({exposure_phrase(row)})" for row in clean)
    faulty = [row for row in bounds.rows if row.fault_count]
    if not faulty:
        return f"No GPU faults on {clean_text}."
    first = min(faulty, key=lambda row: row.first_fault or "")
    came = f"came {time_bounds_phrase(first.after_first_start)} after the first start on it"
    if first.first_fault_after_os_install_s is not None:
        installed = human_duration(first.first_fault_after_os_install_s)
        came += f", {installed} after macOS {first.os_version} was installed"
    names = either_phrase(bounds.fault_names)
    if clean:
        return f"No {names} on {clean_text}; the first on {row_label(first, bounds.by)} {came}."
    return f"The first {bounds.fault_names[0]} on {row_label(first, bounds.by)} {came}."
