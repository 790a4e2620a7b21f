"""Issue 19: no destroyed input, no false all-clear, and the conventions users bring from other tools,
each through CliRunner and as a real process."""

from __future__ import annotations

import bz2
import gzip
import inspect
import json
import lzma
import os
import pty
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, REAL, ROOT, WARN
from omlx_logscan.cli import COMMANDS
from omlx_logscan.cli.app import app

runner = CliRunner()
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
BATCH = ["events", "timeline", "sessions", "bounds", "report", "check"]


def run(args: list[str], stdin: object = subprocess.DEVNULL, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "omlx_logscan", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        **kwargs,
    )


def _sessions(document: str) -> list[dict[str, object]]:
    """The sessions of a ``sessions -f json`` document, without the name and host their input had."""
    return [{k: v for k, v in s.items() if k not in ("source", "host")} for s in json.loads(document)["sessions"]]


# 1. Safety


@pytest.mark.parametrize("command", BATCH)
def test_an_output_that_is_an_input_is_refused_and_the_log_kept(tmp_path: Path, command: str) -> None:
    log = tmp_path / "copy.log"
    log.write_bytes(EXAMPLE.read_bytes())
    extra = ["--by", "omlx"] if command == "bounds" else []
    result = runner.invoke(app, [command, str(log), "-o", str(log), *extra])
    assert result.exit_code == 2 and "is an input" in result.stderr and len(result.stderr.splitlines()) == 1
    assert log.read_bytes() == EXAMPLE.read_bytes()


@pytest.mark.slow
def test_a_hard_link_or_a_folder_member_or_stdin_as_output_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(EXAMPLE.read_bytes())
    os.link(log, tmp_path / "alias.log")
    assert runner.invoke(app, ["timeline", str(log), "-o", str(tmp_path / "alias.log")]).exit_code == 2
    assert runner.invoke(app, ["timeline", str(tmp_path), "-o", str(log)]).exit_code == 2
    with open(log, "rb") as handle:
        result = run(["timeline", "-o", str(log)], stdin=handle)
    assert result.returncode == 2 and "is an input" in result.stderr
    assert log.read_bytes() == EXAMPLE.read_bytes()


def test_watch_refuses_to_write_the_file_it_follows(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(WARN.format(1, 1))
    result = runner.invoke(app, ["watch", str(log), "-o", str(log), "--exit-at-end"])
    assert result.exit_code == 2 and "is the followed log" in result.stderr


@pytest.mark.slow
def test_an_output_that_is_no_regular_file_is_written_to_itself() -> None:
    result = run(["sessions", str(EXAMPLE), "-q", "-f", "json", "-o", "/dev/stdout"])
    assert result.returncode == 0 and json.loads(result.stdout)["schema"] == "omlx-logscan/sessions/2"
    assert Path("/dev/null").is_char_device()
    assert run(["events", str(EXAMPLE), "-q", "-o", "/dev/null"]).returncode == 0
    assert Path("/dev/null").is_char_device()  # written to, not renamed over


def test_an_unwritable_output_is_refused_before_reading(tmp_path: Path) -> None:
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "-o", str(tmp_path / "missing" / "out.txt")])
    assert result.exit_code == 2 and "cannot write" in result.stderr
    assert "read " not in result.stderr  # refused before the accounting of a read


def test_outputs_are_replaced_whole_and_leave_no_temporary_file(tmp_path: Path) -> None:
    out = tmp_path / "timeline.txt"
    out.write_text("the old report\n")
    assert runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "-o", str(out)]).exit_code == 0
    assert out.read_text().startswith("oMLX log timeline")
    assert [p.name for p in tmp_path.iterdir()] == ["timeline.txt"]


def test_an_interrupted_run_leaves_the_old_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omlx_logscan.output import text

    out = tmp_path / "timeline.txt"
    out.write_text("the old report\n")

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(text, "timeline_text", interrupted)
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "-o", str(out)])
    assert result.exit_code == 130 and "interrupted" in result.stderr
    assert out.read_text() == "the old report\n" and len(list(tmp_path.iterdir())) == 1


def _wait_until_python_catches_sigint(pid: int) -> None:
    """Until the child's interpreter has its SIGINT handler (a signal before it would kill it outright)."""
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        pytest.skip("needs /proc to tell when the child catches SIGINT")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        caught = next(line for line in status.read_text().splitlines() if line.startswith("SigCgt:"))
        if int(caught.split()[1], 16) & (1 << (signal.SIGINT - 1)):
            return
        time.sleep(0.01)
    raise AssertionError("the child never installed its SIGINT handler")


