"""Issue 29: nothing the command reads is replaced, nothing half-written is left, every failure is
one line; each class through real processes where the behaviour is the CLI's."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLE, FIXTURES, ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
HISTORY = FIXTURES / "oshistory" / "InstallHistory.plist"
EXAMPLE_LINES = len(EXAMPLE.read_bytes().splitlines())
WARNING_LINE = "2026-09-15 20:{:02d}:{:02d},000 - omlx.scheduler - WARNING - [-] - message {}\n"


def run(args: list[str], cwd: Path | None = None, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "omlx_logscan", *args],
        stdin=kwargs.pop("stdin", subprocess.DEVNULL),
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        cwd=cwd,
        **kwargs,
    )


def one_error(result: subprocess.CompletedProcess[str], words: str) -> None:
    """Exit 2 with one error line on stderr that says ``words`` (beside the note naming a configuration file used)."""
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.startswith("logscan: configuration: ")]
    assert len(lines) == 1 and words in lines[0], result.stderr


# 1. No output replaces anything the command reads.


def _inputs(tmp_path: Path) -> dict[str, tuple[list[str], Path]]:
    """For each kind of input besides the log: the options that make the command read it, and the file."""
    overlay = tmp_path / "other.log"
    shutil.copy(EXAMPLE, overlay)
    history = tmp_path / "InstallHistory.plist"
    shutil.copy(HISTORY, history)
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(f'[[host]]\nname = "mac-07"\npaths = ["{tmp_path / "server.log"}"]\nos-history = "own.plist"\n')
    shutil.copy(HISTORY, tmp_path / "own.plist")
    config = tmp_path / ".logscan.toml"
    config.write_text('tz = "UTC"\n')
    named = tmp_path / "mine.toml"
    named.write_text("quiet = true\n")
    key = tmp_path / "fleet.key"
    key.write_text(bytes(range(32)).hex())
    key.chmod(0o600)
    return {
        "log": ([], tmp_path / "server.log"),
        "overlay": (["--overlay", f"gpu={overlay}"], overlay),
        "overlay folder": (["--overlay", f"gpu={tmp_path / 'overlays'}"], tmp_path / "overlays" / "one.log"),
        "os-history": (["--os-history", str(history)], history),
        "hosts file": (["--hosts", str(hosts)], hosts),
        "os-history of a host": (["--hosts", str(hosts)], tmp_path / "own.plist"),
        "configuration": ([], config),
        "named configuration": (["--config", str(named)], named),
        "key of the pseudonyms": (["--redact", "--redact-key", str(key)], key),
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "command"),
    [
        ("log", ["check", "-f", "sarif"]),  # check writes its error document to -o
        ("overlay", ["timeline"]),
        ("overlay folder", ["report"]),
        ("os-history", ["bounds", "--by", "os"]),
        ("hosts file", ["check", "-f", "sarif"]),  # check writes its error document to -o
        ("os-history of a host", ["timeline"]),
        ("configuration", ["check", "-f", "junit"]),
        ("named configuration", ["timeline"]),
        ("key of the pseudonyms", ["events"]),
    ],
)
def test_no_output_replaces_any_input_of_any_option(tmp_path: Path, kind: str, command: list[str]) -> None:
    (tmp_path / "overlays").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "overlays" / "one.log")
    shutil.copy(EXAMPLE, tmp_path / "server.log")
    options, target = _inputs(tmp_path)[kind]
    before = target.read_bytes()
    result = run([*command, str(tmp_path / "server.log"), *options, "-o", str(target)], cwd=tmp_path)
    one_error(result, "would destroy it")
    assert target.read_bytes() == before


@pytest.mark.slow
def test_fleet_output_never_replaces_a_document_it_reads(tmp_path: Path) -> None:
    document = tmp_path / "mac-07.json"
    made = run(["timeline", str(EXAMPLE), "-q", "-f", "json", "-o", str(document)])
    assert made.returncode == 0, made.stderr
    before = document.read_bytes()
    one_error(run(["fleet", str(document), "-o", str(document)]), "is a source")
    assert document.read_bytes() == before


# A run stopped at the point given: the n-th Parquet file it writes sends it ``signum``.
STOPPED_RUN = """
import signal, sys
from omlx_logscan.cli.app import main
from omlx_logscan.output import export
written, write = [0], export.write_parquet
def stopping(*args):
    written[0] += 1
    if written[0] == {after}:
        signal.raise_signal({signum})  # to this thread, handled before it returns: not to another thread, later
    write(*args)
