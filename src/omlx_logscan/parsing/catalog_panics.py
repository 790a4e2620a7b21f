"""Apple's wording of a kernel panic report: where the report says when the Mac panicked.

Kept beside ``catalog.py`` (oMLX's templates): this is macOS's text, not oMLX's. A report gives
its time in one of three places, tried in this order: the ``.panic`` text header line
``Date/Time:        2026-09-16 03:41:07.123 +0200``; the first line of an ``.ips`` report, a JSON
header whose ``bug_type`` is ``210`` (a panic) with ``"timestamp":"2026-09-16 03:41:07.00 +0200"``;
the ``Calendar`` row of the panic text's epoch table (seconds and microseconds since 1970 in hex, UTC).
"""

from __future__ import annotations

import re

# How a panic report's header begins when it comes before the panic line (it then opens the block).
DATE_TIME_OPENING = "Date/Time:"
HEADER_OPENING = r'(?:Date/Time:\s|\{.*"bug_type"\s*:\s*"210")'

# A line of a report's header that says when (``.panic`` text). The offset may be missing.
DATE_TIME = re.compile(
    r"^Date/Time:\s+(?P<date>\d{4}-\d\d-\d\d) (?P<time>\d\d:\d\d:\d\d)(?:\.(?P<frac>\d+))?(?:\s+(?P<offset>[+-]\d{4}))?"
)

# The first line of an ``.ips`` panic report: a one-line JSON header of bug type 210.
IPS_HEADER = re.compile(r'^\{.*"bug_type"\s*:\s*"210"')

# The header's time, always with its offset.
IPS_TIMESTAMP = re.compile(
    r'"timestamp"\s*:\s*"(?P<date>\d{4}-\d\d-\d\d) (?P<time>\d\d:\d\d:\d\d)(?:\.(?P<frac>\d+))? (?P<offset>[+-]\d{4})"'
)

# The panic text inside an ``.ips`` body: a JSON string, ``\n`` between its lines.
PANIC_STRING = re.compile(r'"panicString"\s*:\s*"(?P<text>(?:[^"\\]|\\.)*)')

# The wall clock when the Mac panicked, in the epoch table of the panic text (UTC seconds, microseconds).
CALENDAR = re.compile(r"^\s*Calendar\s*:\s*0x(?P<sec>[0-9a-fA-F]{1,8})\s+0x(?P<usec>[0-9a-fA-F]{1,8})")

# The process running on the CPU that panicked: ``Panicked task 0x…: 9 pages, 3 threads: pid 812: python3.12``.
PANICKED_TASK = re.compile(r"^Panicked task 0x[0-9a-fA-F]+: .*?\bpid (?P<pid>\d+): (?P<process>.+?)\s*$")
