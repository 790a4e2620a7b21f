"""The lexicon of oMLX messages: its generator (on a small git history made here), the committed
data, matching real oMLX server logs, their version ranges, and the catalog rows' entries."""

from __future__ import annotations

import gzip
import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from conftest import FIXTURES, ROOT
from omlx_logscan.data.catalog_entries import ENTRIES, FOREIGN
from omlx_logscan.parsing.catalog import CATALOG
from omlx_logscan.parsing.lexicon import Entry, Lexicon, LexiconBroken, lexicon, load

TOOLS = ROOT / "tools" / "lexicon"
REAL_RUNS = sorted((FIXTURES / "real-omlx").glob("*.server.log"))
RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - (\S+) - ([A-Z]+) - (?:\[[^\]]*\] - )?(.*)$")


def _tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


generate = _tool("generate")


# ---------------------------------------------------------------- the generator, on a history made here

MODULE_V1 = """
import logging
import sys
from fastapi import HTTPException

logger = logging.getLogger(__name__)
named = logging.getLogger("omlx.custom")


def serve(n, x, e):
    logger.info("Started %d workers on %s", n, "host")
    logger.warning(f"Low memory {x:.1f}GB")
    named.debug("Cache ready: {}".format(x))
    print("Configuration error: " + str(e), file=sys.stderr)
    try:
        pass
    except OSError as exc:
        logger.error(f"Failed to bind port {n}: {exc}")
    raise HTTPException(status_code=507, detail=f"Model '{x}' does not fit here")


def check(v):
    raise ValueError(f"bad value {v!r} given")


def fit(model, size):
    raise MemoryError(required=size, message=f"Cannot load {model}: projected memory {size} too large")


def prefill(quiet, n):
    _log = logger.debug if quiet else logger.warning
    _log(f"Prefill above max_bytes at {n} tokens")
"""

