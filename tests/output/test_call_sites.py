"""The call-site words: analysis hands over ids and frames, ``output.phrases`` names them once for
every format (the signature list, the summary, the JSON ``call_site_label`` and the why section)."""

from __future__ import annotations

from typing import Any

from omlx_logscan.analysis.results import Signature
from omlx_logscan.analysis.signatures import cache_clear_call, call_site
from omlx_logscan.output.phrases import CALL_SITE_WORDS, call_site_label, untraced_call_site_label
from omlx_logscan.parsing.catalog import CACHE_CLEAR_FUNCTION


def _frame(module: str, func: str) -> dict[str, Any]:
    return {"module": module, "line": 1, "func": func, "code": ""}


def _signature(frames: list[dict[str, Any]], context: str = "other") -> Signature:
    site = call_site([f["func"] for f in frames], context)
    return Signature(id="0123456789", frames=frames, exception=None, call_site=site, innermost_code="", faults=1)


def test_every_call_site_id_has_words() -> None:
    ids = {call_site([CACHE_CLEAR_FUNCTION], ""), call_site([], "ane_dispatch"), call_site([], "prefill")}
    ids |= {call_site(["_step"], ""), call_site([], "")}
    assert ids == set(CALL_SITE_WORDS)


def test_cache_clear_label_names_where_it_ran_and_its_caller() -> None:
    frames = [_frame("omlx/scheduler.py", "step"), _frame("omlx/scheduler.py", CACHE_CLEAR_FUNCTION)]
    assert cache_clear_call(frames) == (f"scheduler.{CACHE_CLEAR_FUNCTION}", "scheduler.step")
    assert call_site_label(_signature(frames)) == (
        f"scheduler.{CACHE_CLEAR_FUNCTION} from scheduler.step = a cache-clear drain"
    )


def test_cache_clear_at_the_top_of_the_stack_has_no_caller() -> None:
    frames = [_frame("omlx/engine/batched.py", CACHE_CLEAR_FUNCTION)]
    assert call_site_label(_signature(frames)) == f"engine.batched.{CACHE_CLEAR_FUNCTION} = a cache-clear drain"


def test_a_stack_without_a_known_step_is_unknown_and_says_so_only_without_a_traceback() -> None:
    assert call_site_label(_signature([_frame("threading.py", "run")])) == "unknown"
    assert untraced_call_site_label("unknown") == "unknown (no traceback)"
    assert untraced_call_site_label("ane_dispatch") == "ANE input dispatch"
    assert cache_clear_call([_frame("threading.py", "run")]) is None
