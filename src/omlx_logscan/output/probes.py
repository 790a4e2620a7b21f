"""The words for generation probes: a probe's line among the watch's events, and the alert a proof raises."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from omlx_logscan.analysis.probes import (
    ALIVE,
    CLEARS,
    CONFIRMS,
    CONTRADICTS,
    DOWN,
    ERROR,
    FAILED,
    HUNG,
    NEEDS_KEY,
    PROVES,
    UNSEEN,
    ProbeEvidence,
    ProbeFinding,
    ProbeProof,
    ProbeVerdict,
)
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.output.outages import outage_title
from omlx_logscan.output.phrases import plural
from omlx_logscan.parsing.probes import ProbeFile
from omlx_logscan.timeutil import human_time

if TYPE_CHECKING:
    from rich.console import Console


def probe_message(trigger: str, outcome: str, latency_s: float | None, status: int | None, detail: str) -> str:
    """One probe: what it found and why it was sent."""
    took = f" in {latency_s:.2f} s" if latency_s is not None else ""
    http = f" (HTTP {status})" if status else ""
    found = {
        ALIVE: f"alive: one token{took}",
        HUNG: f"hung: /v1/models answered, no token{took}",
        NEEDS_KEY: f"needs_key{http}: cannot probe, the server wants an API key ({detail}); this proves nothing",
        FAILED: f"failed{http}: {detail}; no completion and no error of oMLX's, this proves nothing",
    }.get(outcome, f"{outcome}{http}: {detail}")
    return f"generation probe ({trigger}): {found}"


def needs_key_note(url: str, status: int | None, key_from: str | None) -> str:
    """Said once when the server refuses the probe for its key: what to give, and where."""
    refused = f"refused the API key of {key_from}" if key_from else "wants an API key"
    return (
        f"cannot probe {url}: the server {refused} (HTTP {status}), so the probes prove nothing and never "
        "alert; give the key in $OMLX_API_KEY or in a file named by --probe-key-file FILE"
    )


def probe_dead_message(proof: ProbeProof) -> str:
    """The alert of a proof: the engine answers the API but generates nothing."""
    how = (
        "a completion of one token got no answer while /v1/models answered"
        if proof.outcome == HUNG
        else f"{plural(len(proof.probes), 'completion')} of one token failed"
    )
    return (
        f"ALERT engine generation-dead since {human_time(proof.since)} (session {proof.session}): {how}. "
        "Only a restart recovers it"
    )


def probes_phrase(outcomes: list[str]) -> str:
    """The probes a watch sent, for its summary line: ``3 probes (2 alive, 1 hung)``."""
    tally = ", ".join(f"{outcomes.count(o)} {o}" for o in dict.fromkeys(outcomes))
    return f"{plural(len(outcomes), 'probe')}" + (f" ({tally})" if tally else "")


# -- probes read back on the timeline (``timeline``/``report --probes``) ----------------------------

# What each verdict says of the outage (``{title}``, ``{since}``) the probe fell in, or of the engine.
VERDICT_WORDS: dict[ProbeVerdict, str] = {
    CONFIRMS: "confirms the {title} since {since}: the engine was generation-dead, not idle",
    CLEARS: "clears the {title} since {since}: the engine generated, the server was idle",
    PROVES: "proves the {title} since {since}: the engine generated nothing",
    CONTRADICTS: "contradicts the {title} since {since}: the engine generated a token",
    UNSEEN: "the engine was generation-dead, which the log does not show",
    ALIVE: "the engine generated",
    ERROR: "a failed completion (one alone proves nothing)",
    DOWN: "nothing answered: no process served",
    NEEDS_KEY: "cannot probe: the server wants an API key (proves nothing)",
    FAILED: "the probe failed: no completion and no error of oMLX's (proves nothing)",
}
ROUTINE_VERDICTS = frozenset({ALIVE})  # told as a count: an idle healthy server is probed once per --wedge-after
DEAD_VERDICTS = frozenset({CONFIRMS, PROVES, UNSEEN})  # the engine generation-dead


def probe_found(finding: ProbeFinding) -> str:
    """What the probe itself got: ``hung (possible_wedge): no token in 120.00 s``."""
    fields = finding.probe.fields
    latency, status = fields.get("latency_s"), fields.get("status")
    took = f" in {latency:.2f} s" if isinstance(latency, int | float) else ""
    got = {ALIVE: f"one token{took}", HUNG: f"no token{took}"}.get(
        str(fields.get("outcome")), f"HTTP {status}" if status else "no answer"
    )
    return f"{fields.get('outcome')} ({fields.get('trigger')}): {got}"


def probe_verdict(finding: ProbeFinding, analysis: Analysis) -> str:
    """What the probe says of the lifetime's outage, in words."""
    outage = analysis.outages.items[finding.outage] if finding.outage is not None else None
    title = outage_title(outage) if outage is not None else ""
    since = human_time(outage.start) if outage is not None else ""
    session = f"session {finding.session}" if finding.session is not None else "before the log's first session"
    return f"{session}: " + VERDICT_WORDS[finding.verdict].format(title=title, since=since)