@pytest.mark.slow
def test_ctrl_c_in_a_batch_command_is_130_and_keeps_the_old_output(tmp_path: Path) -> None:
    out = tmp_path / "events.ndjson"
    out.write_text("old\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "omlx_logscan", "events", "-", "-o", str(out)],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdin is not None and process.stderr is not None
    process.stdin.write(EXAMPLE.read_bytes())
    process.stdin.flush()  # the pipe stays open: the command is still reading when the signal comes
    _wait_until_python_catches_sigint(process.pid)
    process.send_signal(signal.SIGINT)
    process.stdin.close()  # as the writer of a pipe would, dying of the same Ctrl-C
    assert process.wait(timeout=120) == 130
    assert process.stderr.read().decode().strip().endswith("interrupted")
    assert out.read_text() == "old\n" and len(list(tmp_path.iterdir())) == 1


@pytest.mark.slow
def test_ctrl_c_while_a_pipe_s_writer_stays_silent_is_130_at_once() -> None:
    """A read of a pipe whose writer holds it open and writes nothing is not waited for."""
    process = subprocess.Popen(
        [sys.executable, "-m", "omlx_logscan", "timeline", "-", "-q"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdin is not None and process.stderr is not None
    try:
        process.stdin.write(EXAMPLE.read_bytes())
        process.stdin.flush()  # and held open: a worker waits in its next read
        _wait_until_python_catches_sigint(process.pid)
        time.sleep(0.5)  # the scan is under way, waiting on the silent pipe
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130  # while the writer still holds the pipe open
    finally:
        process.kill()
        process.stdin.close()
    assert process.stderr.read().decode().strip().endswith("interrupted")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, a device every write to fails")
@pytest.mark.parametrize("command", [["timeline"], ["events", "-f", "parquet"], ["events", "-f", "ndjson"]])
def test_a_device_that_refuses_the_output_is_a_one_line_error(command: list[str]) -> None:
    result = runner.invoke(app, [*command, str(EXAMPLE), "-q", "-o", "/dev/full"])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == "logscan: error: /dev/full: cannot write (No space left on device)"


@pytest.mark.slow
def test_watch_appends_to_its_output(tmp_path: Path) -> None:
    log, out = tmp_path / "server.log", tmp_path / "watch.ndjson"
    log.write_text(EXAMPLE.read_text())
    out.write_text('{"earlier": true}\n')
    result = run(["watch", str(log), "--exit-at-end", "-o", str(out), "-f", "ndjson"])
    assert result.returncode == 0, result.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == '{"earlier": true}' and len(lines) > 1 and all(json.loads(line) for line in lines)


@pytest.mark.slow
def test_dash_output_is_stdout_and_the_extension_picks_the_format(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sessions", str(EXAMPLE), "-q", "-o", "-", "-f", "json"])
    assert json.loads(result.stdout)["schema"] == "omlx-logscan/sessions/2" and not Path("-").exists()
    for name, check in (
        ("ev.csv", lambda text: text.startswith("time,source,line")),
        ("ev.jsonl", lambda text: all(json.loads(line) for line in text.splitlines())),
        ("ev.json", lambda text: json.loads(text)["schema"].startswith("omlx-logscan/events")),
    ):
        assert runner.invoke(app, ["events", str(EXAMPLE), "-q", "-o", str(tmp_path / name)]).exit_code == 0
        assert check((tmp_path / name).read_text()), name
    assert runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "-o", str(tmp_path / "t.md")]).exit_code == 0
    assert (tmp_path / "t.md").read_text().startswith("#")
    assert runner.invoke(app, ["check", str(EXAMPLE), "-q", "-o", str(tmp_path / "c.xml")]).exit_code == 1
    assert (tmp_path / "c.xml").read_text().startswith("<?xml")
    refused = runner.invoke(app, ["timeline", str(EXAMPLE), "-o", str(tmp_path / "t.csv")])
    assert refused.exit_code == 2 and "does not write" in refused.stderr
    explicit = runner.invoke(app, ["events", str(EXAMPLE), "-q", "-f", "ndjson", "-o", str(tmp_path / "x.csv")])
    assert explicit.exit_code == 0 and json.loads((tmp_path / "x.csv").read_text().splitlines()[0])


def test_a_sarif_output_file_picks_sarif(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(EXAMPLE), "-q", "-o", str(tmp_path / "results.sarif")])
    assert result.exit_code == 1
    assert json.loads((tmp_path / "results.sarif").read_text())["version"] == "2.1.0"


HEADLINE = "logscan check: 5 findings (penalty_box 2, dead_engine 2, gpu_fault 1)"


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "github"])
def test_check_prints_its_verdict_on_stdout_when_it_writes_a_file(tmp_path: Path, fmt: str) -> None:
    result = runner.invoke(app, ["check", str(EXAMPLE), "-q", "-f", fmt, "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and result.stdout == HEADLINE + "\n"
    assert (tmp_path / "out").read_text()


@pytest.mark.parametrize("fmt", ["json", "junit", "sarif"])
def test_a_document_on_stdout_gets_no_verdict_line(fmt: str) -> None:
    result = runner.invoke(app, ["check", str(EXAMPLE), "-q", "-f", fmt])
    assert HEADLINE not in result.stdout


# 2. No false all-clear


@pytest.mark.slow
@pytest.mark.parametrize("command", [*BATCH])
def test_input_that_is_no_omlx_log_is_refused_by_every_command(command: str) -> None:
    extra = ["--by", "omlx"] if command == "bounds" else []
    result = runner.invoke(app, [command, str(ROOT / "README.md"), *extra])
    assert result.exit_code == 2
    assert re.fullmatch(
        r"logscan: error: \S+README\.md: does not look like an oMLX log \(\d+ lines, none recognised\); "
        r"--force reads it anyway\n",
        result.stderr,
    )
    forced = runner.invoke(app, [command, str(ROOT / "README.md"), "--force", "-q", *extra])
    assert forced.exit_code == 0, forced.stderr


@pytest.mark.parametrize(
    ("name", "recognised"),
    [
        ("omlx-issue-725.log", True),  # the menubar app's own records (omlx_app)
        ("omlx-issue-862.log", True),  # a kernel panic
        ("omlx-issue-410.log", True),  # a macOS crash report
        ("omlx-issue-1566.log", True),  # routine INFO records of oMLX's cache only, counted by the scan
        ("omlx-issue-342.log", True),  # routine DEBUG records only
        ("omlx-issue-3711.log", False),  # a client's error, not the server's
    ],
)
def test_real_pastes_are_recognised_by_what_they_hold(name: str, recognised: bool) -> None:
    result = runner.invoke(app, ["sessions", str(REAL / name), "-q"])
    assert result.exit_code == (0 if recognised else 2), result.stderr
    assert runner.invoke(app, ["sessions", str(REAL / name), "-q", "--force"]).exit_code == 0


@pytest.mark.parametrize(("logger", "code"), [("omlx.cache.prefix_cache", 0), ("uvicorn.access", 2)])
def test_routine_records_count_only_when_they_are_omlx_records(tmp_path: Path, logger: str, code: int) -> None:
    log = tmp_path / "server.log"  # records of no kind: the scan counts them without handing them over
    log.write_text(
        "".join(f"2026-05-31 19:15:{n:02d},612 - {logger} - INFO - [-] - cache block {n}\n" for n in range(40))
    )
    assert runner.invoke(app, ["timeline", str(log), "-q"]).exit_code == code


@pytest.mark.slow
def test_watch_refuses_a_file_that_is_no_omlx_log_unless_forced(tmp_path: Path) -> None:
    result = run(["watch", str(ROOT / "README.md"), "--exit-at-end"])
    assert result.returncode == 2 and "does not look like an oMLX log" in result.stderr
    assert run(["watch", str(ROOT / "README.md"), "--exit-at-end", "--force", "-q"]).returncode == 0
    big = tmp_path / "big.log"  # only the head is read: oMLX lines after the first MiB do not count
    big.write_text("a line of something else\n" * 50_000 + WARN.format(1, 1))
    refused = runner.invoke(app, ["watch", str(big), "--exit-at-end"])
    assert refused.exit_code == 2 and "lines of its first MiB, none recognised" in refused.stderr
    empty = tmp_path / "server.log"
    empty.write_text("")  # a log oMLX has not written to yet is waited for, not refused
    assert runner.invoke(app, ["watch", str(empty), "--exit-at-end", "-q"]).exit_code == 0


@pytest.mark.parametrize(
    "text",
    [
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer "
        "execution failed: Internal Error\n",
        "Fatal Python error: Segmentation fault\n\nThread 0x00000001f0 (most recent call first):\n"
        '  File "/x/y.py", line 3 in foo\n',
    ],
)
def test_crash_evidence_alone_is_recognised(tmp_path: Path, text: str) -> None:
    log = tmp_path / "crash.log"
    log.write_text(text)
    assert runner.invoke(app, ["sessions", str(log), "-q"]).exit_code == 0


@pytest.mark.slow
@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_data_is_read_by_its_magic_bytes_without_a_suffix_and_on_stdin(
    tmp_path: Path, compress: object
) -> None:
    data = compress(EXAMPLE.read_bytes())  # type: ignore[operator]
    plain = runner.invoke(app, ["sessions", str(EXAMPLE), "-q", "-f", "json"]).stdout
    named = tmp_path / "no-suffix"
    named.write_bytes(data)
    assert _sessions(runner.invoke(app, ["sessions", str(named), "-q", "-f", "json"]).stdout) == _sessions(plain)
    result = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "sessions", "-q", "-f", "json"],
        input=data,
        capture_output=True,
        env=ENV,
        timeout=120,
    )
    assert result.returncode == 0 and _sessions(result.stdout.decode()) == _sessions(plain)


