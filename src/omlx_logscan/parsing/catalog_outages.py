"""oMLX's wording that tells outages apart: the reasons of its fatal exits and its retried engine loop.

Kept beside ``catalog.py`` (which holds the templates) so each stays one readable table.
"""

from __future__ import annotations

import re

# The reason of a fatal exit (``process_exit`` with reason ``fatal_exit``, field ``reason_text``), by
# what it begins with: the SubmissionsIgnored exit of the build with the seed report's fix, the
# teardown watchdogs of >= 0.4.2 and later builds, the scheduler's store_cache watchdogs. First match wins.
FATAL_REASONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), reason)
    for pattern, reason in (
        (r"^Metal GPU submissions disabled", "submissions_ignored"),
        (r"^Engine teardown timed out", "teardown"),
        (r"^Engine \S+: (?:teardown|MLX teardown|final MLX reclaim)", "teardown"),
        (r"^(?:SSD cache writer survived engine teardown|Global MLX executor teardown)", "teardown"),
        (r"^Scheduler (?:shutdown|reset) timed out", "store_cache_timeout"),
    )
)


def fatal_reason(reason_text: str | None) -> str:
    """The id of a fatal exit's reason (``other`` for one this table does not know)."""
    text = reason_text or ""
    return next((reason for pattern, reason in FATAL_REASONS if pattern.search(text)), "other")


# The engine loop's own error record: the same text again and again without SubmissionsIgnored is a
# retry loop (oMLX issue 888).
ENGINE_LOOP_ERROR = "Engine loop error:"


# The engine loop's stop: ``EngineCore.stop`` writes it once the loop's task is cancelled. The engine's
# close comes next (``BatchedEngine.stop``), and ``EngineCore.close`` runs ``Scheduler.shutdown``
# (``Scheduler shutdown initiated...``) on the MLX executor, the one thread that runs the scheduler's
# step, waiting 60 s before a fatal exit (0.4.4 to 0.6.3rc2). A stop that writes nothing after this
# line found that thread held: a step that never returned.
ENGINE_LOOP_STOPPED = "Engine stopped"