def probe_lines(evidence: ProbeEvidence, analysis: Analysis) -> list[tuple[str, bool]]:
    """The probes on the timeline, one line each but the routine alive ones, which are counted; each
    with whether it shows the engine generation-dead."""
    shown = [f for f in evidence.findings if f.verdict not in ROUTINE_VERDICTS]
    lines = [
        (f"{human_time(f.probe.time)}  {probe_found(f)} — {probe_verdict(f, analysis)}", f.verdict in DEAD_VERDICTS)
        for f in shown
    ]
    routine = len(evidence.findings) - len(shown)
    if routine:
        lines.append((f"{plural(routine, 'probe')} outside any outage got a token (the engine generated)", False))
    return lines or [("no probes in the window", False)]


def probe_files_phrase(evidence: ProbeEvidence) -> str:
    """The probes files by their base names, as the timeline names its logs (a folder may name a user)."""
    return ", ".join(os.path.basename(found.name) for found in evidence.files)


def probe_files_note(files: list[ProbeFile]) -> str:
    """The stderr note on what was read of each probes file: its probes, and the rows left to the log."""
    return "".join(
        f"logscan: note: {found.name}: {probes_phrase([str(p.fields['outcome']) for p in found.probes])} read; "
        f"its {plural(found.other_rows, 'other row')} (the log's events and the watch's notices) are "
        "not read as log lines\n"
        for found in files
    )


def probes_document(evidence: ProbeEvidence, analysis: Analysis) -> dict[str, Any]:
    """The ``probes`` of a timeline document, its times zoned as the document's."""
    items = analysis.outages.items
    document = {
        "files": [
            {"name": found.name, "probes": len(found.probes), "other_rows": found.other_rows}
            for found in evidence.files
        ],
        "items": [
            {
                "time": f.probe.time,
                **{key: f.probe.fields.get(key) for key in ("trigger", "outcome", "latency_s", "status", "model")},
                "session": f.session,
                "outage": f.outage,
                "outage_kind": items[f.outage].rule if f.outage is not None else None,
                "verdict": f.verdict,
            }
            for f in evidence.findings
        ],
    }
    zoned: dict[str, Any] = analysis.stream.clock().convert(document)
    return zoned


def probes_markdown(evidence: ProbeEvidence, analysis: Analysis, limit: int | None = None) -> list[str]:
    """The *Generation probes* section of the Markdown timeline and the report (``limit``: at most
    so many probe lines, the first in time)."""
    from omlx_logscan.output.markup import code_block, fit_code, md_text

    lines = [line for line, _ in probe_lines(evidence, analysis)]
    if limit is not None and len(lines) > limit:
        lines = [*lines[: limit - 1], f"… {len(lines) - limit + 1} more lines: timeline --probes shows them all"]
    return [
        "### Generation probes",
        "",
        f"Read from {md_text(probe_files_phrase(evidence))}.",
        "",
        *code_block(fit_code(lines)),
    ]


REPORT_PROBE_LINES = 40  # a report is pasted into an issue: the first probes tell the story


def report_probes(evidence: ProbeEvidence, analysis: Analysis) -> str:
    """The report's *Generation probes* section, after its body."""
    return "\n".join(["", *probes_markdown(evidence, analysis, REPORT_PROBE_LINES), ""])


def probes_text(evidence: ProbeEvidence, analysis: Analysis, con: Console) -> None:
    """The *Generation probes* section of the terminal timeline."""
    from omlx_logscan.output.text import printable, say

    con.print()
    say(con, "Generation probes", "bold")
    say(con, printable(f"  from {probe_files_phrase(evidence)}"), "dim")
    for line, dead in probe_lines(evidence, analysis):
        say(con, printable(f"  {line}"), "bold red" if dead else "", hang=4)
