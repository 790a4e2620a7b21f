"""omlx-logscan: turn oMLX server logs into incident timelines.

The core is a library, usable without the command line::

    from omlx_logscan import analyze, read_events, resolve

    analysis = analyze(read_events(resolve(["server.log"])))

Its names load on first use, so ``import omlx_logscan`` stays cheap (no polars until a log is read).
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omlx_logscan.analysis.investigation import investigate
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.inputs.sources import resolve
    from omlx_logscan.stream.read import read_events
    from omlx_logscan.stream.window import within

_LIBRARY = {
    "resolve": "omlx_logscan.inputs.sources",
    "read_events": "omlx_logscan.stream.read",
    "within": "omlx_logscan.stream.window",
    "analyze": "omlx_logscan.analysis.lifetimes",
    "investigate": "omlx_logscan.analysis.investigation",
}

__all__ = ["__version__", "analyze", "investigate", "read_events", "resolve", "within"]


def _installed_version() -> str:
    """The version the package was installed as: pyproject's ``version``, its one place. A source
    tree run without being installed has none."""
    beside = _version_beside()
    if beside is not None:
        return beside
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("omlx-logscan")
    except PackageNotFoundError:
        return "0+unknown"


def _version_beside() -> str | None:
    """The version in the metadata installed beside this package, read directly: importing
    ``importlib.metadata`` and searching the path costs a run about 15 ms."""
    return _version_in(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _version_in(folder: str) -> str | None:
    """The version in the metadata of this package in ``folder`` (its one ``.dist-info`` folder
    there); None when there is no such folder (a source tree, an editable install) or more than one."""
    try:
        infos = [
            name for name in os.listdir(folder) if name.startswith("omlx_logscan-") and name.endswith(".dist-info")
        ]
        if len(infos) != 1:
            return None
        with open(os.path.join(folder, infos[0], "METADATA"), encoding="utf-8") as metadata:
            for line in metadata:
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip()
                if not line.strip():  # the end of the headers
                    return None
    except OSError:
        return None
    return None


def __getattr__(name: str) -> Any:
    """Import a library name from its module the first time it is asked for; the version is read
    from the package's metadata then too (reading it costs a run about 25 ms)."""
    if name == "__version__":
        globals()[name] = value = _installed_version()
        return value
    module = _LIBRARY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LIBRARY))