def test_zstd_is_read_or_refused_with_a_hint(tmp_path: Path) -> None:
    frame = bytes.fromhex("28b52ffd") + b"\x00" * 16
    log = tmp_path / "server.log"
    log.write_bytes(frame)
    result = runner.invoke(app, ["sessions", str(log)])
    try:
        import zstandard  # noqa: F401
    except ImportError:
        assert result.exit_code == 2 and "zstd-compressed data" in result.stderr
    else:
        assert result.exit_code == 2 and "corrupt" in result.stderr


@pytest.mark.slow
def test_an_empty_window_says_so_and_check_passes_unless_fail_on_empty() -> None:
    result = runner.invoke(app, ["check", str(EXAMPLE), "--since", "2030-01-01"])
    assert result.exit_code == 0
    assert "no records between 2030-01-01 00:00:00 and the end; the log spans 2026-06-20 12:07:22 → " in result.stderr
    failing = runner.invoke(app, ["check", str(EXAMPLE), "--since", "2030-01-01", "--fail-on-empty"])
    assert failing.exit_code == 1
    why = "logscan check: fail: no records between 2030-01-01 00:00:00 and the end (--fail-on-empty)"
    assert failing.stdout.splitlines()[-1] == why
    assert result.stdout.startswith("logscan check: nothing to check, no records (")
    assert failing.stdout.startswith("logscan check: 1 finding (empty 1)")
    for shown in (result.stdout, failing.stdout):  # no rule "passes" on nothing
        assert " pass " not in shown and shown.count("no records   0") == 10
    for fmt in ("json", "junit", "sarif", "github"):  # every format says the check failed, and why
        shown = runner.invoke(app, ["check", str(EXAMPLE), "-q", "--since", "2030-01-01", "--fail-on-empty", "-f", fmt])
        assert shown.exit_code == 1 and "empty" in shown.stdout, fmt
    document = json.loads(
        runner.invoke(
            app, ["check", str(EXAMPLE), "-q", "--since", "2030-01-01", "--fail-on-empty", "-f", "json"]
        ).stdout
    )
    assert document["status"] == "findings" and document["exit_code"] == 1
    assert [finding["rule"] for finding in document["findings"]] == ["empty"]
    process = run(["check", str(EXAMPLE), "--since", "1h"])
    assert process.returncode == 0 and "no records between" in process.stderr


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_an_empty_window_of_a_dated_log_says_what_the_log_spans_not_that_it_has_no_timestamps(fmt: str) -> None:
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "-f", fmt, "--since", "2030-01-01"])
    assert result.exit_code == 0 and "no timestamps" not in result.stdout
    spans = "the log spans 2026-06-20 12:07:22 → 2026-09-16 09:29:33"
    span_line = next(line for line in result.stdout.splitlines() if "span" in line.lower())
    assert span_line.endswith(f"none in the window; {spans}"), span_line
    assert f"No GPU faults in 0 sessions (none in the window; {spans})." in result.stdout


