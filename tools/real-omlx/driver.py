"""Drive the real oMLX server through a scenario of fault_plan.json and write
<out>/<name>@<version>.server.log, .console.log and .truth.json (one set per server;
a scenario with "servers" runs several oMLX processes side by side, each named
<scenario>-<role>@<version>).

Env: OMLX_VENV (the venv holding the oMLX version under test; run.sh sets it),
H_REAL (work dir: models/, base/), PORT_OFFSET (added to every port)."""
import json, os, shutil, signal, socket, subprocess, sys, threading, time
from datetime import datetime, timezone
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
H = Path(os.environ.get("H_REAL", "/tmp/real-omlx"))
VENV = Path(os.environ["OMLX_VENV"]) if os.environ.get("OMLX_VENV") else None
if VENV is None or not (VENV / "bin" / "omlx").exists():
    raise SystemExit(f"driver.py: OMLX_VENV={VENV} has no bin/omlx (run it through run.sh, "
                     "or set OMLX_VENV to a venv with oMLX installed)")
VENV_BIN = VENV / "bin"
MODEL_DIR = H / "models"
MODEL = "tiny-llama"
PORT_OFFSET = int(os.environ.get("PORT_OFFSET", "0") or 0)


def omlx_version():
    """The version the venv really runs (not what the plan says)."""
    out = subprocess.run([str(VENV_BIN / "python"), "-c",
                          "import omlx, omlx._version as v; print(v.__version__); print(omlx.__file__)"],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return out[0].strip(), out[1].strip()


def utc(t=None):
    t = time.time() if t is None else t
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds")


class Run:
    def __init__(self, name, scen, outdir, role=None, peers=None):
        self.name, self.scen, self.out, self.role = name, scen, Path(outdir), role
        self.peers = peers if peers is not None else {}   # role -> Run, shared by every server
        self.base = H / "base" / name
        if self.base.exists():
            shutil.rmtree(self.base)
        self.base.mkdir(parents=True)
        self.port = scen.get("port", 18100) + PORT_OFFSET
        with socket.socket() as so:
            if so.connect_ex(("127.0.0.1", self.port)) == 0:
                raise SystemExit(f"port {self.port} is in use (another run?); set PORT_OFFSET")
        self.url = f"http://127.0.0.1:{self.port}"
        self.ctrl = self.base / "fault_control.json"
        self.shim_truth = self.base / "shim_truth.ndjson"
        self.console = open(self.base / "console.log", "ab")
        self.truth = {"name": name, "omlx_version": None, "omlx_commit": None,
                      "log_level": scen["log_level"], "tz": scen.get("tz", "UTC"),
                      "description": scen.get("description"), "role": role, "port": self.port,
                      "sessions": [], "requests": [], "arms": [], "notes": []}
        self.seq = 0
        self.proc = None
        self.cur = None
        self.c = httpx.Client(timeout=60)

    # ---- server lifecycle ----
    def start(self):
        env = dict(os.environ)
        env.update({
            "PYTHONPATH": str(HERE / "shims"),
            "OMLX_FAULT_CONTROL": str(self.ctrl),
            "OMLX_FAULT_TRUTH": str(self.shim_truth),
            "TZ": self.scen.get("tz", "UTC"),
            "PYTHONUNBUFFERED": "1",
            "HF_HUB_OFFLINE": "1",
        })
        if os.environ.get("OMLX_VERSION", "").startswith("0.4."):
            env["OMLX_SHIM_MLX_LM_LOAD_TRC"] = "1"   # see shims/sitecustomize.py
        if self.scen.get("fake_pool_bytes"):
            env["OMLX_FAKE_POOL_BYTES"] = str(self.scen["fake_pool_bytes"])
        cmd = [str(VENV_BIN / "omlx"), "serve", "--model-dir", str(MODEL_DIR),
               "--base-path", str(self.base), "--port", str(self.port),
               "--host", "127.0.0.1", "--log-level", self.scen["log_level"]]
        t0 = time.time()
        self.proc = subprocess.Popen(cmd, stdout=self.console, stderr=subprocess.STDOUT,
                                     env=env, cwd=str(self.base))
        self.cur = {"index": len(self.truth["sessions"]) + 1, "pid": self.proc.pid,
                    "start_utc": utc(t0), "start_t": t0, "stop": None,
                    "requests_ok": 0, "requests_failed": 0, "requests_hung": 0, "requests_rejected_4xx": 0,
                    "penalty_box_from_utc": None}
        self.truth["sessions"].append(self.cur)
        for _ in range(240):
            try:
                r = self.c.get(self.url + "/v1/models", timeout=2)
                if r.status_code == 200:
                    self.cur["ready_utc"] = utc()
                    return
            except Exception:
                pass
            if self.proc.poll() is not None:
                raise SystemExit(f"server exited early rc={self.proc.returncode}")
            time.sleep(0.5)
        raise SystemExit("server did not come up")

    def stop(self, how):
        sig = {"sigint": signal.SIGINT, "sigterm": signal.SIGTERM,
               "sigkill": signal.SIGKILL}[how]
        t = time.time()
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill(); rc = self.proc.wait()
            self.truth["notes"].append(f"session {self.cur['index']}: {how} did not stop it in 60s; SIGKILLed")
        self.cur["stop"] = {"how": how, "signal_utc": utc(t), "exited_utc": utc(), "exit_code": rc}
        self.proc = None
        time.sleep(1.0)

    # ---- traffic ----
    def _req(self, kind, i):
        msgs = [{"role": "user", "content": f"hello number {i}, tell me about metal"}]
        mt = self.scen.get("max_tokens", 24)
        if kind == "chat":
            return "POST", "/v1/chat/completions", {"model": MODEL, "messages": msgs, "max_tokens": mt}, False
        if kind == "chat_stream":
            return "POST", "/v1/chat/completions", {"model": MODEL, "messages": msgs, "max_tokens": mt, "stream": True}, True
        if kind == "completion":
            return "POST", "/v1/completions", {"model": MODEL, "prompt": f"Once upon a time {i}", "max_tokens": mt}, False
        if kind == "completion_stream":
            return "POST", "/v1/completions", {"model": MODEL, "prompt": f"Once upon a time {i}", "max_tokens": mt, "stream": True}, True
        if kind == "anthropic":
            return "POST", "/v1/messages", {"model": MODEL, "messages": msgs, "max_tokens": mt}, False
        if kind == "anthropic_stream":
            return "POST", "/v1/messages", {"model": MODEL, "messages": msgs, "max_tokens": mt, "stream": True}, True
        if kind == "bad_json":
            return "POST", "/v1/chat/completions", "{not json", False
        if kind == "bad_model":
            return "POST", "/v1/chat/completions", {"model": "no-such-model", "messages": msgs}, False
        if kind == "bad_missing":
            return "POST", "/v1/chat/completions", {"model": MODEL}, False
        if kind == "long_chat_stream":
            return "POST", "/v1/chat/completions", {"model": MODEL, "messages": msgs, "max_tokens": self.scen.get("long_tokens", 600), "temperature": 0, "stream": True}, True
        if kind == "long_chat":
            return "POST", "/v1/chat/completions", {"model": MODEL, "messages": msgs, "max_tokens": self.scen.get("long_tokens", 600), "temperature": 0}, False
        raise ValueError(kind)

    def request(self, kind, i=0, deadline_s=None, on_chunk=None):
        """Send one request; read the whole answer, giving up after deadline_s
        (a client that stops waiting: oMLX 0.5.3 never answers a request whose
        prefill failed in the penalty box)."""
        method, path, body, stream = self._req(kind, i)
        deadline_s = deadline_s or self.scen.get("request_deadline_s", 30)
        t0 = time.time()
        rec = {"session": self.cur["index"], "kind": kind, "path": path, "stream": stream,
               "sent_utc": utc(t0)}
        kw = {"content": body, "headers": {"content-type": "application/json"}} \
            if isinstance(body, str) else {"json": body}
        buf = b""
        try:
            with self.c.stream(method, self.url + path,
                               timeout=httpx.Timeout(5.0, read=deadline_s), **kw) as r:
                rec["status"] = r.status_code
                hung = False
                for chunk in r.iter_raw():
                    buf += chunk
                    if on_chunk is not None:
                        on_chunk(rec, buf)
                    if time.time() - t0 > deadline_s:
                        hung = True
                        break
            text = buf.decode("utf-8", "replace")
            low = text.lower()
            if hung:
                rec["outcome"] = "hung"
            elif r.status_code >= 400:
                rec["outcome"] = "rejected_4xx" if r.status_code < 500 else "error_5xx"
            elif ('"error"' in low or "event: error" in low or "command buffer" in low
                  or '"finish_reason":"error"' in low):
                rec["outcome"] = "failed"
            elif not text.strip():
                rec["outcome"] = "hung"
            else:
                rec["outcome"] = "ok"
            rec["body_tail"] = text[-300:]
        except httpx.ReadTimeout:
            rec["outcome"] = "hung"
            rec["body_tail"] = buf.decode("utf-8", "replace")[-300:]
        except Exception as e:  # noqa: BLE001
            rec["status"] = rec.get("status")
            rec["outcome"] = "exception"
            rec["error"] = repr(e)
        rec["done_utc"] = utc()
        self.truth["requests"].append(rec)
        key = {"ok": "requests_ok", "failed": "requests_failed", "error_5xx": "requests_failed",
               "exception": "requests_failed", "hung": "requests_hung",
               "rejected_4xx": "requests_rejected_4xx"}[rec["outcome"]]
        self.cur[key] = self.cur.get(key, 0) + 1
        return rec

    def traffic(self, kinds, gap=0.5):
        for i, k in enumerate(kinds):
            self.request(k, i)
            time.sleep(gap)

    def kill_mid_stream(self, kind, after_bytes):
        """SIGKILL the server while a streaming answer is being written: once the client has
        read after_bytes of it. The request's record says how much it got."""
        got = threading.Event()

        def on_chunk(rec, buf):
            if len(buf) >= after_bytes and not got.is_set():
                rec["bytes_before_kill"] = len(buf)
                got.set()

        t = threading.Thread(target=self.request, args=(kind, 300), kwargs={"on_chunk": on_chunk})
        t.start()
        if not got.wait(60):
            self.truth["notes"].append(f"kill_mid_stream: {kind} wrote no {after_bytes} bytes in 60 s")
        self.cur["killed_mid_stream"] = {"kind": kind, "after_bytes": after_bytes, "kill_utc": utc()}
        self.stop("sigkill")
        t.join(30)

    # ---- faults ----
    def _shim_records(self):
        if not self.shim_truth.exists():
            return []
        return [json.loads(l) for l in self.shim_truth.read_text().splitlines() if l.strip()]

    def _write_ctrl(self, **ctrl):
        tmp = self.ctrl.with_suffix(".tmp")
        tmp.write_text(json.dumps(ctrl))
        os.replace(tmp, self.ctrl)

    def _pressure_trigger(self, kind, i, ctrl):
        """The trigger request, with the pressure stand-in switched on once its prefill is behind
        it (0.5 s in); then a short request arrives, whose admission makes the scheduler sample
        the memory figures the enforcer reads while requests run (oMLX's prefill guard reads the
        same figures: that short request may be refused, as under real pressure)."""
        t = threading.Thread(target=self.request, args=(kind, i))
        t.start()
        time.sleep(0.5)
        self._write_ctrl(**ctrl, pressure=True)
        self.request("chat", i + 1000)
        t.join()
        self._write_ctrl(**ctrl, pressure=False)

    def arm(self, mode, target, label, trigger_with="chat", wait_s=30, pressure=False):
        self.seq += 1
        ctrl = {"seq": self.seq, "mode": mode, "target": target, "label": label}
        self._write_ctrl(**ctrl, pressure=False)
        a = {"session": self.cur["index"], "seq": self.seq, "mode": mode, "target": target,
             "label": label, "armed_utc": utc(), "pressure": pressure}
        self.truth["arms"].append(a)
        deadline = time.time() + wait_s
        i = 0
        while time.time() < deadline:
            if trigger_with and pressure:
                self._pressure_trigger(trigger_with, 100 + i, ctrl); i += 1
            elif trigger_with:
                self.request(trigger_with, 100 + i); i += 1
            time.sleep(0.5 if mode != "hang" else 2.0)
            recs = [r for r in self._shim_records() if r.get("seq") == self.seq]
            if recs:
                a["fired_utc"] = recs[0]["utc"]; a["trigger"] = recs[0]["trigger"]
                a["shim_stack"] = recs[0].get("stack")
                a["other_servers_running"] = [r for r, o in self.peers.items()
                                              if o is not self and o.proc is not None and o.proc.poll() is None]
                if mode == "penalty" and self.cur["penalty_box_from_utc"] is None:
                    self.cur["penalty_box_from_utc"] = recs[0]["utc"]
                return
        a["fired_utc"] = None
        self.truth["notes"].append(f"arm {label} did not fire within {wait_s}s")

    def finish(self):
        recs = self._shim_records()
        self.truth["shim_records"] = recs
        # injected faults: one per fired arm; the penalty-box repeats are the
        # SubmissionsIgnored records after it
        faults = []
        for a in self.truth["arms"]:
            if not a.get("fired_utc") or a["mode"] == "hang":  # a hang raises nothing: a wedge, below
                continue
            busy = [q for q in self.truth["requests"] if q["session"] == a["session"]
                    and q["sent_utc"] <= a["fired_utc"] <= q["done_utc"]]
            faults.append({"session": a["session"], "label": a["label"], "time_utc": a["fired_utc"],
                           "kind": "timeout", "trigger": a.get("trigger"),
                           "expected_outcome": "penalty_box" if a["mode"] == "penalty" else "absorbed",
                           "requests_in_flight_at_fault": len(busy),
                           "other_servers_running": a.get("other_servers_running"),
                           "raised_in": (a.get("shim_stack") or [None])[0]})
        self.truth["faults"] = faults
        wedges = []
        for a in self.truth["arms"]:
            if a["mode"] != "hang" or not a.get("fired_utc"):
                continue
            sess = next(s for s in self.truth["sessions"] if s["index"] == a["session"])
            after = [q for q in self.truth["requests"] if q["session"] == a["session"]
                     and q["sent_utc"] >= a["fired_utc"] and not q["kind"].startswith("bad_")]
            wedges.append({"session": a["session"], "label": a["label"], "start_utc": a["fired_utc"],
                           "trigger": a.get("trigger"),
                           "end_utc": (sess["stop"] or {}).get("exited_utc"),
                           "end_how": (sess["stop"] or {}).get("how"),
                           "requests_sent_while_wedged": len(after),
                           "requests_ok_while_wedged": len([q for q in after if q["outcome"] == "ok"])})
        self.truth["wedges"] = wedges
        self.truth["unarmed_clears"] = [r for r in recs if r["kind"] == "clear"]
        dead = []
        for s in self.truth["sessions"]:
            if s["penalty_box_from_utc"]:
                si = [r for r in recs if r["kind"] == "submissions_ignored" and r["pid"] == s["pid"]]
                dead.append({"session": s["index"], "start_utc": s["penalty_box_from_utc"],
                             "end_utc": (s["stop"] or {}).get("exited_utc"),
                             "end_how": (s["stop"] or {}).get("how"),
                             "submissions_ignored_raises": len(si),
                             "submissions_ignored_raises_by_caller": _count_callers(si),
                             "requests_sent_while_dead": len([q for q in self.truth["requests"]
                                  if q["session"] == s["index"] and q["sent_utc"] >= s["penalty_box_from_utc"]
                                  and not q["kind"].startswith("bad_")])})
        self.truth["dead_windows"] = dead
        (self.out / f"{self.name}.truth.json").write_text(json.dumps(self.truth, indent=1))
        shutil.copy(self.base / "logs" / "server.log", self.out / f"{self.name}.server.log")
        self.console.close()
        shutil.copy(self.base / "console.log", self.out / f"{self.name}.console.log")
        crash = self.base / "logs" / "crash.log"
        if crash.exists() and crash.stat().st_size:
            shutil.copy(crash, self.out / f"{self.name}.crash.log")


def _count_callers(recs):
    out = {}
    for r in recs:
        k = r["how"] + " <- " + ",".join(s.split(":")[-1] for s in r["stack"][:3])
        out[k] = out.get(k, 0) + 1
    return out


def main():
    plan = json.loads((HERE / "fault_plan.json").read_text())
    sname, outdir = sys.argv[1], sys.argv[2]
    scen = plan["scenarios"][sname]
    version, omlx_file = omlx_version()
    commit = os.environ.get("OMLX_COMMIT")
    runs = {}
    if "servers" in scen:   # several oMLX processes side by side, one log each
        for role, over in scen["servers"].items():
            sc = dict(scen); sc.update(over)
            runs[role] = Run(f"{sname}-{role}@{version}", sc, outdir, role, runs)
    else:
        runs[None] = Run(f"{sname}@{version}", scen, outdir, None, runs)
    for r in runs.values():
        r.truth.update({"scenario": sname, "omlx_version": version, "omlx_commit": commit,
                        "omlx_module": omlx_file, "other_servers": [x for x in runs if x != r.role]})
    mixes = plan["mixes"]
    try:
        for step in scen["steps"]:
            op = step["op"]
            # a step without "srv" (sleep) goes to the first server
            run = runs.get(step.get("srv"), next(iter(runs.values())))
            name = run.name
            print(utc(), name, json.dumps(step), flush=True)
            if op == "start":
                run.start()
            elif op == "stop":
                run.stop(step["how"])
            elif op == "traffic":
                run.traffic(mixes[step["mix"]] * step.get("repeat", 1), step.get("gap", 0.5))
            elif op == "arm":
                run.arm(step["mode"], step["target"], step["label"],
                        step.get("trigger_with", "chat"), step.get("wait_s", 30),
                        step.get("pressure", False))
            elif op == "kill_mid_stream":
                run.kill_mid_stream(step.get("kind", "long_chat_stream"), step.get("after_bytes", 2000))
            elif op == "sleep":
                time.sleep(step["s"])
            elif op == "probe_dead":
                for i in range(step["n"]):
                    m = run.c.get(run.url + "/v1/models")
                    run.cur.setdefault("models_probe_status_while_dead", []).append(m.status_code)
                    run.request(step.get("kind", "chat"), 200 + i, step.get("deadline_s", 10))
                    time.sleep(step["every_s"])
            else:
                raise ValueError(op)
    finally:
        for run in runs.values():
            if run.proc is not None:
                run.stop("sigint")
        for run in runs.values():
            run.finish()


if __name__ == "__main__":
    main()