export.write_parquet = stopping
sys.argv = ["logscan", *sys.argv[1:]]
main()
"""


def tables_seen(root: Path) -> dict[str, bytes]:
    """Every file a reader of the export's layout takes for data (``TABLE/host=…/day=…/*``)."""
    return {str(path.relative_to(root)): path.read_bytes() for path in root.glob("[!.]*/*/*/*")}


def _export(args: list[str], after: int = 0, signum: int = 0) -> subprocess.CompletedProcess[str]:
    code = STOPPED_RUN.format(after=after, signum=signum) if after else "from omlx_logscan.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "export", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_stopped_export_leaves_the_old_tables_whole(tmp_path: Path, signum: int) -> None:
    """Two hosts in one run: the files of its first are written, then it stops."""
    for host, extra in (("mac-01", ""), ("mac-02", "")):
        (tmp_path / host).mkdir()
        (tmp_path / host / "server.log").write_text(EXAMPLE.read_text() + extra)
    out = tmp_path / "tables"
    hosts = [str(tmp_path / "mac-01"), str(tmp_path / "mac-02"), "--host-from", "folder", "-q", "-o", str(out)]
    assert _export(hosts).returncode == 0
    old = tables_seen(out)
    fleet_before = run(["fleet", str(out), "-f", "json"]).stdout
    for host in ("mac-01", "mac-02"):  # the same days, other rows
        with open(tmp_path / host / "server.log", "a") as log:
            log.write(EXAMPLE.read_text().splitlines(keepends=True)[-1].replace("WARNING", "ERROR"))
    stopped = _export(hosts, after=7, signum=signum)
    assert stopped.returncode != 0
    assert tables_seen(out) == old
    assert not list(out.rglob("*.writing")) and run(["fleet", str(out), "-f", "json"]).stdout == fleet_before
    if signum != signal.SIGKILL:  # a signal it can handle leaves nothing behind
        assert sorted(p.name for p in (out / ".logscan").iterdir()) == ["current", "gen-1", "lock"]
    assert _export(hosts).returncode == 0
    assert tables_seen(out).keys() == old.keys() and tables_seen(out) != old
    assert sorted(p.name for p in (out / ".logscan").iterdir()) == ["current", "gen-2", "lock"]


@pytest.mark.slow
def test_an_export_of_the_folder_layout_before_generations_is_carried_over(tmp_path: Path) -> None:
    out = tmp_path / "tables"
    assert _export([str(EXAMPLE), "--host", "mac-01", "-q", "-o", str(out)]).returncode == 0
    old = tables_seen(out)
    for table in [p for p in out.iterdir() if p.is_symlink()]:  # as an earlier release wrote it: plain folders
        real = table.resolve()
        table.unlink()
        shutil.copytree(real, table)
    shutil.rmtree(out / ".logscan")
    shutil.copytree(
        out / "faults" / "host=mac-01" / "day=2026-09-16", out / "faults" / "host=mac-01" / "day=2026-09-16.writing"
    )
    assert _export([str(EXAMPLE), "--host", "mac-01", "-q", "-o", str(out)]).returncode == 0
    assert tables_seen(out) == old
    assert all((out / table).is_symlink() for table in ("events", "faults", "sessions"))


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_writing_the_output_leaves_no_temporary_file(tmp_path: Path, signum: int) -> None:
    log = tmp_path / "big.log"
    made = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "make_log.py"), str(log), "--size-mib", "20"], check=False
    )
    assert made.returncode == 0
    out = tmp_path / "out"
    out.mkdir()
    command = [sys.executable, "-m", "omlx_logscan", "events", str(log), "-q", "-f", "ndjson", "-o", str(out / "ev")]
    process = subprocess.Popen(command, env=ENV, stderr=subprocess.DEVNULL)
    while not any(out.iterdir()) and process.poll() is None:  # the temporary file is there: the write began
        time.sleep(0.005)
    process.send_signal(signum)
    assert process.wait(timeout=60) == -signum  # still ended by the signal, as its sender expects
    assert list(out.iterdir()) == []


# 3. Every file of a log folder is read or named as skipped; an empty current log is no error.