# 5. Conventions


def test_since_takes_durations_then_dates_and_refuses_a_bare_number() -> None:
    from datetime import datetime

    from omlx_logscan.cli.values import parse_when
    from omlx_logscan.errors import LogscanError

    assert parse_when("15 Sep 2026", None) == datetime(2026, 9, 15)
    assert parse_when("1 Dec", None).month == 12
    assert (datetime.now() - parse_when("3h", None)).total_seconds() == pytest.approx(3 * 3600, abs=5)
    assert (datetime.now() - parse_when("1h30m", None)).total_seconds() == pytest.approx(5400, abs=5)
    with pytest.raises(LogscanError, match="bare number is ambiguous"):
        parse_when("20260915", None)
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "-f", "json", "--since", "16 Sep 2026"])
    assert {f["time"][:10] for f in json.loads(result.stdout)["faults"]} == {"2026-09-16"}


@pytest.mark.parametrize(("text", "seconds"), [("-1h", 3600), ("-30m", 1800), ("-2d", 172800), ("-1h30m", 5400)])
def test_since_minus_a_duration_is_that_long_ago_as_in_journalctl(text: str, seconds: int) -> None:
    from datetime import datetime

    from omlx_logscan.cli.values import parse_when

    assert (datetime.now() - parse_when(text, None)).total_seconds() == pytest.approx(seconds, abs=5)


