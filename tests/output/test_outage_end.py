"""An outage that a later lifetime ends is over, though the log does not say when (issue 27, item 6):
a reboot whose Mac a later panic report shows back, a crash followed by a start without a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REAL, analysis_of, pasted
from omlx_logscan.analysis.check import Rules, run_check
from omlx_logscan.output.outages import end_phrase

ABORT = (
    "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer "
    "execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n"
)
BANNER = "oMLX - LLM inference, optimized for your Mac\n├─ https://github.com/jundot/omlx\n└─ Version: 0.5.7\n"


def two_panics() -> str:
    return "".join((REAL / name).read_text() for name in ("omlx-issue-1265.log", "omlx-issue-1372.log"))


@pytest.mark.parametrize(
    ("text", "kind"),
    [(two_panics(), "reboot"), (ABORT + BANNER, "crash")],
    ids=["panic-then-panic", "abort-then-untimed-start"],
)
def test_an_outage_a_later_lifetime_ends_is_over(tmp_path: Path, text: str, kind: str) -> None:
    analysis = analysis_of(pasted(tmp_path, text))
    first = analysis.outages.items[0]
    assert (first.kind, first.session, first.next_session) == (kind, 1, 2)
    assert not first.open_at_end
    assert end_phrase(first) == "until session 2 began"
    findings = run_check(analysis, Rules(("outage",))).findings
    assert 1 not in [f.session for f in findings if f.worst_case]  # not open when the log ends


def test_the_last_outage_of_a_log_is_still_open(tmp_path: Path) -> None:
    last = analysis_of(pasted(tmp_path, two_panics())).outages.items[-1]
    assert (last.session, last.next_session, last.open_at_end) == (2, None, True)
    assert end_phrase(last) == "no restart when the log ends"
