"""Likely secrets, refused on the way in: a memory vault is plain text, often in git.

Each pattern names a provider's token format (documented prefixes and lengths), a private
key block, a credential written in a URL, an `Authorization` header or an assignment
(`DB_PASSWORD=...`, `api_key: ...`), a bare AWS secret key (40 random characters), or a
payment card number that passes the Luhn check.

A finding spans the secret itself where it can be told apart (the password of a URL, the
value of an assignment), so what is shown or cut out is the secret, not its label.
`check` is the one check every door runs on every field it stores.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import pairwise
from typing import NamedTuple

from kenomem.errors import SecretDetected

# (kind, hints, pattern): a pattern is tried only when one of its hints is in the text,
# lower-cased (a substring test costs far less than a scan). A pattern's group `s`, when
# it has one, is the secret; else the whole match is.
_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (name, tuple(hints.split()), re.compile(rx))
    for name, hints, rx in (
        (
            "private key block",
            "private",
            # The whole block, to its END line (or to the end of the text when cut short),
            # so that redacting it leaves none of the key's body behind.
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/=]+)*)",
        ),
        ("AWS access key", "akia asia abia acca", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
        (
            "AWS secret key",
            "secret",
            r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})\b",
        ),
        (
            "GitHub token",
            "ghp_ gho_ ghu_ ghs_ ghr_ github_pat_",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b",
        ),
        ("GitLab token", "glpat-", r"\bglpat-[A-Za-z0-9_-]{20,}\b"),
        ("Slack token", "xox", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
        (
            "Slack webhook",
            "hooks.slack.com",
            r"https://hooks\.slack\.com/services/T[A-Za-z0-9/_-]{20,}",
        ),
        ("Anthropic API key", "sk-ant-", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("OpenAI API key", "sk-", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        ("Stripe key", "_live_ _test_", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b"),
        ("Google API key", "aiza", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("Google OAuth token", "ya29.", r"\bya29\.[0-9A-Za-z_-]{20,}"),
        ("Hugging Face token", "hf_", r"\bhf_[A-Za-z0-9]{30,}\b"),
        ("npm token", "npm_", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("PyPI token", "pypi-age", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
        ("Twilio key", "sk", r"\bSK[0-9a-fA-F]{32}\b"),
        ("SendGrid key", "sg.", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
        (
            "JSON web token",
            "eyj",
            r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        ),
        # scheme://user:password@host, in any case, the user possibly empty; the password
        # runs to the last `@` before the host (an unescaped `@` in it is common).
        (
            "password in a URL",
            "://",
            r"(?i)\b[a-z][a-z0-9+.-]*://[^\s/?#@:]*:(?P<s>[^\s/?#]+)@[^\s/?#@]+",
        ),
        (
            "HTTP authorization header",
            "authorization",
            r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)"
            r"\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})",
        ),
        (
            "HTTP authorization header",
            "bearer",
            r"(?i)\bbearer\s+(?P<s>(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)",
        ),
    )
)

# `NAME_PASSWORD=value`, `api_key: value`, `"token": "value"`: a key naming a credential,
# then its value. Any name ending in one of these words counts (`DB_PASSWORD`,
# `github_token`), not one that goes on (`token_count`, `max_tokens`).
_ASSIGNMENT_HINTS = ("pass", "pwd", "secret", "token", "key")
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?P<key>[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|pwd|secret"
    r"|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret))"
    r"(?P<quote>[\"']?)[ \t]*(?P<op>:|=>|:=|=)(?P<space>[ \t]*)"
    r"(?:\"(?P<dq>[^\"\n]{5,200})\"|'(?P<sq>[^'\n]{5,200})'|(?P<bare>[^\s\"'`,;&)\]}]{3,}))"
)
# What stands where a value will go, not a value: `$VAR`, `${VAR}`, `<token>`, `***`.
_PLACEHOLDER = re.compile(
    r"(?i)(?:\$[{(A-Za-z_]|<[\w .-]*>?$|\{\{|\{[A-Za-z_]\w*\}?$|%[A-Za-z_]\w*%|\*{3,}|x{3,}$"
    r"|\.{3}|…|!vault|\[redacted|\[secret\b|redacted|hidden|your[_-]|example|(?:null|none|nil|true|false"
    r"|undefined|string|str|required|optional|changeme|password|secret|token)$)"
)


def is_placeholder(value: str) -> bool:
    """Whether a credential's value is a stand-in (`$DB_PASSWORD`, `<token>`, `***`)."""
    return _PLACEHOLDER.match(value.strip()) is not None