@pytest.mark.slow
def test_since_minus_an_hour_as_a_process_reads_an_hour_ago() -> None:
    from datetime import datetime, timedelta

    process = run(["events", str(EXAMPLE), "-q", "--since", "-1h"])
    lower = re.search(r"no records between (\S+ \S+) and the end", process.stderr)
    assert process.returncode == 0 and lower, process.stderr
    ago = datetime.now() - datetime.fromisoformat(lower[1])
    assert abs(ago - timedelta(hours=1)) < timedelta(minutes=1)


@pytest.mark.parametrize("option", ["--since", "--until"])
def test_a_time_in_the_future_is_refused_with_a_hint(option: str) -> None:
    result = runner.invoke(app, ["events", str(EXAMPLE), option, "+1h"])
    assert result.exit_code == 2
    assert result.stderr == f"logscan: error: {option} '+1h': a time in the future (for 1h ago give -1h or 1h)\n"


@pytest.mark.slow
def test_lifetime_numbers_do_not_depend_on_the_window() -> None:
    whole = json.loads(runner.invoke(app, ["sessions", str(EXAMPLE), "-q", "-f", "json"]).stdout)["sessions"]
    cut = json.loads(
        runner.invoke(app, ["sessions", str(EXAMPLE), "-q", "-f", "json", "--since", "2026-09-15 20:00"]).stdout
    )["sessions"]
    assert cut[0]["index"] > 1
    by_index = {s["index"]: s for s in whole}
    for session in cut[1:]:
        assert by_index[session["index"]]["start"] == session["start"]
    faults = json.loads(
        runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "-f", "json", "--since", "2026-09-16"]).stdout
    )["faults"]
    all_faults = json.loads(runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "-f", "json"]).stdout)["faults"]
    numbers = {f["time"]: f["session"] for f in all_faults}
    assert faults and all(numbers[f["time"]] == f["session"] for f in faults)


