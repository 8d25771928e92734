"""Likely secrets, refused on the way in: a memory vault is plain text, often in git.

Each pattern names a provider's token format (documented prefixes and lengths), a private
key block, or a payment card number that passes the Luhn check.
"""

import re
from typing import NamedTuple

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx))
    for name, rx in (
        ("private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("AWS access key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
        ("AWS secret key", r"(?i)aws_?secret_?access_?key\s*[:=]\s*[A-Za-z0-9/+=]{40}\b"),
        ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b"),
        ("GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}\b"),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
        ("Slack webhook", r"https://hooks\.slack\.com/services/T[A-Za-z0-9/_-]{20,}"),
        ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("OpenAI API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        ("Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b"),
        ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("Google OAuth token", r"\bya29\.[0-9A-Za-z_-]{20,}"),
        ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b"),
        ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
        ("Twilio key", r"\bSK[0-9a-fA-F]{32}\b"),
        ("SendGrid key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
        ("JSON web token", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
        ("password in a URL", r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s:@]{3,}@[^\s]+"),
    )
)

_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")


class Finding(NamedTuple):
    kind: str
    start: int
    end: int

    def masked(self, text: str) -> str:
        value = text[self.start : self.end]
        return value[:4] + "…" if len(value) > 8 else "…"


def find_secrets(text: str) -> list[Finding]:
    findings = [
        Finding(name, m.start(), m.end()) for name, rx in _PATTERNS for m in rx.finditer(text)
    ]
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and _luhn(digits) and len(set(digits)) > 1:
            findings.append(Finding("payment card number", m.start(), m.end()))
    return sorted(findings, key=lambda f: f.start)


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


REDACTED = "[secret removed]"


def redact(text: str) -> str:
    """`text` with each likely secret replaced by REDACTED (overlapping findings as one).

    For text kenomem copies rather than refuses (the sleep cycle's buffer entries, an LLM's
    answer). Each pass looks again at what the last one left, until nothing is found.
    """
    findings = find_secrets(text)
    while findings:
        parts: list[str] = []
        end = 0
        for found in findings:  # sorted by start
            if found.start >= end:
                parts += [text[end : found.start], REDACTED]
            end = max(end, found.end)
        text = "".join([*parts, text[end:]])
        findings = find_secrets(text)
    return text
