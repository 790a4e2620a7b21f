"""The examples each command's ``--help`` ends with: two to four command lines and what each does.
Written as a user types them (``server.log`` a log of theirs); the tests parse every one against
its command, so an example never names an option that is gone."""

from __future__ import annotations

EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "events": (
        ("logscan events -n 20", "the newest 20 events of <base>/logs/"),
        ("logscan events server.log -p err -S '2 days ago'", "errors and worse of the last two days"),
        ("logscan events server.log -k gpu_error,process_start", "only GPU faults and starts"),
        ("logscan events server.log -f csv -o events.csv", "every event as CSV"),
    ),
    "timeline": (
        ("logscan timeline", "the timeline of <base>/logs/"),
        ("logscan timeline server.log --tz Europe/Berlin", "a log written on a Mac in Berlin"),
        ("logscan timeline server.log -f json -o timeline.json", "the same as JSON"),
    ),
    "sessions": (
        ("logscan sessions server.log", "one row per server run"),
        ("logscan sessions server.log -S @1789488000 -f json", "the runs since a time, as JSON"),
    ),
    "bounds": (
        ("logscan bounds server.log --os-history history.txt", "faults per macOS and oMLX version"),
        ("logscan bounds server.log --os 27.0@'2026-09-15 17:41'", "with the macOS upgrade given by hand"),
    ),
    "report": (
        ("logscan report server.log -o report.md", "a Markdown summary for a GitHub issue"),
        ("logscan report server.log --no-redact", "with user text and host names as logged"),
    ),
    "check": (
        ("logscan check server.log", "exit 1 on the default rules' findings"),
        ("logscan check server.log --fail-on penalty_box,crash --max-faults 0", "a stricter gate"),
        ("logscan check server.log -f sarif -o logscan.sarif", "findings for GitHub code scanning"),
    ),
    "watch": (
        ("logscan watch", "follow <base>/logs/server.log"),
        ("logscan watch -p err", "print only errors and worse as they come"),
        ("logscan watch --on-dead 'brew services restart omlx'", "restart oMLX when its engine goes dead"),
    ),
    "export": (
        ("logscan export server.log -o tables", "this Mac's tables, under its host name"),
        ("logscan export fleet/*/ --host-from folder -o tables", "one host per folder"),
    ),
    "fleet": (
        ("logscan fleet tables", "faults by host, version and macOS"),
        ("logscan fleet tables -f markdown", "the same as Markdown"),
    ),
    "schema": (
        ("logscan schema timeline", "the JSON Schema of timeline -f json"),
        ("logscan schema check -o check.schema.json", "check's schema into a file"),
    ),
}


def epilog(command: str) -> str:
    """The ``Examples:`` paragraph of ``--help``, its lines kept as written (click's ``\\b``)."""
    lines = EXAMPLES[command]
    width = max(len(line) for line, _ in lines)
    return "\b\nExamples:\n" + "\n".join(f"  {line:<{width}}  # {what}" for line, what in lines)
