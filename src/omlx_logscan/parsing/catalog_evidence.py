"""Text beyond oMLX's own messages that shows an input is about an oMLX process: where oMLX is
installed, what its processes are called, and the Metal and ANE errors of the MLX stack it runs on.

Each is read from how oMLX ships and runs: the app bundle ``oMLX.app`` (its ``omlx-cli`` and
``omlx-server`` executables, its ``omlx_app`` menu-bar package), the Homebrew formula
(``Cellar/omlx/<version>``, ``Cellar/omlx@<version>``, the service ``homebrew.mxcl.omlx``), the
``omlx`` package in a virtualenv's ``site-packages`` or a source checkout (``…/omlx/omlx/…``).
"""

from __future__ import annotations

import re

# An oMLX install or process, anywhere in a line: a traceback frame under the package or app, a crash
# report's process, path or coalition, an abort message that names the executable.
OMLX_INSTALL = re.compile(
    r"oMLX\.app/|/Cellar/omlx[/@]|site-packages/omlx(?:_app)?/|\bomlx-(?:cli|server)\b|homebrew\.mxcl\.omlx"
    r'|File "[^"]*/omlx(?:_app)?/'
)


# A line of a Python traceback: its head, or a frame's.
TRACEBACK = r'Traceback \(most recent call last\)|^\s*File "[^"]+", line \d+'

# The type a Python exception line begins with (``ValueError``, ``mlx.core.RuntimeError``, ``SystemExit``).
EXCEPTION_TYPE = r"[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)"

# A line of a Python traceback, a macOS crash report or a crash stack (native or Objective-C).
CRASH = re.compile(
    TRACEBACK + r"|^\s*(?:Exception Type|Termination Reason):"
    r"|^Thread \d+ Crashed|Terminating app due to uncaught exception|\babort\(\)|__cxa_throw|std::__terminate"
    r"|^\d+\s+\S+\s+(?:\t|\s)*0x[0-9a-fA-F]+ "
)


# Metal and ANE errors that oMLX's processes die or fail on: MLX's Metal backend (its command-buffer
# check, its library build), Metal's completion queue in a crash stack, Metal's NSError domain, the
# ANE dispatch's command buffer; with the catalog's ``GPU_CODE`` and ``GPU_RESOURCE_LIMIT`` (an error
# as written, with its code or limit: a text that only names a code is no error).
METAL_ERROR = re.compile(
    r"mlx::core::(?:gpu|metal)::|com\.Metal\.CompletionQueueDispatch|\[METAL\] Command buffer execution failed"
    r"|MTLCommandBufferErrorDomain|ANE input pack command buffer failed|Unable to build metal library"
)


# A line that names an oMLX logger as a record names its logger: ``omlx.process_memory_enforcer - INFO - …``.
OMLX_LOGGER = re.compile(r"(?:^|[\s`'\"(\[])omlx(?:_app)?(?:\.\w+)* - ")


# The packages of the other loggers oMLX's process writes through: oMLX's logging setup
# (omlx/logging_config.py) sets the levels of ``uvicorn`` and ``uvicorn.access``, ``httpx`` and ``httpcore``.
PROCESS_LOGGER_PACKAGES = frozenset({"uvicorn", "httpx", "httpcore"})
