"""Masking of personal data in text that leaves the machine (bug-report summaries).

A report pasted into a public GitHub issue should show how the server failed, not who runs
it: home folders become ``~``; user names, host names, IP and e-mail addresses, API keys and
tokens, and prompt, reasoning or tool-call text become bracketed placeholders. Loopback and
unspecified addresses (``127.0.0.1``, ``::1``, ``0.0.0.0``), ``localhost`` and a few public code
hosts are kept: they say nothing about the user and help the reader.

Names are learnt before anything is masked, from all of the text at once (``learn``): a user name
that one record's home folder reveals, or a host name one record's URL gives, is masked in every
other record too, where it stands alone (``alice/private-llama``). The value of a field that holds
what a user wrote or a model answered (``content``, ``reasoning_content``, ``arguments``…) is
masked whole, whatever its form: quoted (every line of it), a list or a table, or bare text to the
end of the record.

Only text copied from the log is masked: a document marks it with ``logged()`` and
``redact_logged()`` masks inside the marks, so the document's own words ("oMLX version",
"a cache-clear drain") stay as written even when the account is called ``omlx`` or ``a``.

Every pattern runs in linear time: a log line can be megabytes of one token, so no pattern may
rescan a token from each of its characters (tokens are matched whole, possessively, from where
they start).
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from omlx_logscan.output.usertext import TEXT_WORDS, mask_text_values

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


LOCAL_SUFFIXES = frozenset({"local", "lan", "home", "internal", "localdomain", "intranet"})


# Home folders that belong to no person: their paths are kept as they are.
_SHARED_HOMES = frozenset({"shared", "guest", "root", "user", "users", "home"})


# Account names too short or too common to mask wherever they occur as a word: they would hit
# ordinary log text ("a", "omlx.server", "python"). Their home folders are still masked.
MIN_USER_NAME = 3


# No host name is longer (RFC 1035), nor an account's; a longer token is no name to look for elsewhere.
MAX_NAME = 253


_COMMON_WORDS = frozenset(
    {"admin", "runner", "omlx", "mlx", "python", "test", "dev", "build", "local", "library", "public", "default"}
    | {"true", "false", "none", "null"}  # what a ``host=`` field holds when it holds no name
)


# Marks around text copied from the log (Unicode private-use characters, stripped from the text itself).
_START, _END = "\ue000", "\ue001"


_MARKS = re.compile(f"[{_START}{_END}]")


_LOGGED_SPAN = re.compile(f"{_START}([^{_START}{_END}]*){_END}")


# A quoted value; an unclosed quote runs to the end of the line (``close`` is then None).
_QUOTED_VALUE = r"""(?P<quote>["'])(?P<quoted>(?:\\.|(?!(?P=quote))[^\n])*)(?P<close>(?P=quote))?"""


_TOKEN = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}"
    r"|\bhf_[A-Za-z0-9]{20,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bgithub_pat_\w{20,}"
    r"|\bxox[abprs]-[\w-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|\bAIza[0-9A-Za-z_\-]{30,}"  # Google API keys (35 characters after AIza)
    r"|\beyJ[A-Za-z0-9_\-]{4,}+\.[A-Za-z0-9_\-]{4,}+\.[A-Za-z0-9_\-]*+"  # JSON web tokens: header.payload.signature
)


_BEARER = re.compile(r"(?P<key>\bBearer\s+)(?P<value>[\w\-.~+/=]{8,})", re.IGNORECASE)


# ``Authorization: Basic dXNl…``: the scheme and the credential are masked as one.
_AUTHORIZATION = re.compile(
    r"""(?P<key>(?<![A-Za-z0-9])(?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?!Bearer\s)"""
    r"""(?P<value>[A-Za-z][\w\-]*[ \t]+[\w\-.~+/=:]{6,})""",
    re.IGNORECASE,
)


# A secret's name may end a longer one (``OMLX_API_KEY``, ``x-api-key``, ``HF_TOKEN``); a bare
# ``token`` must stand alone, or ``eos_token=</s>`` would be masked.
_SECRET_NAME = (
    r"(?:(?<![A-Za-z0-9])(?:(?:api|secret|private)[_-]?key|(?:access|auth|refresh|hf|hub|github|gh)[_-]?token"
    r"|secret|password|passwd|authorization)|(?<![\w\-])(?:--)?token)"
)