ADDED = "\n\ndef added():\n    logger.info('Added after 0.1.0')\n"
MODULE_V2 = MODULE_V1.replace('    logger.warning(f"Low memory {x:.1f}GB")\n', "") + ADDED
MODULE_V3 = (
    MODULE_V2
    + """

def later():
    logger.exception("Background snapshot write failed")


class Registry:
    @classmethod
    def register(cls, name):
        logger.debug(f"Registered handler {name}")
        cls._note(name)

    @classmethod
    def _note(cls, name):
        logger.debug("Noted handler %s", name)


def _defaults():
    Registry.register("a")


_defaults()

if __name__ == "__main__":
    later()
"""
)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _commit(repo: Path, version: str, source: str, message: str) -> None:
    (repo / "omlx").mkdir(exist_ok=True)
    (repo / "omlx" / "_version.py").write_text(f'__version__ = "{version}"\n')
    (repo / "omlx" / "server.py").write_text(source)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history: 0.1.0; a message added after its bump; 0.2.0.dev1 drops another; 0.2.0rc1; then
    0.1.9 bumped late (order is packaging's, not the history's); then code after the last bump. A
    copy of the code outside ``omlx/`` is not read."""
    repo = tmp_path_factory.mktemp("omlx")
    _git(repo, "init", "-q")
    _commit(repo, "0.1.0", MODULE_V1, "bump 0.1.0")
    (repo / "bench").mkdir()
    (repo / "bench" / "copy.py").write_text('import logging\nlogging.getLogger("x").info("Only a bench copy")\n')
    _commit(repo, "0.1.0", MODULE_V1 + ADDED, "work")
    _commit(repo, "0.2.0.dev1", MODULE_V2, "bump")
    _commit(repo, "0.2.0rc1", MODULE_V2, "bump")
    _commit(repo, "0.1.9", MODULE_V2, "bump")
    _commit(repo, "0.1.9", MODULE_V3, "work after the last bump")
    return repo


@pytest.fixture(scope="module")
def made(history: Path) -> Lexicon:
    out = history / "lexicon.json.gz"
    assert generate.main(["--git-dir", str(history / ".git"), "--out", str(out)]) == 0
    return load(out)


@pytest.mark.slow
def test_regenerate_checks_the_lexicon_against_the_history_it_is_given(history: Path) -> None:
    """The small history here gives another lexicon than the committed one: only that file is stale."""
    command = [sys.executable, str(ROOT / "tools" / "regenerate.py"), "--check", "--git-dir", str(history / ".git")]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 1
    stale = "src/omlx_logscan/data/lexicon.json.gz is stale: run python tools/regenerate.py"
    assert result.stderr.splitlines() == [stale]


def _by_text(words: Lexicon, text: str) -> Entry:
    (entry,) = [e for e in words.entries if e.template == text]
    return entry


@pytest.mark.slow
def test_versions_are_in_packaging_order_then_the_code_after_the_last_bump(made: Lexicon) -> None:
    assert made.versions[:4] == ("0.1.0", "0.1.9", "0.2.0.dev1", "0.2.0rc1")
    assert made.versions[4].startswith("0.1.9+")  # the tip, past the bump to 0.1.9
    assert made.versions[5:] == generate.LATER_BUILDS


@pytest.mark.slow
def test_percent_format_and_fstring_placeholders_are_typed(made: Lexicon) -> None:
    started = _by_text(made, "Started {int} workers on {any}")
    assert (started.kind, started.level, started.logger) == ("log", "INFO", "omlx.server")
    assert (started.module, started.function, started.in_handler) == ("omlx.server", "serve", False)
    assert _by_text(made, "Low memory {float}GB").level == "WARNING"
    assert _by_text(made, "Cache ready: {any}").logger == "omlx.custom"


def test_a_call_through_a_name_bound_to_a_logger_method_is_a_message_at_each_level(made: Lexicon) -> None:
    found = [e for e in made.entries if e.template == "Prefill above max_bytes at {any} tokens"]
    assert {(e.level, e.logger, e.function) for e in found} == {
        ("DEBUG", "omlx.server", "prefill"),
        ("WARNING", "omlx.server", "prefill"),
    }


def test_first_and_last_versions(made: Lexicon) -> None:
    low = _by_text(made, "Low memory {float}GB")
    assert (low.first, low.last) == ("0.1.0", "0.1.0")  # gone at 0.2.0.dev1
    added = _by_text(made, "Added after 0.1.0")
    # written after the bump to 0.1.0, so not in it; 0.1.9, bumped late, has it and comes first in order
    assert (added.first, added.last) == ("0.1.9", None)
    assert _by_text(made, "Started {int} workers on {any}").last is None  # the tip still has it
    snapshot = _by_text(made, "Background snapshot write failed")
    assert snapshot.first == made.versions[4] and snapshot.in_handler  # logger.exception


def test_handlers_prints_http_details_and_exceptions(made: Lexicon) -> None:
    failed = _by_text(made, "Failed to bind port {any}: {any}")
    assert (failed.level, failed.in_handler) == ("ERROR", True)
    assert _by_text(made, "Configuration error: {any}").kind == "stderr"
    detail = _by_text(made, "Model '{any}' does not fit here")
    assert (detail.kind, detail.status) == ("http", 507)
    bad = _by_text(made, "bad value {any} given")
    assert (bad.kind, bad.exception) == ("raise", "ValueError")
    assert not [e for e in made.entries if "bench copy" in e.template]
    assert _by_text(made, "Cannot load {any}: projected memory {any} too large").kind == "text"  # message=


def test_notes_entries_are_marked(made: Lexicon) -> None:
    notes = [e for e in made.entries if e.source == "notes"]
    assert notes and all(e.first in generate.LATER_BUILDS for e in notes)
    assert {e.source for e in made.entries} == {"code", "notes"}


def test_the_functions_a_module_s_top_level_calls_are_marked_as_written_at_import(made: Lexicon) -> None:
    """``_defaults()`` at the top level calls ``Registry.register``, which calls ``cls._note``: both write
    at import. ``later`` is called under ``if __name__ == "__main__"`` only, ``serve`` never."""
    at_import = {made.entry(i).template for i in made.called_at_import}
    assert at_import == {"Registered handler {any}", "Noted handler {any}"}


def test_the_same_history_gives_the_same_bytes(history: Path, tmp_path: Path) -> None:
    """The gzip header holds no file name and no time: regenerating changes nothing until oMLX does."""
    written = []
    for name in ("one.json.gz", "other.json.gz"):
        assert generate.main(["--git-dir", str(history / ".git"), "--out", str(tmp_path / name)]) == 0
        written.append((tmp_path / name).read_bytes())
    assert written[0] == written[1]
    assert written[0][3] == 0 and written[0][4:8] == bytes(4)  # no FNAME flag, mtime 0


def test_a_bare_letter_after_a_release_is_a_hotfix() -> None:
    order = sorted(["0.1.8.post4", "0.1.8d", "0.1.8", "0.1.8b", "0.1.9", "0.1.8c"], key=generate.version_key)
    assert order == ["0.1.8", "0.1.8b", "0.1.8c", "0.1.8d", "0.1.8.post4", "0.1.9"]


# ---------------------------------------------------------------- what a handler does after its message


HANDLERS = """
import logging, queue, sys
from fastapi import HTTPException
from fastapi.responses import JSONResponse
from omlx.utils.fatal import fatal_exit
logger = logging.getLogger(__name__)


