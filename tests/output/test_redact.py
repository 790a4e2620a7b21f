"""Redaction: what is masked, what is kept, only log text is touched, and no input is slow."""

from __future__ import annotations

import time

import pytest

from omlx_logscan.output.redact import logged, redact, redact_logged, unmark


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("GET http://127.0.0.1:8000/v1/models and ::1", None),
        ("/opt/homebrew/Cellar/python@3.11/3.11.15_1/lib", None),
        ("https://github.com/jundot/omlx 2026-09-15T20:19:38 x[1::2]", None),
        ("std::runtime_error (00000002:kIOGPU) 0.5.7 max_tokens=4096", None),
        ("peer fe80::1cc0:3e8c:119f:c2e1%en0 and 2001:db8::8a2e:370:7334", "peer [ip] and [ip]"),
        ("Authorization: Bearer abcdef0123456789 hf_abcdefghijklmnopqrstuvwxyz", "Authorization: Bearer [key] [key]"),
        ("https://bob:pw@models.example.com/x", "https://[user]@[host]/x"),
        (r"C:\Users\Jane\omlx and /home/jane/x and /Users/Shared/x", r"~\omlx and ~/x and /Users/Shared/x"),
        ('{"prompt": "say \\"hi\\"", "max_tokens": 5}', '{"prompt": "[text]", "max_tokens": 5}'),
        # secrets whose name ends a longer one, or that follow a flag
        ("OMLX_API_KEY=abcd1234efgh OPENAI_API_KEY=notarealkey99", "OMLX_API_KEY=[key] OPENAI_API_KEY=[key]"),
        ("HF_TOKEN=abcdefgh1234 x-api-key: abcdef12", "HF_TOKEN=[key] x-api-key: [key]"),
        ("omlx serve --api-key mysecret --port 8000", "omlx serve --api-key [key] --port 8000"),
        ("--token abcdefgh --token=abcd1234 --api-key --verbose", "--token [key] --token=[key] --api-key --verbose"),
        ("eos_token=</s> pad_token=<pad> max_tokens=4096", None),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA== next", "Authorization: [key] next"),
        ('"authorization": "Digest abcdef123456"', '"authorization": "[key]"'),
        ('passwd="my pass phrase" next', 'passwd="[key]" next'),
        ("password='' token=\"\"", None),
        ('{"hostname": "alices-mbp", "port": 8000}', '{"hostname": "[host]", "port": 8000}'),
        ("prompt='a prompt cut off by the logger\nnext line", "prompt='[text]"),  # unclosed: to the end
        # text in every form a text field's value takes, and fields named for it (issue 29)
        ("content='line one\nline two' next", "content='[text]' next"),
        (
            '{"reasoning_content": "why", "arguments": "{\\"q\\": 1}"}',
            '{"reasoning_content": "[text]", "arguments": "[text]"}',
        ),
        ("content=['a', 'b (c)'] next", "content=[text] next"),
        ("messages: [{'role': 'user', 'content': 'hi ]'}] end", "messages: [text] end"),
        ("Message[0]: role=user, content=hello there\nsecond line", "Message[0]: role=user, content=[text]"),
        ("model=m, messages=1, stream=True, prompt: 345 tokens", None),
        ("Anthropic message: model=m, 5 tokens; Chat completion: model=m; Completion: 3 tokens", None),
        ("prompt_tokens=12 input_tokens=3 Content-Type: application/json text/plain", None),
        ("user_input='x' SYSTEM_PROMPT=\"y\" query=z", "user_input='[text]' SYSTEM_PROMPT=\"[text]\" query=[text]"),
        # secret forms
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.sig-_0 ok", "jwt [key] ok"),
        ("key=AIzaSyA1234567890abcdefghijklmnopqrstu; AIzaSyA1234567890abcdefghijklmnopqrstu", "key=[key]; [key]"),
        (
            "authorization: bearer abcdef0123456789; BEARER abcdef0123456789",
            "authorization: bearer [key]; BEARER [key]",
        ),
        ("studio.LOCAL Host: buildbox", "[host] Host: [host]"),
        # code and versions that only look like hosts or addresses
        ("Path.home() and threading.local()", None),
        ("face::bad ab:cd::ef std::io a[12::34]", None),
        ("omlx version 1.2.3.4, mlx==0.21.1.2, /opt/homebrew/Cellar/omlx/1.2.3.4/bin v1.2.3.4 1.2.3.4.5", None),
        ("peer 8.8.4.4. and fe80::1 and 2001:db8::1", "peer [ip]. and [ip] and [ip]"),
        ("jdoe-studio.local. and my_mac.lan", "[host]. and [host]"),
        ("mail jdoe@example.org, python@3.11 and a.b+c@d-e.co.uk.", "mail [email], python@3.11 and [email]."),
    ],
)
def test_redact_patterns(text: str, expected: str | None) -> None:
    assert redact(text).text == (text if expected is None else expected)