_SECRET_FIELD = re.compile(
    rf"""(?P<key>{_SECRET_NAME}["']?\s*[:=]\s*"""
    rf"""|(?<![\w\-])--(?:[A-Za-z0-9]+-){{0,3}}(?:{_SECRET_NAME}|token)[ \t]+(?!-))"""  # --api-key VALUE
    r"""(?!["']?(?:Bearer\s|\[))"""
    rf"""(?:{_QUOTED_VALUE}|(?P<bare>[^\s"',;)\]}}]{{4,}}))""",
    re.IGNORECASE,
)


_URL_HOST = re.compile(
    r"(?P<scheme>(?<![\w+.\-])[a-zA-Z][a-zA-Z0-9+.\-]*+://)(?P<userinfo>[^@/\s]+@)?(?P<host>[^/:\s?#\]\[]+)"
)


_EMAIL = re.compile(r"(?<![\w.+\-])[\w.+\-]++@(?P<domain>[\w\-]++(?:\.[\w\-]++)++)")


_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"


_IPV4 = re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?!\.?\w)")


# Four numbers that follow these are a version (``version 1.2.3.4``, ``mlx==0.2.1.1``, a keg folder).
_VERSION_BEFORE = re.compile(r"(?:\bversion\s*[:=]?\s*|[=<>~!]=\s*|/Cellar/[^/\s]+/)$", re.IGNORECASE)


_IPV6 = re.compile(
    r"(?<![\w:])(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}"
    r"|(?:[0-9a-fA-F]{1,4}:){1,6}:(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*)?"
    r"|::(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*))(?:%\w+)?(?![\w:])"
)


_HOME = re.compile(r"(?:/Users|/home|[A-Za-z]:\\Users)[/\\](?P<user>[^/\\\s'\"`:;,()\[\]]+)")


# Any dotted name, whole and not called (``Path.home()`` is code); ``_local_host`` keeps those that end
# in a local-network suffix.
_DOTTED_NAME = re.compile(r"(?<![\w.\-])[A-Za-z0-9][\w\-]*+(?:\.[\w\-]++)++(?!\()")


# What each name-revealing pattern holds, found fast (``learn``).
_HOME_MARK = re.compile(r"/Users[/\\]|/home[/\\]|\\Users[/\\]")


_URL_MARK = re.compile("://")


MAX_SCHEME = 32  # characters of a URL's scheme looked back for from its ://


_HOST_MARK = re.compile("host", re.IGNORECASE)


_LOCAL_SUFFIX = re.compile(
    rf"\.(?:{'|'.join(sorted(LOCAL_SUFFIXES))})(?![\w\-(]|\.[\w\-])", re.IGNORECASE
)  # not a call: Path.home()


# The start of a dotted name that ends where the search ends (at a local suffix).
_NAME_BEFORE = re.compile(r"(?<![\w\-.])[A-Za-z0-9][\w\-.]*+$")


_HOST_FIELD = re.compile(r"""(?P<key>\bhost(?:name)?["']?\s*[=:]\s*["']?)(?P<value>[A-Za-z][\w\-.]*)""", re.IGNORECASE)