def _rotated_folder(folder: Path) -> dict[str, bytes]:
    """A log folder as oMLX, logrotate and a compressing archiver leave it; each log holds a slice of
    the example (a penalty box among them), so every file read adds lines."""
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)
    slices = {
        "server.log.2026-09-14": b"".join(lines[:400]),
        "server.log.2": gzip.compress(b"".join(lines[400:800])),
        "server.log.1.gz": gzip.compress(b"".join(lines[800:1200])),
        "server.log-20260915.bz2": bz2.compress(b"".join(lines[1200:1600])),
        "server.log.2026-09-16": b"".join(lines[1600:]),
        "omlx.err.log": b"".join(lines[:10]),
    }
    folder.mkdir()
    for name, data in slices.items():
        (folder / name).write_bytes(data)
    (folder / "server.log").write_bytes(b"")  # just after midnight: the new day's log is empty
    (folder / "notes.txt").write_text("what I saw\n")
    (folder / "old").mkdir()
    return slices


@pytest.mark.slow
def test_every_file_of_a_log_folder_is_read_or_named_with_the_reason(tmp_path: Path) -> None:
    slices = _rotated_folder(tmp_path / "logs")
    result = run(["check", str(tmp_path / "logs"), "-f", "json"])
    assert result.returncode == 1, result.stderr  # the penalty box is found, not an "empty file" error
    document = json.loads(result.stdout)
    read = {Path(name).name for name in document["input"]["files"]} - {"server.log", "notes.txt", "old"}
    assert read == set(slices)
    skipped = {Path(name).name: reason for name, reason in document["input"]["skipped"].items()}
    assert skipped.pop("old").startswith("a folder")
    assert skipped == {"server.log": "empty", "notes.txt": "not an oMLX log name"}
    assert "skipped" in result.stderr and f"in {len(slices)} files" in result.stderr
    assert f"{EXAMPLE_LINES + 10} lines" in result.stderr.replace(",", "")
    text = run(["check", str(tmp_path / "logs"), "-q"])
    assert "notes.txt: not an oMLX log name" in text.stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", ["events", "timeline", "sessions", "check", "report", "bounds"])
def test_an_empty_current_log_is_no_error_for_any_command(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / "server.log.2026-09-16")
    (folder / "server.log").write_bytes(b"")
    extra = ["--by", "omlx"] if command == "bounds" else []
    result = run([command, str(folder), *extra, "-o", str(tmp_path / "out")])
    assert result.returncode in (0, 1) and "logscan: error" not in result.stderr, result.stderr


# 8. Every failure is one line and exit 2, through a real process.


@pytest.mark.slow
def test_a_closed_stdin_is_one_line() -> None:
    one_error(run(["sessions", "-"], stdin=None, pass_fds=(), preexec_fn=lambda: os.close(0)), "stdin is closed")


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [["sessions", str(EXAMPLE)], ["timeline", str(EXAMPLE)], ["check", str(EXAMPLE)], ["events", "-"]]
)
def test_stdout_on_a_full_disk_is_one_line(command: list[str]) -> None:
    with open("/dev/full", "w") as full, open(EXAMPLE, "rb") as log:
        result = subprocess.run(
            [sys.executable, "-m", "omlx_logscan", *command, "-q"],
            stdin=log,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            timeout=120,
            check=False,
        )
    one_error(result, "stdout: cannot write")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d["sessions"][0].__setitem__("start", "yesterday"), "Invalid isoformat"),
        (lambda d: d["sessions"][0].__setitem__("faults", "many"), "Int64"),
        (lambda d: d["sessions"][0].__setitem__("faults", 2**70), "Int64"),
        (lambda d: d["sessions"][0].pop("index"), "KeyError"),
        (lambda d: d.__setitem__("sessions", "all of them"), "TypeError"),
    ],
)
def test_fleet_over_a_document_with_bad_values_is_one_line(tmp_path: Path, change: Any, words: str) -> None:
    made = run(["timeline", str(EXAMPLE), "-q", "-f", "json"])
    document = json.loads(made.stdout)
    change(document)
    (tmp_path / "mac.json").write_text(json.dumps(document))
    one_error(run(["fleet", str(tmp_path / "mac.json")]), words)


@pytest.mark.slow
def test_a_document_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    made = run(["timeline", str(EXAMPLE), "-q", "-f", "json"])
    (tmp_path / "mac.json").write_bytes(b"\xef\xbb\xbf" + made.stdout.encode())
    result = run(["fleet", str(tmp_path / "mac.json"), "-f", "json"])
    assert result.returncode == 0, result.stderr
    assert [row["host"] for row in json.loads(result.stdout)["hosts"]] == ["mac"]


