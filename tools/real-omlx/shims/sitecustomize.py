"""Fault-injection shim for running the real oMLX server on Linux (MLX CPU backend).

Loaded automatically by every Python process started with PYTHONPATH=<this dir>.
Does nothing unless OMLX_FAULT_CONTROL is set.  It never touches oMLX's modules:
it only replaces ``mlx.core.synchronize`` (the MLX boundary named in the seed
report), so every log line is written by oMLX's own code.

How a fault looks to oMLX: ``_sync_and_clear_cache`` calls
``mx.synchronize(stream)`` (inside try/except RuntimeError: pass) and then
``mx.synchronize()`` (the default-stream drain, the seed's failing line).  The
Python wrapper sees the first call, decides, and if this clear is to fail it
swaps ``mx.synchronize`` for a C-level raiser (the bound ``result`` method of
an asyncio Future holding the RuntimeError) so the second call raises from C:
the traceback oMLX logs then ends at oMLX's own ``mx.synchronize()`` line, with
no frame of this file, as it would with the real Metal error.  A profile hook
on the engine thread puts the wrapper back right after the raise.

Env:
  OMLX_FAULT_CONTROL  JSON file the driver rewrites to arm one injection:
                      {"seq": N, "mode": "timeout_once"|"penalty"|"hang",
                       "target": "deferred"|"periodic"|"tokens1024"|"pressure"|"any_step_clear",
                       "label": "...", "pressure": true|false}
                      A new seq arms the next matching cache clear of
                      Scheduler.step.  "penalty": that clear raises the Timeout
                      and from then on every mx.synchronize of the process
                      raises SubmissionsIgnored (the driver's penalty box).
                      "hang": that clear's default-stream drain never returns,
                      and from then on every mx.synchronize of the process
                      blocks too (a wedged GPU: no error, no progress).
                      "pressure": true turns the memory-pressure stand-in on
                      for this seq (see OMLX_PRESSURE_POOL_BYTES).
  OMLX_FAULT_TRUTH    NDJSON file, one record per raised error.
  OMLX_FAKE_POOL_BYTES  optional: added to mx.get_cache_memory() so that the
                      periodic clear's "pool > max(soft limit/3, 2 GiB)" gate can open with a tiny
                      CPU model (stands in for a large Metal buffer pool).
  OMLX_PRESSURE_POOL_BYTES  the memory-pressure stand-in (oMLX >= 0.5.7), on while the
                      armed control says "pressure": true and until its pressure clear
                      has run: mx.get_active_memory() reports 97 % of the enforcer's
                      ceiling (ProcessMemoryEnforcer._get_hard_limit_bytes, of the live
                      enforcer object; hard pressure starts at 95 %, the emergency
                      brake at 100 %) and mx.get_cache_memory() this many bytes more
                      (default 4 GiB, above the enforcer's 2 GiB reclaim floor). The
                      enforcer then calls _request_scheduler_cache_reclaim ->
                      Scheduler.request_pressure_reclaim, and the next Scheduler.step
                      runs _sync_and_clear_cache: the clear classified "pressure".
  OMLX_SHIM_MLX_LM_LOAD_TRC=1  dependency stand-in, set by run.sh for oMLX 0.4.x only:
                      0.4.4 pins mlx-lm at git commit 2c008fd, whose load() takes
                      trust_remote_code; PyPI's mlx-lm 0.31.3 (the release that commit is
                      based on) does not, and 0.32.0 (which does) drops SequenceStateMachine
                      that 0.4.4's scheduler imports. So mlx_lm.load is wrapped to drop the
                      keyword when the installed load() lacks it (what oMLX >= 0.5 does itself
                      in utils/model_loading.lm_load_compat). Not a fault; no oMLX module touched.
"""
import os

if os.environ.get("OMLX_SHIM_MLX_LM_LOAD_TRC") == "1":
    import functools as _ft
    import inspect as _insp

    import mlx_lm as _mlx_lm

    _lm_load = _mlx_lm.load
    if "trust_remote_code" not in _insp.signature(_lm_load).parameters:
        @_ft.wraps(_lm_load)
        def _load_compat(*args, trust_remote_code=False, **kwargs):
            return _lm_load(*args, **kwargs)
        _mlx_lm.load = _load_compat

