"""Failures other than GPU faults in words: the *Errors* part of every format, its summary sentence
and the rejected requests. Every format (text, JSON, Markdown, report, check) takes its words from here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omlx_logscan.analysis.failures import ANY_SHOWN, DETAIL, ErrorGroup, Errors
from omlx_logscan.output.markup import fence_for, fit_code
from omlx_logscan.output.report_blocks import Part, ReportBlock
from omlx_logscan.timeutil import human_time

ERRORS_TITLE = "Errors"


EXAMPLE_LABEL = "    example  "  # starts the lines that quote the log: they are not the tool's own words


EXAMPLE_MAX = 500  # characters of an example line in the timeline (``events`` shows the whole record)


NAMES_SHOWN = 5  # templates the summary names; the rest are counted


def error_name(group: ErrorGroup) -> str:
    """A group's template without the exception text it ends with: ``Engine loop error``."""
    return group.template.text.removesuffix(f": {DETAIL}").removesuffix(f": {ANY_SHOWN}")


def when_phrase(group: ErrorGroup) -> str:
    """``2026-04-24 21:49:12``, ``… … 21:55:00`` for a span (the end's date only when it is another day),
    times of day for a log without dates, ``(untimed)`` when no record states a time."""
    first, last = group.first, group.last
    if first is None or last is None:
        return "(untimed)"
    if not group.dated:
        return f"{first[:8] if first[:8] == last[:8] else f'{first[:8]} … {last[:8]}'} (date unknown)"
    if human_time(first) == human_time(last):
        return human_time(first)
    end = human_time(last)
    return f"{human_time(first)} … {end[11:] if end[:10] == first[:10] else end}"


SESSIONS_LISTED = 8  # past this many sessions, a list says how many of all: ``in 61 of 160 sessions``


def sessions_phrase(sessions: list[int], total: int | None = None) -> str:
    """``session 2``, ``sessions 1–4, 7``: runs of consecutive numbers as ranges; past
    ``SESSIONS_LISTED`` sessions, ``in 61 of 160 sessions`` (``total``: how many the log has)."""
    if len(sessions) > SESSIONS_LISTED and total is not None:
        return f"in {len(sessions)} of {total} sessions"
    runs: list[list[int]] = []
    for number in sessions:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    text = ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)
    return f"session{'s' if len(sessions) != 1 else ''} {text}"


def error_message(group: ErrorGroup, total: int | None = None) -> str:
    """One group on one line, for a check finding: when, how many, which message, level and sessions
    (``total``: how many sessions were read)."""
    return f"{when_phrase(group)}: {_group_phrase(group, str, total)}"


def _group_phrase(group: ErrorGroup, quote: Callable[[str], str], total: int | None) -> str:
    return (
        f"{group.count} × {quote(group.template.text)}  "
        f"({group.level or 'level not logged'}, {sessions_phrase(group.sessions, total)})"
    )


def error_lines(errors: Errors, quote: Callable[[str], str] = str) -> list[tuple[str, str]]:
    """Each group as two lines: when, count, template, level and sessions; then its example, quoted by
    ``quote`` (the log's text, which the report marks for redaction)."""
    times = [when_phrase(group) for group in errors.groups]
    width = max((len(when) for when in times), default=0)
    out = []
    for when, group in zip(times, errors.groups, strict=True):
        example = group.example
        where = f"{example.source.rsplit('/', 1)[-1]}:{example.line}"
        head = f"{when:<{width}}  {_group_phrase(group, quote, errors.sessions)}"
        out.append((head, f"{EXAMPLE_LABEL}{where}: {quote(example.message)}"))
    return out


def errors_text_lines(errors: Errors) -> list[str]:
    """The part's lines for the terminal and Markdown: an example is cut at ``EXAMPLE_MAX`` characters."""
    return [
        line
        for head, example in error_lines(errors)
        for line in (head, example if len(example) <= EXAMPLE_MAX else example[:EXAMPLE_MAX] + " …")
    ]


def errors_markdown(errors: Errors) -> list[str]:
    """The *Errors* section of the Markdown timeline, or nothing when there is no failure."""
    if not errors.groups:
        return []
    lines = fit_code(errors_text_lines(errors), quoting=EXAMPLE_LABEL)
    fence = fence_for(lines)
    return ["", f"### {ERRORS_TITLE}", "", fence, *lines, fence]


def errors_report(errors: Errors, quote: Callable[[str], str]) -> list[Part]:
    """The report's *Errors* section, a block whose groups can be cut to fit; log text through ``quote``."""
    if not errors.groups:
        return []
    rows = ["\n".join([*fit_code([head]), example]) for head, example in error_lines(errors, quote)]
    fence = fence_for(rows)
    block = ReportBlock(
        "error groups", [fence], rows, [fence], lambda n: f"… {n} error groups cut here", "`logscan timeline`"
    )
    return [f"### {ERRORS_TITLE}", "", block]


def errors_sentence(errors: Errors, quote: Callable[[str], str] = str) -> str:
    """`` 3 other failures: 2 × Engine loop error, 1 × POST /v1/chat/completions → 500.`` and the
    rejected requests, or nothing."""
    text = ""
    if errors.groups:
        ranked = sorted(errors.groups, key=lambda group: -group.count)  # stable: first seen first among equals
        named = ", ".join(f"{group.count} × {quote(error_name(group))}" for group in ranked[:NAMES_SHOWN])
        rest = ranked[NAMES_SHOWN:]
        if rest:
            more = sum(group.count for group in rest)
            named += f" and {more} more of {len(rest)} other message{'s' if len(rest) != 1 else ''}"
        count = errors.failures
        text += f" {count} other failure{'s' if count != 1 else ''}: {named}."
    rejected = sum(errors.rejected.values())
    if rejected:
        statuses = ", ".join(f"{n} × {status}" for status, n in sorted(errors.rejected.items()))
        codes = "4xx" if max(errors.rejected) < 500 else "4xx or 507"
        text += f" {rejected} request{'s' if rejected != 1 else ''} rejected with HTTP {codes} ({statuses})."
    return text


def errors_document(errors: Errors) -> dict[str, Any]:
    """The timeline document's ``errors`` and ``rejected_requests``."""
    return {"errors": [group.as_dict() for group in errors.groups], "rejected_requests": errors.rejected_dict()}