@pytest.mark.slow
def test_stdin_is_read_when_it_is_a_pipe_or_a_file_else_the_default_folder(tmp_path: Path) -> None:
    expected = runner.invoke(app, ["sessions", str(EXAMPLE), "-q", "-f", "json"]).stdout
    with open(EXAMPLE, "rb") as handle:
        from_file = run(["sessions", "-q", "-f", "json"], stdin=handle)
    assert from_file.returncode == 0 and _sessions(from_file.stdout) == _sessions(expected)
    piped = subprocess.run(
        f"cat {EXAMPLE} | {sys.executable} -m omlx_logscan sessions -q -f json",
        shell=True,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert piped.returncode == 0 and _sessions(piped.stdout) == _sessions(expected)
    base = tmp_path / "base"
    (base / "logs").mkdir(parents=True)
    (base / "logs" / "server.log").write_bytes(EXAMPLE.read_bytes())
    for given in (["--base-path", str(base)], []):
        env = {**ENV, "OMLX_BASE_PATH": str(base)} if not given else ENV
        result = subprocess.run(
            [sys.executable, "-m", "omlx_logscan", "sessions", "-q", "-f", "json", *given],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert result.returncode == 0 and _sessions(result.stdout) == _sessions(expected), result.stderr
        hosts = {session.get("host") for session in json.loads(result.stdout)["sessions"]}
        assert hosts == {socket.gethostname().split(".")[0]}  # oMLX's own folder here is this machine's
    assert "host" not in json.loads(expected)["sessions"][0]  # a file given by name has no host label
    nowhere = {**ENV, "OMLX_BASE_PATH": str(tmp_path / "nowhere")}
    terminal, other_end = pty.openpty()
    try:
        stdins: list[dict[str, object]] = [
            {"stdin": subprocess.DEVNULL},
            {"stdin": terminal},
            {"stdin": subprocess.DEVNULL, "preexec_fn": lambda: os.close(0)},  # a closed stdin
        ]
        for stdin in stdins:
            result = subprocess.run(
                [sys.executable, "-m", "omlx_logscan", "sessions", "-q"],
                capture_output=True,
                text=True,
                env=nowhere,
                timeout=120,
                **stdin,  # type: ignore[arg-type]
            )
            assert result.returncode == 2 and f"{tmp_path / 'nowhere' / 'logs'}: no such folder" in result.stderr
    finally:
        os.close(terminal)
        os.close(other_end)


@pytest.mark.slow
def test_comma_lists_and_limit() -> None:
    result = runner.invoke(app, ["events", str(EXAMPLE), "-q", "-f", "ndjson", "-k", "gpu_error,process_start"])
    kinds = {json.loads(line)["kind"] for line in result.stdout.splitlines()}
    assert kinds == {"gpu_error", "process_start"}
    limited = runner.invoke(app, ["events", str(EXAMPLE), "-q", "-f", "ndjson", "-n", "3"])
    assert len(limited.stdout.splitlines()) == 3


@pytest.mark.slow
def test_usage_errors_are_one_line_and_a_hint() -> None:
    for args in (["timeline", "--bogus"], ["timeline", "-f", "nope", str(EXAMPLE)]):
        result = run(args)
        lines = result.stderr.splitlines()
        assert result.returncode == 2 and len(lines) == 2, result.stderr
        assert lines[0].startswith("logscan: error: ") and lines[1] == "logscan: hint: see 'logscan timeline --help'"
        assert runner.invoke(app, args).stderr == result.stderr


@pytest.mark.slow
def test_color_always_and_never() -> None:
    always = runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "--color", "always"], env={"NO_COLOR": "1"})
    assert "\x1b[" in always.stdout
    never = runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "--color", "never"], env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in never.stdout
    assert "FORCE_COLOR" not in os.environ  # the setting is the command's, not left behind
    machine = run(["timeline", str(EXAMPLE), "-q", "--color", "always", "-f", "json"])
    assert machine.returncode == 0 and "\x1b" not in machine.stdout and json.loads(machine.stdout)


@pytest.mark.slow
def test_shell_completion_is_offered_and_completes() -> None:
    result = runner.invoke(app, ["--help"])
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout
    env = {**ENV, "_LOGSCAN_COMPLETE": "complete_bash", "COMP_WORDS": "logscan ti", "COMP_CWORD": "1"}
    completed = subprocess.run(
        [sys.executable, "-m", "omlx_logscan"], capture_output=True, text=True, env=env, timeout=120
    )
    assert completed.returncode == 0 and completed.stdout.split() == ["timeline"]