_CTRL = os.environ.get("OMLX_FAULT_CONTROL")

if _CTRL:
    import asyncio
    import json
    import sys
    import threading
    import time
    from datetime import datetime, timezone

    import mlx.core as _mx

    TIMEOUT_MSG = ("[METAL] Command buffer execution failed: Caused GPU Timeout Error "
                   "(00000002:kIOGPUCommandBufferCallbackErrorTimeout).")
    IGNORED_MSG = ("[METAL] Command buffer execution failed: Ignored (for causing "
                   "prior/excessive GPU errors) "
                   "(00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored).")

    _TRUTH = os.environ.get("OMLX_FAULT_TRUTH")
    _lock = threading.Lock()
    _loop = asyncio.new_event_loop()  # only to own the raiser futures; never run
    _state = {"consumed_seq": None, "penalty": False, "ctrl_mtime": None, "ctrl": {},
              "raiser": None, "hang": False, "ceiling": None, "pressure_requested": False,
              "pressure_done_seq": None}
    _forever = threading.Event()  # never set: what a wedged drain waits on
    _orig_sync = _mx.synchronize
    _orig_cache_mem = _mx.get_cache_memory
    _orig_active_mem = _mx.get_active_memory
    _fake_pool = int(os.environ.get("OMLX_FAKE_POOL_BYTES", "0") or 0)
    _pressure_pool = int(os.environ.get("OMLX_PRESSURE_POOL_BYTES", str(4 * 1024**3)) or 0)

    def _stack_names(frame, n=8):
        out = []
        while frame is not None and len(out) < n:
            co = frame.f_code
            out.append(f"{os.path.basename(co.co_filename)}:{frame.f_lineno}:{co.co_name}")
            frame = frame.f_back
        return out

    def _record(kind, how, frame, extra=None):
        if not _TRUTH:
            return
        t = time.time()
        rec = {"t": t, "utc": datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds"),
               "pid": os.getpid(), "kind": kind, "how": how,
               "thread": threading.current_thread().name, "stack": _stack_names(frame)}
        if extra:
            rec.update(extra)
        with _lock:
            with open(_TRUTH, "a") as f:
                f.write(json.dumps(rec) + "\n")

    def _read_ctrl():
        try:
            m = os.stat(_CTRL).st_mtime_ns
        except OSError:
            return {}
        if m != _state["ctrl_mtime"]:
            try:
                with open(_CTRL) as f:
                    _state["ctrl"] = json.load(f)
                _state["ctrl_mtime"] = m
            except (OSError, ValueError):
                pass
        return _state["ctrl"]

    def _classify(f1):
        """Which cache clear is this _sync_and_clear_cache frame (f1) part of?"""
        f2 = f1.f_back
        if f2 is None:
            return "unknown"
        if f2.f_code.co_name != "step":
            return "other:" + f2.f_code.co_name
        loc = f2.f_locals
        if "should_clear" not in loc:
            return "tokens1024"  # the in-try decode clear after 1024 tokens
        sched = loc.get("self")
        try:
            interval = sched.config.mlx_cache_cleanup_interval
            periodic = (interval > 0 and sched._step_counter % interval == 0 and
                        _mx.get_cache_memory() > sched._periodic_clear_threshold_bytes())
        except Exception:
            periodic = False
        if periodic:
            return "periodic"
        return "pressure" if _state["pressure_requested"] else "deferred"

    def _profile(frame, event, arg):
        if event in ("c_exception", "c_return") and arg is _state["raiser"]:
            _mx.synchronize = synchronize
            _state["raiser"] = None
            sys.setprofile(None)

    def _arm_c_raiser(msg):
        fut = _loop.create_future()
        fut.set_exception(RuntimeError(msg))
        raiser = fut.result  # one bound-method object: the profile hook matches it by identity
        _state["raiser"] = raiser
        _mx.synchronize = raiser
        sys.setprofile(_profile)

    def _hang(frame, extra=None):
        _record("hang", "blocked(default-stream drain)" if extra else "blocked", frame, extra)
        _forever.wait()

    def synchronize(*args, **kwargs):
        frame = sys._getframe(1)
        in_clear = frame.f_code.co_name == "_sync_and_clear_cache"
        if _state["hang"]:
            _hang(frame)
        if _state["penalty"]:
            if args or kwargs:
                if in_clear:
                    _record("submissions_ignored", "stream_drain(swallowed)", frame)
                    _arm_c_raiser(IGNORED_MSG)  # for its default-stream drain next
                else:
                    _record("submissions_ignored", "python_wrapper", frame)
                raise RuntimeError(IGNORED_MSG)
            _record("submissions_ignored", "python_wrapper", frame)
            raise RuntimeError(IGNORED_MSG)
        if (args or kwargs) and in_clear:
            ctrl = _read_ctrl()
            seq = ctrl.get("seq")
            if seq is not None and seq != _state["consumed_seq"]:
                trig = _classify(frame)
                target = ctrl.get("target", "any_step_clear")
                ok = (trig in ("periodic", "deferred", "tokens1024", "pressure")
                      if target == "any_step_clear" else trig == target)
                if ok:
                    _state["consumed_seq"] = seq
                    mode = ctrl.get("mode", "timeout_once")
                    sc = None
                    try:
                        sc = frame.f_back.f_locals["self"]._step_counter
                    except Exception:
                        pass
                    if trig == "pressure":
                        _pressure_cleared(frame, seq)
                    result = _orig_sync(*args, **kwargs)
                    extra = {"seq": seq, "mode": mode, "trigger": trig,
                             "label": ctrl.get("label"), "step_counter": sc}
                    if mode == "hang":
                        _state["hang"] = True
                        _hang(frame, extra)
                    _record("timeout", "c_raiser(default-stream drain)", frame, extra)
                    if mode == "penalty":
                        _state["penalty"] = True
                    _arm_c_raiser(TIMEOUT_MSG)
                    return result
            if _state["pressure_requested"] and frame.f_back is not None \
                    and frame.f_back.f_code.co_name == "step" and _classify(frame) == "pressure":
                _pressure_cleared(frame, ctrl.get("seq"))  # an unarmed pressure clear ran: note it
                _record("clear", "pressure clear (not armed)", frame, {"trigger": "pressure"})
        return _orig_sync(*args, **kwargs)

    def _pressure_cleared(frame, seq):
        """The pressure clear runs: the stand-in ends, and the scheduler's cached active-memory
        sample (which the prefill guard reads between steps) is refreshed through the
        scheduler's own _current_usage_bytes, so no stand-in value outlives it."""
        _state["pressure_requested"] = False
        _state["pressure_done_seq"] = seq
        try:
            frame.f_back.f_locals["self"]._current_usage_bytes()
        except Exception:
            pass

    def _pressure_on():
        ctrl = _read_ctrl()
        return bool(ctrl.get("pressure")) and ctrl.get("seq") != _state["pressure_done_seq"]

    def get_cache_memory():
        extra = _fake_pool
        if _pressure_on():
            extra += _pressure_pool
            caller = sys._getframe(1)
            if (caller.f_code.co_name == "_pool_bytes" and caller.f_back is not None
                    and caller.f_back.f_code.co_name == "_request_scheduler_cache_reclaim"):
                _state["pressure_requested"] = True  # the enforcer is about to ask for the clear
        return _orig_cache_mem() + extra

    def _learn_ceiling():
        """The hard ceiling of oMLX's ProcessMemoryEnforcer (read once, through its own
        _get_hard_limit_bytes; the enforcer object is found among the live objects)."""
        import gc
        for obj in gc.get_objects():
            if type(obj).__name__ == "ProcessMemoryEnforcer" and hasattr(obj, "_get_hard_limit_bytes"):
                try:
                    _state["ceiling"] = int(obj._get_hard_limit_bytes())
                except Exception:
                    pass
                return

    def get_active_memory():
        real = _orig_active_mem()
        if not _pressure_on():
            return real
        if _state["ceiling"] is None:
            _learn_ceiling()
        if _state["ceiling"]:
            return max(real, int(_state["ceiling"] * 0.97))
        return real

    # An arm written for an earlier process of the same run never fires here.
    _state["consumed_seq"] = _read_ctrl().get("seq")
    _mx.synchronize = synchronize
    _mx.get_cache_memory = get_cache_memory
    _mx.get_active_memory = get_active_memory