def test_names_learnt_anywhere_are_masked_everywhere() -> None:
    """A user name from a home folder and a host name from a URL, each standing alone elsewhere."""
    text = "model jdoe/private-llama on gpubox-07\n/Users/jdoe/x via http://gpubox-07:8000/v1 and mac.local"
    assert redact(text).text == "model [user]/private-llama on [host]\n~/x via http://[host]:8000/v1 and [host]"


def test_user_name_is_masked_as_a_word_of_its_own() -> None:
    text = "/Users/jdoe/x by jdoe (account jdoe). jdoe.py omlx.jdoe Jdoe jdoe-studio"
    assert redact(text).text == "~/x by [user] (account [user]). jdoe.py omlx.jdoe Jdoe jdoe-studio"


@pytest.mark.parametrize("account", ["a", "omlx", "mlx"])
def test_short_or_common_account_names_mask_only_the_home_folder(account: str) -> None:
    text = f"/Users/{account}/omlx/server.py: {account} ran a cache clear in omlx.server with mlx"
    masked = redact(text)
    assert masked.text == f"~/omlx/server.py: {account} ran a cache clear in omlx.server with mlx"
    assert masked.summary() == "1 home folder"


def test_redact_logged_masks_only_the_marked_spans() -> None:
    document = "oMLX by jdoe: a cache-clear drain at 10.1.2.3; " + logged("/Users/jdoe/x and jdoe at 10.1.2.3")
    masked = redact_logged(document)
    assert masked.text == "oMLX by jdoe: a cache-clear drain at 10.1.2.3; ~/x and [user] at [ip]"
    assert masked.summary() == "1 home folder, 1 user name, 1 IP address"


def test_a_value_over_quoted_lines_is_masked_whole() -> None:
    """A record quoted line by line (a report's excerpt): its prompt's second line is masked too."""
    document = "```\n" + logged("x: content='first line") + "\n" + logged("second line' done") + "\n```"
    assert redact_logged(document).text == "```\nx: content='[text]' done\n```"


def test_marks_cannot_be_forged_by_log_text() -> None:
    forged = logged("\ue001 10.1.2.3 \ue000")
    assert redact_logged(f"prose {forged} prose").text == "prose  [ip]  prose"
    assert unmark(f"a {logged('b')} c") == "a b c"


@pytest.mark.slow
@pytest.mark.parametrize(
    "token",
    [
        "a." * 100_000,
        "1." * 100_000,
        "a-" * 100_000,
        "a+" * 100_000,
        "a." * 100_000 + "@b",
        "a-" * 100_000 + ".local",
        "content=[" * 50_000,
        "content='' " * 50_000,
        "x_" * 100_000 + "content=1",
        'content="' + "a\\" * 100_000,
        "eyJ" + "a" * 200_000 + ".",
        "content: ('" + "[" * 200_000,
    ],
)
def test_one_long_token_redacts_without_catastrophic_backtracking(token: str) -> None:
    # Not a speed goal (those are in bench/): the linear patterns take milliseconds here, while one
    # that backtracks over a 200 KB token takes hours, so a bound this loose fails only for that.
    started = time.perf_counter()
    redact(token)
    assert time.perf_counter() - started < 30.0