def enqueue(self, item):
    try:
        self.q.put(item, timeout=1)
    except queue.Full:
        logger.warning("Write queue saturated; writing inline")
        return self.write(item)


def endpoint(x):
    try:
        return run(x)
    except (ValueError, KeyError) as e:
        logger.warning(f"Request failed: {e}")
        raise HTTPException(status_code=500, detail=str(e))


def writer():
    try:
        run()
    except Exception as e:
        logger.error("Writer thread died: %s", e)
        with lock:
            fatal_exit(f"Writer died: {e}")


def maybe():
    try:
        run()
    except:
        logger.error("Step broke")
        if strict:
            raise
        return None


def retry():
    for attempt in range(3):
        try:
            run()
        except OSError:
            logger.info("Retrying the probe")
            continue


async def stream():
    try:
        async for chunk in run():
            yield chunk
    except Exception as e:
        logger.error(f"Error during streaming: {e}")
        error_data = {"error": {"message": str(e)}}
        yield f"data: {json.dumps(error_data)}"
        return


def busy():
    try:
        run()
    except RuntimeError:
        if quiet:
            logger.debug("Busy, telling the client")
        return JSONResponse(status_code=503, content={})


def nested():
    try:
        run()
    except ImportError:
        logger.warning("Fast path missing, falling back")
        try:
            slow()
        except Exception as e:
            logger.error("Slow path failed too")
        sys.exit(2)


def plain():
    logger.error("Outside any handler")


@app.exception_handler(HTTPException)
async def http_error(request, exc):
    logger.warning("%s %s → %d: %s", request.method, request.url.path, exc.status_code, exc.detail)
    return JSONResponse(status_code=exc.status_code, content={"detail": exc.detail})
