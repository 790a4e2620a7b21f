"""The optional native block scanner; everything else about the package is in pyproject.toml.

A failed build (no compiler, ``CC=false``, no Python headers) is reported and skipped: the package
then reads with its polars plan, and ``logscan --version`` says so.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that skips the extension, with a note, when it cannot be built."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # a platform with no compiler at all
            self._skip(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # the compiler failed
            self._skip(exc)

    def _skip(self, exc: Exception) -> None:
        sys.stderr.write(f"omlx-logscan: the native scanner was not built ({exc}); the polars scanner is used\n")


setup(
    ext_modules=[
        Extension(
            "omlx_logscan._scanner",
            ["src/omlx_logscan/_scanner.c"],
            depends=["src/omlx_logscan/_search.h"],
            optional=True,
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