def _completions(line: str) -> list[str]:
    """What bash completion offers for the last word of ``line`` (empty after a trailing space)."""
    env = {**ENV, "_LOGSCAN_COMPLETE": "complete_bash", "COMP_WORDS": line, "COMP_CWORD": str(line.count(" "))}
    completed = subprocess.run(
        [sys.executable, "-m", "omlx_logscan"], capture_output=True, text=True, env=env, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.split()


@pytest.mark.slow
def test_enumerated_values_complete_and_a_comma_list_completes_its_last_name() -> None:
    assert _completions("logscan events -f j") == ["json"]
    assert _completions("logscan events -k gpu") == ["gpu_error"]
    assert _completions("logscan events --kind request_a") == ["request_arrival", "request_abort"]
    assert _completions("logscan events -k gpu_error,cra") == ["gpu_error,crash_report"]
    assert _completions("logscan check --fail-on penalty") == ["penalty_box"]
    assert _completions("logscan check --fail-on crash,dead") == ["crash,dead_engine"]
    assert _completions("logscan watch -k model_") == ["model_load", "model_unload", "model_load_failed"]


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (["events", "-k", "gpu_eror"], "gpu_error"),
        (["events", "-k", "crash_report,gpu_eror"], "gpu_error"),
        (["events", "-k", "GPU_ERROR"], "gpu_error"),
        (["check", "--fail-on", "Penalty_Box"], "penalty_box"),
        (["watch", "-k", "gpu_eror"], "gpu_error"),
        (["check", "--fail-on", "penalty_bx"], "penalty_box"),
        (["events", "-f", "jsn"], "json"),
        (["check", "-f", "sarf"], "sarif"),
        (["timeline", "--color", "alwys"], "always"),
        (["bounds", "--by", "omx"], "omlx"),
        (["schema", "timelin"], "timeline"),
    ],
)
def test_a_mistyped_value_gets_the_closest_one_suggested(args: list[str], suggestion: str) -> None:
    result = runner.invoke(app, [*args, str(EXAMPLE)] if args[0] != "schema" else args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0].endswith(f"; did you mean {suggestion}?"), result.stderr


def test_a_value_nothing_is_close_to_gets_no_suggestion() -> None:
    result = runner.invoke(app, ["events", str(EXAMPLE), "-k", "zzz"])
    assert result.exit_code == 2 and "did you mean" not in result.stderr


@pytest.mark.slow
def test_piped_sessions_are_plain_aligned_text_one_line_each() -> None:
    process = run(["sessions", str(EXAMPLE), "-q"])
    zone, *lines = process.stdout.splitlines()
    assert process.returncode == 0 and len(lines) == 1 + 160 and zone.startswith("times: read in ")
    assert not re.search("[\u2500-\u257f]", process.stdout)  # no box drawing
    assert all(line == line.rstrip() for line in lines)
    assert lines[0].startswith("#    start  ")
    assert lines[1].startswith("1    ≤ 2026-06-20 12:07:22 (after the log start)  ")
    assert lines[0].index("end reason") == lines[1].index("restart") == lines[-1].index(" eof ") + 1


@pytest.mark.slow
def test_configuration_from_pyproject_upward(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.logscan]\ntz = "UTC"\n[tool.logscan.check]\nmax-faults = 1000\nfail-on = ["crash"]\n'
    )
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    named = run(["check", str(EXAMPLE), "-q", "-f", "json", "--config", str(tmp_path / "pyproject.toml")], cwd=inner)
    assert named.returncode == 0, named.stderr  # named, the file may loosen the check
    rules = {rule["rule"]: rule["threshold"] for rule in json.loads(named.stdout)["rules"]}
    assert rules == {"crash": None, "max_faults": "more than 1000"}
    result = run(["check", str(EXAMPLE), "-q", "-f", "json"], cwd=inner)
    assert result.returncode == 1, result.stderr  # found, it may only tighten: fewer rules are ignored
    rules = {rule["rule"]: rule["threshold"] for rule in json.loads(result.stdout)["rules"]}
    defaults = ("penalty_box", "dead_engine", "crash", "unparsed_gpu_error")  # and --fail-level error's rules
    levels = ("fatal_exit", "error", "wedge", "gpu_fault", "reboot", "load_failure")
    assert rules == {**dict.fromkeys((*defaults, *levels)), "max_faults": "more than 1000"}
    assert "ignored 'fail-on'" in result.stderr
    assert run(["check", str(EXAMPLE), "-q", "--fail-on", "crash"], cwd=inner).returncode == 0  # the flag wins
    (inner / ".logscan.toml").write_text('tz = "Mars/Base"\n')  # the nearest file wins, and is checked
    wrong_zone = run(["sessions", str(EXAMPLE), "-q"], cwd=inner)
    assert wrong_zone.returncode == 2 and "not a time zone" in wrong_zone.stderr
    (inner / ".logscan.toml").write_text("bogus = 1\n")
    bad = run(["check", str(EXAMPLE), "-q"], cwd=inner)
    assert bad.returncode == 2 and "'bogus' is no option" in bad.stderr and len(bad.stderr.splitlines()) == 1


@pytest.mark.slow
def test_watch_takes_tz() -> None:
    result = runner.invoke(app, ["watch", str(EXAMPLE), "--tz", "Mars/Base", "--exit-at-end"])
    assert result.exit_code == 2 and "not a time zone" in result.stderr
    ok = runner.invoke(app, ["watch", str(EXAMPLE), "--tz", "UTC", "--exit-at-end", "-f", "ndjson"])
    assert ok.exit_code == 0, ok.stderr