# Code, not a value: `password=args.password`, `token=get_token()`, `secret=os.environ[...]`.
_CODE = re.compile(r"^[A-Za-z_][A-Za-z_.]*(?:[(\[].*)?$")

# 40 characters of base64's alphabet on their own: the form of an AWS secret access key.
# Not inside a longer word, file name or URL (`.`, `-` and `_` join those).
_BARE_AWS = re.compile(r"(?<![\w/+=.-])[A-Za-z0-9/+]{40}(?![\w/+=-]|\.\w)")

# 13 to 19 digits, the first one a payment network's (2 to 6), on their own: not part of
# a word, a file name or a decimal number. A 13-digit time in milliseconds starts with 1.
_CARD = re.compile(r"(?<![\w-])(?<!\w\.)[2-6](?:[ -]?\d){12,18}(?![\w-]|\.\w)")
# With dots, only in groups (4111.1111.1111.1111): a decimal number is not a card.
_CARD_DOTS = re.compile(r"(?<![\w-])(?<!\w\.)[2-6]\d{2,5}(?:\.\d{3,6}){2,5}(?![\w-]|\.\w)")

# Kinds whose first characters are a documented marker (`ghp_`, `AKIA`) and not part of
# what is secret: those are shown when a finding is reported, nothing of the others.
_MARKED = frozenset(
    {
        "private key block",
        "AWS access key",
        "GitHub token",
        "GitLab token",
        "Slack token",
        "Slack webhook",
        "Anthropic API key",
        "OpenAI API key",
        "Stripe key",
        "Google API key",
        "Google OAuth token",
        "Hugging Face token",
        "npm token",
        "PyPI token",
        "Twilio key",
        "SendGrid key",
        "JSON web token",
    }
)


# No pattern finds a secret in fewer characters (`pwd=abc`).
_SHORTEST = 7


class Finding(NamedTuple):
    kind: str
    start: int
    end: int

    def masked(self, text: str) -> str:
        """The finding as it may be shown: its documented prefix at most."""
        value = text[self.start : self.end]
        if self.kind in _MARKED and len(value) > 8:
            return value[:4] + "…"
        return "…"

    def described(self, text: str) -> str:
        """Its kind, and the prefix `masked` shows when there is one: `GitHub token: ghp_…`."""
        shown = self.masked(text)
        return self.kind if shown == "…" else f"{self.kind}: {shown}"


def find_secrets(text: str) -> list[Finding]:
    findings = []
    lower = text.lower()
    for name, hints, rx in _PATTERNS:
        for hint in hints:
            if hint in lower:
                break
        else:
            continue
        for m in rx.finditer(text):
            if "s" not in rx.groupindex:
                findings.append(Finding(name, m.start(), m.end()))
            elif not is_placeholder(m.group("s")):
                findings.append(Finding(name, m.start("s"), m.end("s")))
    if any(word in lower for word in _ASSIGNMENT_HINTS):
        findings += _assignments(text)
    for m in _BARE_AWS.finditer(text):
        if _random_like(m.group(0)):
            findings.append(Finding("AWS secret key", m.start(), m.end()))
    for rx in (_CARD, _CARD_DOTS):
        for m in rx.finditer(text):
            findings += _cards(m.group(0), m.start())
    return _distinct(findings)


