"""Whether a version an input states is a version at all.

A Homebrew keg's folder names the version it installed (``Cellar/omlx/0.5.7/``, ``0.3.6_1`` with a
formula revision, ``0.6.3rc2+5941f683``), but a keg built from a branch or commit is named by that
(``HEAD-3d62ea0``, or a bare commit that starts with a digit): such a segment states no version.
"""

from __future__ import annotations

import re

# PEP 440's shape as oMLX's releases use it (release numbers, a pre-, post- or dev-release, a local
# part), with Homebrew's ``_N`` revision: at least two release numbers.
_VERSION = re.compile(r"\d+(?:\.\d+)+(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[\w.]+)?(?:_\d+)?")


def is_version(text: str) -> bool:
    """Whether ``text`` (a banner's or a keg's stated version) has the shape of a release."""
    return _VERSION.fullmatch(text) is not None