# The README's Common options table, row by row: every command it names takes every flag it names.


def _reads_logs(command: object) -> bool:
    """Whether a command reads logs (takes PATHs): "all" in the table means those, not ``fleet``."""
    return "paths" in inspect.signature(command).parameters  # type: ignore[arg-type]


LOG_READERS = [c.__name__ for c in COMMANDS if _reads_logs(c)]


def _common_options_rows() -> list[tuple[list[str], list[str]]]:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("### Common options", 1)[1].split("\n\n")[2]
    rows = []
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        flags = [flag for flag in re.findall(r"`(-[-\w]+)", cells[0])]
        names = [name.strip() for name in cells[1].split(",")]
        rows.append((flags, [command for name in names for command in (LOG_READERS if name == "all" else [name])]))
    return rows


ROWS = _common_options_rows()


def test_the_table_is_found() -> None:
    assert len(ROWS) >= 10


@pytest.mark.parametrize(("flags", "commands"), ROWS, ids=[" ".join(flags) or "PATH" for flags, _ in ROWS])
def test_every_command_accepts_what_the_common_options_table_says(flags: list[str], commands: list[str]) -> None:
    from typer.main import get_command

    group = get_command(app)
    for name in commands:
        command = group.commands[name]  # type: ignore[attr-defined]
        accepted = {opt for param in command.params for opt in param.opts}
        missing = [flag for flag in flags if flag not in accepted]
        assert not missing, f"logscan {name} lacks {missing}"


@pytest.mark.slow
def test_quiet_is_taken_by_every_command(tmp_path: Path) -> None:
    """``-q`` anywhere: fleet and schema write nothing on stderr but errors, and take it all the same."""
    document = tmp_path / "mac.json"
    assert runner.invoke(app, ["timeline", str(EXAMPLE), "-f", "json", "-o", str(document), "-q"]).exit_code == 0
    for args in (["fleet", str(document), "-q"], ["schema", "check", "-q"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and result.stdout and not result.stderr, args
    process = run(["fleet", "-q", str(document), "-f", "json"])
    assert process.returncode == 0 and json.loads(process.stdout)["schema"].startswith("omlx-logscan/fleet/")
    assert process.stderr == ""


def test_help_names_every_compression_that_is_read() -> None:
    from omlx_logscan.inputs.decoding import MAGIC

    help_text = " ".join(runner.invoke(app, ["--help"]).stdout.split())
    assert all(name in help_text for name in MAGIC), help_text


DECIMAL_HOURS = re.compile(r"\d\.\d+ h\b|\d,\d{3} h\b|\d\.\d{2}\s")  # "1.4 h", "2,086 h", a bare "1.36"


@pytest.mark.slow
def test_one_duration_style_in_bounds_fleet_and_overlays(tmp_path: Path) -> None:
    """``42 s``, ``12 min``, ``2 h 05 min``, ``3 d 4 h`` everywhere: no decimal hours, no bare hour figures."""
    document = tmp_path / "mac.json"
    assert runner.invoke(app, ["timeline", str(EXAMPLE), "-f", "json", "-o", str(document), "-q"]).exit_code == 0
    history = str(ROOT / "examples" / "os-history.txt")
    overlay = "gpu=" + str(ROOT / "examples" / "gpu-overlay.csv")
    outputs = {
        "bounds": runner.invoke(app, ["bounds", str(EXAMPLE), "--os-history", history, "-q"]).stdout,
        "timeline": runner.invoke(app, ["timeline", str(EXAMPLE), "--overlay", overlay, "-q"]).stdout,
        "fleet": runner.invoke(app, ["fleet", str(document)]).stdout,
        "fleet markdown": run(["fleet", str(document), "-f", "markdown"]).stdout,
    }
    assert "86 d 22 h" in outputs["bounds"] and "1 h 21 min" in outputs["bounds"]
    assert "7 h 58 min when gpu was active" in outputs["timeline"]  # no Markdown backticks in plain text
    assert "process time" in outputs["fleet"] and "1 h 21 min" in outputs["fleet"]
    for name, text in outputs.items():
        assert not DECIMAL_HOURS.findall(text), (name, DECIMAL_HOURS.findall(text))
    assert "`" not in outputs["timeline"]