@pytest.mark.parametrize(
    ("option", "words"), [(["--tz", "+02:99"], "not a time zone"), (["--host", ""], "names no host")]
)
@pytest.mark.slow
def test_option_values_that_name_nothing_are_refused(option: list[str], words: str) -> None:
    one_error(run(["sessions", str(EXAMPLE), *option]), words)


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [["check", "-f", "sarif"], ["events", "-f", "parquet"], ["timeline", "-f", "json"], ["report"], ["export"]],
)
def test_a_file_name_that_is_not_utf8_is_written_escaped(tmp_path: Path, command: list[str]) -> None:
    folder = os.fsencode(tmp_path / "logs")
    os.mkdir(folder)
    log = folder + b"/server\xff.log"
    shutil.copy(EXAMPLE, log)
    out = tmp_path / ("tables" if command == ["export"] else "out")
    result = run([*command, os.fsdecode(log), "--force", "-q", "-o", str(out)])
    assert result.returncode in (0, 1), result.stderr
    if out.is_file() and command[-1] != "parquet":  # the byte, escaped as text (\\xff, or %5Cxff in a URI)
        assert b"xff.log" in out.read_bytes()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file whatever its mode")
@pytest.mark.parametrize("what", ["folder", "rotated file"])
def test_an_unreadable_folder_or_rotated_file_is_one_line(tmp_path: Path, what: str) -> None:
    shutil.copy(EXAMPLE, tmp_path / "server.log")
    shutil.copy(EXAMPLE, tmp_path / "server.log.1")
    (tmp_path if what == "folder" else tmp_path / "server.log.1").chmod(0)
    try:
        one_error(run(["check", str(tmp_path)]), "permission denied" if what != "folder" else "cannot read")
    finally:
        tmp_path.chmod(0o755)


# 9. A host name is a value, never a partition default.


@pytest.mark.slow
def test_fleet_keeps_hosts_named_like_partition_defaults(tmp_path: Path) -> None:
    names = ["null", "NULL", "__HIVE_DEFAULT_PARTITION__", "mac 07"]
    for name in names:
        assert _export([str(EXAMPLE), "--host", name, "-q", "-o", str(tmp_path / "tables")]).returncode == 0
    result = run(["fleet", str(tmp_path / "tables"), "-f", "json"])
    assert result.returncode == 0, result.stderr
    hosts = json.loads(result.stdout)["hosts"]
    assert sorted(row["host"] for row in hosts) == sorted(names)
    assert len({row["faults"] for row in hosts}) == 1  # each host its own rows, none pooled into a null host
    text = run(["fleet", str(tmp_path / "tables")])
    assert text.returncode == 0 and all(name in text.stdout for name in names)


# 7 (inputs). Compressed data has a ratio guard; random bytes are no text.


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gzip", "bzip2"])
def test_a_compression_bomb_ends_in_one_line(tmp_path: Path, kind: str) -> None:
    text = b"a" * (64 << 20)  # text without a line break: the reader would hold it all
    bomb = tmp_path / "server.log.gz"
    bomb.write_bytes(gzip.compress(text, 9) * 20 if kind == "gzip" else bz2.compress(text * 4, 9))
    started = time.monotonic()
    one_error(run(["check", str(bomb)]), "compression bomb")
    assert time.monotonic() - started < 60


@pytest.mark.slow
def test_random_bytes_on_stdin_are_refused() -> None:
    with open("/dev/urandom", "rb") as random_bytes:
        one_error(run(["check", "-"], stdin=random_bytes), "not a text log")


def test_random_blocks_are_never_taken_for_text() -> None:
    from omlx_logscan.inputs.decoding import looks_binary

    assert not any(not looks_binary(os.urandom(64 * 1024)) for _ in range(500))


@pytest.mark.slow
def test_a_truncated_gzip_gives_what_zcat_recovers(tmp_path: Path) -> None:
    lines = [WARNING_LINE.format(n // 60 % 60, n % 60, n) for n in range(60000)]
    packed = gzip.compress("".join(lines).encode(), 6)
    (tmp_path / "cut.gz").write_bytes(packed[: len(packed) * 2 // 3])
    recovered = subprocess.run(["zcat", str(tmp_path / "cut.gz")], capture_output=True, check=False).stdout
    whole_lines = recovered.count(b"\n")
    result = run(["sessions", str(tmp_path / "cut.gz"), "-f", "json"])
    assert f"read {whole_lines} lines" in result.stderr.replace(",", "") and "truncated" in result.stderr