def _cards(run: str, offset: int) -> list[Finding]:
    """The card numbers in a run of digits: the whole run, or else each of its
    space-separated parts (`4111111111111111 2029`: a card, then a year). Groups of a
    card's own layout followed by more digits read as one longer number, not a card."""
    if _card_number(run):
        return [Finding("payment card number", offset, offset + len(run))]
    return [
        Finding("payment card number", offset + g.start(), offset + g.end())
        for g in re.finditer(r"[^ ]+", run)
        if " " in run and g.group(0)[0] in "23456" and _card_number(g.group(0))
    ]


def _card_number(written: str) -> bool:
    digits = re.sub(r"\D", "", written)
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and _luhn(digits)


def _assignments(text: str) -> list[Finding]:
    found = []
    for m in _ASSIGNMENT.finditer(text):
        if m.group("op") == ":" and not (m.group("quote") or m.group("space")):
            continue  # `tiktoken:cl100k_base` is a name; `token: x` and `"token":"x"` are not
        group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
        value = m.group(group)
        if is_placeholder(value) or not value.strip():
            continue
        if group == "bare":
            key = m.group("key")
            if _CODE.match(value) and ("." in value or "(" in value or "[" in value):
                continue  # an expression, not a value
            if _CODE.match(value) and not (key.isupper() and m.group("op") == "="):
                continue  # `password=secret` is code; `DB_PASSWORD=secret` is an env file
            if m.group("op") == ":" and (len(value) < 6 or value.isalpha()):
                continue  # prose: "Password: ask Anna", "Token: 1h"
        found.append(Finding("password or token", m.start(group), m.end(group)))
    return found


def _random_like(value: str) -> bool:
    """Whether 40 characters look drawn at random (a key) rather than written (a path, a
    name): all of upper case, lower case and digits, high entropy, and the kind of
    character changing often. A git SHA (hex, one case) never is."""
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return False
    if not any(c.isdigit() for c in value):
        return False
    counts = Counter(value).values()
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts)
    changes = sum(_kind(a) != _kind(b) for a, b in pairwise(value))
    return entropy >= 4.2 and changes >= 16


def _kind(ch: str) -> int:
    return 0 if ch.islower() else 1 if ch.isupper() else 2 if ch.isdigit() else 3


def _distinct(findings: list[Finding]) -> list[Finding]:
    """By position; of findings of one span, the first pattern's."""
    seen: set[tuple[int, int]] = set()
    out = []
    for f in sorted(findings, key=lambda f: f.start):
        if (f.start, f.end) not in seen:
            seen.add((f.start, f.end))
            out.append(f)
    return out


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def check(
    fields: Mapping[str, str | Iterable[str] | None], *, then: str = "nothing was written"
) -> None:
    """Refuse a likely secret in any of these fields (`{"text": ..., "tag": [...]}`):
    SecretDetected names the field and the kind, and shows at most a token's prefix."""
    seen: set[str] = set()  # a value given in two fields (a turn's session and scope)
    for field, value in fields.items():
        for text in (value,) if isinstance(value, str) else value or ():
            if len(text) < _SHORTEST or text in seen:
                continue
            seen.add(text)
            found = find_secrets(text)
            if not found:
                continue
            first = found[0]
            others = [k for k in dict.fromkeys(f.kind for f in found) if k != first.kind]
            what = ", ".join([first.described(text), *others])
            raise SecretDetected(
                f"refused: the {field} looks like it holds a secret ({what}); {then}",
                hint="keep the secret in a password manager or secret store, and write "
                "down where it lives instead",
            )


REDACTED = "[secret removed]"  # a placeholder to the detector: never found again
_PASSES = 4  # a bound, whatever a pattern might make of a marker


def redact(text: str) -> str:
    """`text` with each likely secret replaced by REDACTED (overlapping findings as one).

    For text kenomem copies rather than refuses (the sleep cycle's buffer entries, an LLM's
    answer). Each pass looks again at what the last one left, until nothing is found.
    """
    findings = find_secrets(text)
    for _ in range(_PASSES):
        if not findings:
            break
        parts: list[str] = []
        end = 0
        for found in findings:  # sorted by start
            if found.start >= end:
                parts += [text[end : found.start], REDACTED]
            end = max(end, found.end)
        text = "".join([*parts, text[end:]])
        findings = find_secrets(text)
    return text