# What some pattern of ``Masker.redact`` needs in the text to match at all, looked for in the text in
# lower case (a case-blind pattern is many times slower): one pass over these spares a line that
# holds none of them a dozen patterns. A new pattern adds what it needs here.
_MARKERS = (
    *("://", "@"),  # _URL_HOST, _EMAIL
    *("/users", "/home", "\\users"),  # _HOME
    *("bearer", "authorization"),  # _BEARER, _AUTHORIZATION
    *("sk-", "pk-", "rk-", "hf_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "akia", "aiza", "eyj"),
    "::",  # _IPV6, shortened
    "host",  # _HOST_FIELD
    *(f".{suffix}" for suffix in sorted(LOCAL_SUFFIXES)),  # _DOTTED_NAME's local names
)


_HINTS = (
    # usertext: a text field with a value that may be text (not ``messages=36`` or ``prompt: 267``)
    re.compile(rf"""(?:{TEXT_WORDS})["']?\s*(?:=[ \t]*[^\d\s]|:[ \t]*["'\[{{(])"""),
    re.compile(r"""(?:key|token|secret|passw(?:or)?d)(?:["']?\s*[:=]|[ \t])"""),  # _SECRET_FIELD, not "298 tokens"
    re.compile(r"\d\.\d+\.\d+\.\d"),  # _IPV4
    re.compile(r"(?:[0-9a-f]{1,4}:){7}"),  # _IPV6 in full
)


def _may_hold(lowered: str) -> bool:
    """Whether some pattern of ``Masker.redact`` could match the text (given in lower case)."""
    return any(marker in lowered for marker in _MARKERS) or any(hint.search(lowered) for hint in _HINTS)


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


def logged(text: str) -> str:
    """``text`` marked as copied from the log, so that ``redact_logged`` masks it."""
    return f"{_START}{_MARKS.sub('', text)}{_END}"


def unmark(document: str) -> str:
    """The document without the marks ``logged`` added (for a report that is not redacted)."""
    return _MARKS.sub("", document)


def redact_logged(document: str, names: Names | None = None, *, keep_marks: bool = False) -> Redaction:
    """``document`` with personal data masked inside the ``logged`` spans only, and the marks removed
    (``keep_marks``: kept around each masked line, to tell log text from the document's own words);
    ``names``: those learnt beforehand (from the whole log, not only the lines the document quotes)."""
    document = document.replace(f"{_END}\n{_START}", "\n")  # lines quoted one after another (a record's) as one
    spans = [match[1] for match in _LOGGED_SPAN.finditer(document)]
    known = Names() if names is None else Names(set(names.users), set(names.hosts))
    masker = Masker(learn(spans, known))

    def masked(match: re.Match[str]) -> str:
        text = masker.redact(match[1])
        return logged(text).replace("\n", f"{_END}\n{_START}") if keep_marks else text

    text = _LOGGED_SPAN.sub(masked, document)
    return Redaction(text if keep_marks else unmark(text), masker.counts)


def redact(text: str) -> Redaction:
    """All of ``text`` with personal data masked (see the module docstring for what counts)."""
    masker = Masker(learn([text]))
    return Redaction(masker.redact(text), masker.counts)


@dataclass
class Names:
    """The user and host names the text reveals, to be masked wherever else they stand alone."""

    users: set[str] = field(default_factory=set)
    hosts: set[str] = field(default_factory=set)


def learn(texts: Iterable[str], names: Names | None = None) -> Names:
    """The account names home-folder paths reveal and the private host names URLs, ``host=`` fields and
    local-network names reveal (a Bonjour name ``studio.local`` gives ``studio`` too), over all ``texts``."""
    names = Names() if names is None else names
    for text in _blocks(texts):
        homes = _around(_HOME_MARK, _HOME, text, 2)  # 2: the drive of C:\Users
        names.users.update(m["user"] for m in homes if m["user"].lower() not in _SHARED_HOMES)
        urls = _around(_URL_MARK, _URL_HOST, text, MAX_SCHEME)
        hosts = [m["host"] for m in urls if not (_public(m["host"]) or _IPV4.fullmatch(m["host"]))]
        hosts += [m["value"] for m in _around(_HOST_MARK, _HOST_FIELD, text, 0) if not _public(m["value"])]
        hosts += _local_names(text)
        for host in hosts:
            names.hosts.update({host, host.split(".", 1)[0]})
    return names


def _blocks(texts: Iterable[str], size: int = 1 << 20) -> Iterator[str]:
    """The texts joined a line each into blocks of about ``size`` characters: a pattern searched in a
    few big blocks costs a fraction of it searched in each of a million short messages."""
    batch: list[str] = []
    held = 0
    for text in texts:
        batch.append(text)
        held += len(text)
        if held >= size:
            yield "\n".join(batch)
            batch, held = [], 0
    if batch:
        yield "\n".join(batch)


def _around(mark: re.Pattern[str], pattern: re.Pattern[str], text: str, before: int) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` that hold a match of ``mark``, a literal that few lines hold: tried
    only around it, since trying the pattern at every character of a whole log file takes seconds."""
    for marked in mark.finditer(text):
        start = marked.start()
        window = pattern.finditer(text, max(0, start - before), min(len(text), marked.end() + before + MAX_NAME))
        yield from (match for match in window if match.start() <= start < match.end())


def _local_names(text: str) -> list[str]:
    """The local-network names in ``text`` (``studio.local``): found from their suffix, which few lines
    hold, not from every dotted name (``omlx.server`` is on every line)."""
    names = []
    for suffix in _LOCAL_SUFFIX.finditer(text):
        head = _NAME_BEFORE.search(text, max(0, suffix.start() - MAX_NAME), suffix.start())
        if head is not None:
            names.append(head.group(0) + suffix.group(0))
    return names


def _by_name(names: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern of the names as words of their own, not part of a file or module name (``jdoe.py``,
    ``omlx.server``); names too short or too common to mask wherever they occur are left out."""
    words = sorted(
        {n for n in names if MIN_USER_NAME <= len(n) <= MAX_NAME and n.lower() not in _COMMON_WORDS},
        key=len,
        reverse=True,
    )
    alternatives = "|".join(re.escape(n) for n in words)
    return re.compile(rf"(?<![\w\-.])(?:{alternatives})(?![\w\-]|\.\w)") if words else None


class Masker:
    """Applies the patterns in order and counts what each replaced; one masker serves all of a
    document's or a stream's text, with the names learnt from all of it."""

    def __init__(self, names: Names) -> None:
        self.counts: Counter[str] = Counter()
        self.by_user = _by_name(names.users)
        self.by_host = _by_name(names.hosts - {name for name in names.hosts if _public(name)})
        self.names = [pattern for pattern in (self.by_user, self.by_host) if pattern is not None]

    def redact(self, text: str) -> str:
        if not _may_hold(text.lower()) and not any(pattern.search(text) for pattern in self.names):
            return text  # most log lines: none of the patterns below can match
        text = mask_text_values(text, lambda: self.mask("text"))
        text = self.sub(_TOKEN, text, lambda m: self.mask("key"))
        text = self.sub(_BEARER, text, self.keyed("key"))
        text = self.sub(_AUTHORIZATION, text, self.keyed("key"))
        text = self.sub(_SECRET_FIELD, text, lambda m: self.quoted(m, "key") if m["quote"] else self.keyed("key")(m))
        text = self.sub(_URL_HOST, text, self.url)
        text = self.sub(_EMAIL, text, self.email)
        text = self.sub(_IPV4, text, lambda m: self.mask("ip") if _personal_ipv4(m) else None)
        text = self.sub(_IPV6, text, lambda m: self.mask("ip") if _personal_ipv6(m.group(0)) else None)
        text = self.sub(_HOME, text, lambda m: None if m["user"].lower() in _SHARED_HOMES else self.mask("home", "~"))
        text = self.sub(_DOTTED_NAME, text, lambda m: self.mask("host") if _local_host(m.group(0)) else None)
        text = self.sub(_HOST_FIELD, text, lambda m: None if _public(m["value"]) else self.keyed("host")(m))
        if self.by_host is not None:
            text = self.sub(self.by_host, text, lambda m: self.mask("host"))
        if self.by_user is not None:
            text = self.sub(self.by_user, text, lambda m: self.mask("user"))
        return text

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

    def quoted(self, match: re.Match[str], category: str) -> str | None:
        """Keep the key and the quotes, mask what is between them (nothing to mask in ``''``)."""
        if not match["quoted"]:
            return None
        return match["key"] + match["quote"] + self.mask(category) + (match["close"] or "")

    def url(self, match: re.Match[str]) -> str | None:
        host = match["host"]
        userinfo = match["userinfo"]
        if userinfo is None and (_public(host) or _IPV4.fullmatch(host)):
            return None  # IP addresses are the next rule's business
        masked_user = self.mask("user") + "@" if userinfo else ""
        masked_host = host if _public(host) or _IPV4.fullmatch(host) else self.mask("host")
        return match["scheme"] + masked_user + masked_host

    def email(self, match: re.Match[str]) -> str | None:
        """Mask up to the last alphabetic top-level domain; what follows it (``.123``) stays."""
        labels = match["domain"].split(".")
        rest: list[str] = []
        while labels and not re.fullmatch(r"[A-Za-z]{2,}", labels[-1]):
            rest.insert(0, labels.pop())
        if len(labels) < 2:
            return None
        return self.mask("email") + "".join(f".{label}" for label in rest)


def _personal_ipv4(match: re.Match[str]) -> bool:
    """A routable-looking address that is not a version number written like one."""
    before = match.string[max(0, match.start() - 40) : match.start()]
    return not _VERSION_BEFORE.search(before) and _personal(match.group(0))


def _personal_ipv6(text: str) -> bool:
    """An address, not a path or slice that happens to be hex and colons (``face::bad``, ``x[1::2]``)."""
    address = text.split("%")[0]
    longest = max(len(group) for group in address.split(":"))
    return any(c.isdigit() for c in address) and longest >= 3 and _personal(text)


def _personal(text: str) -> bool:
    """An address that could identify a machine: not loopback or unspecified."""
    try:
        address = ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified)


def _local_host(name: str) -> bool:
    return name.rsplit(".", 1)[-1].lower() in LOCAL_SUFFIXES


def _public(host: str) -> bool:
    host = host.lower().rstrip(".")
    return host in PUBLIC_HOSTS or any(host.endswith("." + public) for public in PUBLIC_HOSTS)
