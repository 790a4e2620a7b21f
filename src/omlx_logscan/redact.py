"""Masking of personal data in text that leaves the machine (bug-report summaries).

A report pasted into a public GitHub issue should show how the server failed, not who runs
it: home folders become ``~``; user names, host names, IP and e-mail addresses, API keys and
prompt or message text become bracketed placeholders. Loopback and unspecified addresses
(``127.0.0.1``, ``::1``, ``0.0.0.0``), ``localhost`` and a few public code hosts are kept:
they say nothing about the user and help the reader.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

PLACEHOLDERS = {
    "user": "[user]",
    "host": "[host]",
    "ip": "[ip]",
    "email": "[email]",
    "key": "[key]",
    "text": "[text]",
}

# What the report's redaction note calls each category, singular and plural.
CATEGORY_NAMES = {
    "home": ("home folder", "home folders"),
    "user": ("user name", "user names"),
    "host": ("host name", "host names"),
    "ip": ("IP address", "IP addresses"),
    "email": ("e-mail address", "e-mail addresses"),
    "key": ("API key", "API keys"),
    "text": ("prompt or message text", "prompt or message texts"),
}

PUBLIC_HOSTS = frozenset(
    {"localhost", "github.com", "huggingface.co", "hf.co", "pypi.org", "python.org", "docs.python.org", "apple.com"}
)
_NOT_USERS = frozenset({"shared", "guest", "root", "user", "users", "home"})

_QUOTED_TEXT = re.compile(
    r"""(?P<key>["']?\b(?:content|prompt|text|input|instructions|system_prompt|messages?)\b["']?\s*[:=]\s*)"""
    r"""(?P<quote>["'])(?P<value>(?:\\.|(?!(?P=quote)).)*)(?P=quote)"""
)
_TOKEN = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}"
    r"|\bhf_[A-Za-z0-9]{20,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bgithub_pat_\w{20,}"
    r"|\bxox[abprs]-[\w-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
)
_BEARER = re.compile(r"(?P<key>\bBearer\s+)(?P<value>[\w\-.~+/=]{8,})")
_SECRET_FIELD = re.compile(
    r"""(?P<key>\b(?:api[_-]?key|x-api-key|access[_-]?token|auth[_-]?token|token|secret|password|passwd"""
    r"""|authorization)["']?\s*[:=]\s*["']?)(?!Bearer\s|\[)(?P<value>[^\s"',;)\]}]{4,})""",
    re.IGNORECASE,
)
_URL_HOST = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<userinfo>[^@/\s]+@)?(?P<host>[^/:\s?#\]\[]+)")
_EMAIL = re.compile(r"\b[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)*\.[A-Za-z]{2,}\b")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?!\.?\w)")
_IPV6 = re.compile(
    r"(?<![\w:])(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}"
    r"|(?:[0-9a-fA-F]{1,4}:){1,6}:(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*)?"
    r"|::(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*))(?:%\w+)?(?![\w:])"
)
_HOME = re.compile(r"(?:/Users|/home|[A-Za-z]:\\Users)[/\\](?P<user>[^/\\\s'\"`:;,()\[\]]+)")
_LOCAL_HOST = re.compile(
    r"\b[A-Za-z0-9][\w\-]*(?:\.[\w\-]+)*\.(?:local|lan|home|internal|localdomain|intranet)(?![\w\-]|\.\w)"
)
_HOST_FIELD = re.compile(r"(?P<key>\bhost(?:name)?\s*[=:]\s*)(?P<value>[A-Za-z][\w\-.]*)")


@dataclass
class Redaction:
    """The masked text and how many things of each category were masked."""

    text: str
    counts: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str:
        """``3 home folders, 1 IP address`` — or ``nothing`` when the text held nothing to mask."""
        parts = []
        for category, (one, many) in CATEGORY_NAMES.items():
            count = self.counts[category]
            if count:
                parts.append(f"{count} {one if count == 1 else many}")
        return ", ".join(parts) or "nothing"


class _Masker:
    """Applies the patterns in order and counts what each replaced."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def sub(self, pattern: re.Pattern[str], text: str, replace: Callable[[re.Match[str]], str | None]) -> str:
        def one(match: re.Match[str]) -> str:
            result = replace(match)
            return match.group(0) if result is None else result

        return pattern.sub(one, text)

    def mask(self, category: str, replacement: str | None = None) -> str:
        self.counts[category] += 1
        return PLACEHOLDERS[category] if replacement is None else replacement

    def keyed(self, category: str) -> Callable[[re.Match[str]], str]:
        """Keep the ``key=`` part of a match, mask its value."""
        return lambda m: m["key"] + self.mask(category)


def user_names(text: str) -> set[str]:
    """The account names that home-folder paths in ``text`` reveal."""
    return {m["user"] for m in _HOME.finditer(text) if m["user"].lower() not in _NOT_USERS}


def redact(text: str) -> Redaction:
    """``text`` with personal data masked (see the module docstring for what counts)."""
    masker = _Masker()
    names = user_names(text)
    text = masker.sub(
        _QUOTED_TEXT, text, lambda m: m["key"] + m["quote"] + masker.mask("text") + m["quote"] if m["value"] else None
    )
    text = masker.sub(_TOKEN, text, lambda m: masker.mask("key"))
    text = masker.sub(_BEARER, text, masker.keyed("key"))
    text = masker.sub(_SECRET_FIELD, text, masker.keyed("key"))
    text = masker.sub(_URL_HOST, text, lambda m: _url(m, masker))
    text = masker.sub(_EMAIL, text, lambda m: masker.mask("email"))
    text = masker.sub(_IPV4, text, lambda m: masker.mask("ip") if _personal_ip(m.group(0)) else None)
    text = masker.sub(_IPV6, text, lambda m: masker.mask("ip") if _personal_ip(m.group(0)) else None)
    text = masker.sub(_HOME, text, lambda m: masker.mask("home", "~") if m["user"] in names else None)
    text = masker.sub(_LOCAL_HOST, text, lambda m: masker.mask("host"))
    text = masker.sub(_HOST_FIELD, text, lambda m: None if _public(m["value"]) else masker.keyed("host")(m))
    if names:
        alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        by_name = re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)
        text = masker.sub(by_name, text, lambda m: masker.mask("user"))
    return Redaction(text, masker.counts)


def _personal_ip(text: str) -> bool:
    """An address that could identify a machine: not loopback or unspecified, and not a slice like ``1::2``."""
    try:
        address = ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return False
    if address.is_loopback or address.is_unspecified:
        return False
    return address.version == 4 or max(len(group) for group in text.split("%")[0].split(":")) >= 2


def _public(host: str) -> bool:
    host = host.lower().rstrip(".")
    return host in PUBLIC_HOSTS or any(host.endswith("." + public) for public in PUBLIC_HOSTS)


def _url(match: re.Match[str], masker: _Masker) -> str | None:
    host = match["host"]
    userinfo = match["userinfo"]
    if userinfo is None and (_public(host) or _IPV4.fullmatch(host)):
        return None  # IP addresses are the next rule's business
    masked_user = masker.mask("user") + "@" if userinfo else ""
    masked_host = host if _public(host) or _IPV4.fullmatch(host) else masker.mask("host")
    return match["scheme"] + masked_user + masked_host