"""


@pytest.fixture(scope="module")
def handled() -> dict[str, object]:
    """Each message of HANDLERS, by its template, with its handler as the generator reads it."""
    return {site.template.text(): site.handler for site in generate.scan_source("omlx/handlers.py", HANDLERS.encode())}


@pytest.mark.parametrize(
    ("template", "catches", "action", "status"),
    [
        ("Write queue saturated; writing inline", ("queue.Full",), "carry_on", None),  # returns normally
        ("Request failed: {any}", ("ValueError", "KeyError"), "answer", 500),
        ("Writer thread died: {any}", ("Exception",), "exit", None),  # fatal_exit, inside a ``with``
        ("Writer died: {any}" + generate.FATAL_SUFFIX, ("Exception",), "exit", None),  # fatal_exit's own line
        ("Step broke", ("BaseException",), "reraise", None),  # a bare except; the worst path reachable
        ("Retrying the probe", ("OSError",), "carry_on", None),  # continue: the loop goes on
        ("Error during streaming: {any}", ("Exception",), "answer", None),  # an error chunk of the stream
        ("Busy, telling the client", ("RuntimeError",), "answer", 503),  # the message sits in an ``if``
        ("Fast path missing, falling back", ("ImportError",), "exit", None),  # past a nested try: sys.exit(2)
        ("Slow path failed too", ("Exception",), "carry_on", None),  # the innermost handler ends at its block
        ("{any} {any} → {int}: {any}", ("HTTPException",), "answer", None),  # the framework's handler
    ],
)
def test_a_handler_s_types_and_what_it_does_after_the_message(
    handled: dict[str, object], template: str, catches: tuple[str, ...], action: str, status: int | None
) -> None:
    assert handled[template] == generate.Handling(catches, action, status)


def test_a_message_outside_any_handler_has_none(handled: dict[str, object]) -> None:
    assert handled["Outside any handler"] is None


def test_a_message_written_by_two_handlers_records_the_worse(made: Lexicon) -> None:
    one = generate.Handling(("queue.Full",), "carry_on")
    other = generate.Handling(("Exception",), "answer", 500)
    assert generate.either(one, other) == generate.Handling(("queue.Full", "Exception"), "answer", 500)
    assert generate.either(None, one) == one
    logged = _by_text(made, "Failed to bind port {any}: {any}")  # MODULE_V1's ``except OSError``
    assert (logged.catches, logged.handler_action) == (("OSError",), "carry_on")
    assert _by_text(made, "Started {int} workers on {any}").handler_action is None


# ---------------------------------------------------------------- the committed data


def test_the_committed_lexicon_loads_and_names_its_source() -> None:
    words = lexicon()
    header = words.header
    assert "Apache-2.0" in str(header["licence"])
    source = header["source"]
    assert isinstance(source, dict) and len(source["first_commit"]) == len(source["last_commit"]) == 40
    assert len(words.entries) > 3000
    assert len({e.id for e in words.entries}) == len(words.entries)
    assert "0.5.7" in words.versions and "0.6.4" in words.versions
    registered = next(e for e in words.entries if e.template == "Registered handler for {any}")
    assert registered.id in words.called_at_import  # type_registry's _initialize_default_handlers(), at import


@pytest.mark.parametrize("damage", ["missing", "truncated", "not json", "wrong layout"])
def test_a_broken_lexicon_is_one_clear_error(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "lexicon.json.gz"
    good = Path(__file__).parents[2] / "src/omlx_logscan/data/lexicon.json.gz"
    if damage == "truncated":
        path.write_bytes(good.read_bytes()[:5000])
    elif damage == "not json":
        path.write_bytes(gzip.compress(b"{nope"))
    elif damage == "wrong layout":
        path.write_bytes(gzip.compress(b'{"header": {"fields": ["id"], "versions": []}, "entries": []}'))
    with pytest.raises(LexiconBroken) as caught:
        load(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    assert caught.value.exit_code == 70


def test_a_placeholder_stands_for_its_kind_only() -> None:
    words = lexicon()
    message = "Rescheduled {} request(s) for serial generation-overflow retry"
    (entry,) = words.match(message.format(3), "omlx.scheduler", "INFO")
    assert entry.placeholders == ("int",)
    assert not words.match(message.format("some"), "omlx.scheduler", "INFO")


def test_search_finds_a_message_behind_an_unknown_head() -> None:
    words = lexicon()
    text = "… ... Process memory enforcer started (tier=balanced, ceiling=191.8GB, interval=1.0s)"
    assert not words.match(text)
    assert {e.logger for e in words.search(text)} == {"omlx.process_memory_enforcer"}


# ---------------------------------------------------------------- real oMLX server logs


def _records(path: Path) -> Iterator[tuple[str, str, str]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = RECORD.match(line.rstrip("\n"))
            if record:
                yield record[1], record[2], record[3]


def _version(path: Path) -> str:
    return path.name.split("@")[1].removesuffix(".server.log")


KNOWN = [
    ("omlx.process_memory_enforcer", "INFO", "Process memory enforcer started (tier="),
    ("omlx.engine_core", "ERROR", "Engine loop error: "),
    ("omlx.scheduler", "ERROR", "Prefill failed for "),
    ("omlx.server", "INFO", "Chat completion: "),
    ("omlx.server", "WARNING", "POST /v1/chat/completions → 404: "),
    ("omlx.model_discovery", "INFO", "Discovered model: "),
]


@pytest.mark.parametrize(("logger", "level", "opening"), KNOWN, ids=[k[2] for k in KNOWN])
def test_known_messages_match_their_level_and_logger(logger: str, level: str, opening: str) -> None:
    messages = [m for path in REAL_RUNS for lg, lv, m in _records(path) if m.startswith(opening)]
    assert messages, opening
    for message in messages[:20]:
        assert {(e.logger, e.level) for e in lexicon().match(message)} & {(logger, level)}, message


def test_every_record_of_the_real_runs_matches_an_entry_of_its_logger_and_level() -> None:
    """oMLX's records, that is: asyncio's ``Using selector: EpollSelector`` (DEBUG) is not its text."""
    assert len(REAL_RUNS) >= 13
    records = unmatched = 0
    for path in REAL_RUNS:
        for logger, level, message in _records(path):
            if not logger.startswith("omlx"):
                continue
            records += 1
            found = lexicon().match(message, logger, level)
            if not any(e.logger == logger and e.level == level for e in found):
                unmatched += 1
                print(path.name, logger, level, message[:100])
    assert records > 2800
    assert unmatched == 0


@pytest.mark.parametrize("path", REAL_RUNS, ids=lambda p: p.name)
def test_a_real_run_s_version_range_holds_its_version_and_excludes_another_minor(path: Path) -> None:
    words = lexicon()
    found = (words.match(message, logger, level) for logger, level, message in _records(path))
    seen = words.version_range(found)
    assert seen is not None
    true = words.order(_version(path))
    assert words.order(seen.min) <= true <= (words.order(seen.max) if seen.max else len(words.versions))
    inside = words.versions[words.order(seen.min) : words.order(seen.max) + 1 if seen.max else None]
    minors = {".".join(v.split(".")[:2]) for v in words.versions}
    assert minors - {".".join(v.split(".")[:2]) for v in inside}  # some other minor version is ruled out


def test_a_log_of_two_versions_has_no_single_range() -> None:
    words = lexicon()
    old = words.match("Chat completion: 12 tokens in 1.50s (8.0 tok/s)", "omlx.server", "INFO")
    new = words.match("Memory guard tier: balanced (guard on)", "omlx.server", "INFO")
    assert old and new and words.version_range([old, new]) is None


# ---------------------------------------------------------------- catalog rows name their entries


def test_every_catalog_row_names_its_entries_or_says_why_it_has_none() -> None:
    patterns = {row.pattern for row in CATALOG}
    assert set(ENTRIES) | set(FOREIGN) == patterns  # no row left out, no stale name
    assert not set(ENTRIES) & set(FOREIGN)
    ids = {e.id for e in lexicon().entries}
    for row in CATALOG:
        assert bool(row.entries) != bool(row.foreign), row.pattern
        assert set(row.entries) <= ids, row.pattern


@pytest.mark.slow
def test_a_row_names_every_entry_its_pattern_matches() -> None:
    covered = _tool("name_rows").covered
    for row in CATALOG:
        if not row.foreign:
            assert set(covered(row, lexicon())) <= set(row.entries), row.pattern


@pytest.mark.slow
def test_foreign_rows_match_no_omlx_entry() -> None:
    covered = _tool("name_rows").covered
    for row in CATALOG:
        if row.foreign:
            assert not covered(row, lexicon()), row.pattern


def test_the_generator_runs_without_the_project() -> None:
    """The script reads only the standard library and packaging (CI regenerates with it)."""
    source = (TOOLS / "generate.py").read_text()
    imported = set(re.findall(r"^(?:from|import) (\w+)", source, re.MULTILINE))
    assert imported <= set(sys.stdlib_module_names) | {"packaging", "__future__"}, imported
