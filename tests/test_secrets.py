"""kenomem.secrets.find_secrets: credentials are refused, ordinary text is not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.secrets import Finding, find_secrets

ALNUM = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz"


def fill(n: int, alphabet: str = ALNUM) -> str:
    """A fake token body of length n, built here so no real credential sits in the tests."""
    return (alphabet * (n // len(alphabet) + 1))[:n]


def kinds(text: str) -> set[str]:
    return {f.kind for f in find_secrets(text)}


# (kind, fake token) for every provider pattern in the module.
TOKENS = [
    ("AWS access key", "AKIA" + "A" * 16),
    ("AWS access key", "ASIA" + fill(16, "ABCDEFGHIJ0123456789")),
    ("GitHub token", "ghp_" + fill(36)),
    ("GitHub token", "gho_" + fill(40)),
    ("GitHub token", "github_pat_" + fill(22) + "_" + fill(59)),
    ("GitLab token", "glpat-" + fill(20)),
    ("Slack token", "xoxb-" + fill(10, "0123456789") + "-" + fill(24)),
    ("Slack token", "xoxp-" + fill(30)),
    (
        "Slack webhook",
        "https://hooks.slack.com/services/T" + fill(8) + "/B" + fill(8) + "/" + fill(24),
    ),
    ("Anthropic API key", "sk-ant-api03-" + fill(40)),
    ("OpenAI API key", "sk-" + fill(48)),
    ("OpenAI API key", "sk-proj-" + fill(40)),
    ("Stripe key", "sk_live_" + fill(24)),
    ("Stripe key", "rk_test_" + fill(24)),
    ("Google API key", "AIza" + fill(35)),
    ("Google OAuth token", "ya29." + fill(40)),
    ("Hugging Face token", "hf_" + fill(34)),
    ("npm token", "npm_" + fill(36)),
    ("PyPI token", "pypi-AgE" + fill(60)),
    ("Twilio key", "SK" + fill(32, "0123456789abcdef")),
    ("SendGrid key", "SG." + fill(22) + "." + fill(43)),
    ("JSON web token", "eyJ" + fill(20) + ".eyJ" + fill(30) + "." + fill(43)),
    ("password in a URL", "postgres://admin:" + fill(12) + "@db.example.com:5432/app"),
    ("password in a URL", "https://user:hunter22@example.com/"),
]


@pytest.mark.parametrize(("kind", "token"), TOKENS)
def test_each_provider_pattern(kind: str, token: str) -> None:
    text = f"the key is {token} keep it safe"
    found = [f for f in find_secrets(text) if f.kind == kind]
    assert found, kinds(text)
    start = text.index(token)
    assert any(f.start == start for f in found)
    assert all(text[f.start : f.end] in token for f in found)


@pytest.mark.parametrize(("kind", "token"), TOKENS)
def test_each_provider_pattern_on_its_own_line(kind: str, token: str) -> None:
    assert kind in kinds(token)
    assert kind in kinds(f"export TOKEN={token}\n")


def test_aws_secret_key_assignment() -> None:
    secret = fill(40, ALNUM + "/+")
    assert "AWS secret key" in kinds(f"aws_secret_access_key = {secret}")
    assert "AWS secret key" in kinds(f"AWS_SECRET_ACCESS_KEY: {secret}")
    assert "AWS secret key" in kinds(f"awsSecretAccessKey={secret}")


@pytest.mark.parametrize(
    "header",
    [
        "-----BEGIN PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "-----BEGIN EC PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    ],
)
def test_private_key_block(header: str) -> None:
    text = f"my key:\n{header}\n{fill(64)}\n-----END-----\n"
    assert "private key block" in kinds(text)


def test_public_key_and_certificate_are_not_secrets() -> None:
    assert kinds("-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----") == set()
    assert kinds("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----") == set()
    assert kinds("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG user@host") == set()


@pytest.mark.parametrize(
    "number",
    [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4111111111111111",
        "5555 5555 5555 4444",
        "3782 822463 10005",
        "4222222222222",
        "6011 0009 9013 9424",
    ],
)
def test_card_numbers_that_pass_luhn(number: str) -> None:
    text = f"card: {number}, exp 12/29"
    found = [f for f in find_secrets(text) if f.kind == "payment card number"]
    assert len(found) == 1
    assert text[found[0].start : found[0].end] == number


@pytest.mark.parametrize(
    "number",
    [
        "4111 1111 1111 1112",
        "4111111111111121",
        "5555 5555 5555 4445",
        "0000 0000 0000 0000",
        "1234 5678 9012",
        "41111111111111111111",
    ],
)
def test_card_like_numbers_that_fail(number: str) -> None:
    assert "payment card number" not in kinds(f"number {number} here")


@pytest.mark.parametrize(
    "text",
    [
        "Prefers direct communication without pleasantries.",
        "Deploy with `make ship`; the staging host is staging.example.com.",
        "The sky-blue theme and the ask-me-anything session were a success.",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the build",
        "short hash 09e4943 and tag v1.2.3",
        "request id 123e4567-e89b-12d3-a456-426614174000 failed",
        "call +1 (415) 555-2671 or +44 20 7946 0958",
        "phone 020 7946 0958, mobile 07700 900123",
        "on 2026-02-14 at 10:30:00, and again 14/02/2026",
        "timestamp 2026-02-14T10:30:00Z, id mem_20260214_103000_7f3a",
        "ISBN 978-3-16-148410-0",
        "see https://example.com/path?q=1#frag and ssh://git@github.com/org/repo",
        "version 1.2.3.4, port 8080, pid 123456",
        "sk-learn is not a thing; scikit-learn is",
        "the password is in the vault, not here",
        "",
    ],
)
def test_ordinary_text_has_no_findings(text: str) -> None:
    assert find_secrets(text) == []


def test_findings_sorted_by_position() -> None:
    text = "first " + "ghp_" + fill(36) + " then AKIA" + "B" * 16 + " and 4111 1111 1111 1111"
    found = find_secrets(text)
    assert [f.kind for f in found] == ["GitHub token", "AWS access key", "payment card number"]
    assert [f.start for f in found] == sorted(f.start for f in found)


def test_masked_shows_only_a_prefix() -> None:
    token = "AKIA" + "C" * 16
    text = f"x {token}"
    (finding,) = find_secrets(text)
    assert finding.masked(text) == "AKIA…"
    assert Finding("k", 0, 8).masked("12345678") == "…"


def luhn_check_digit(payload: str) -> str:
    """The digit that makes `payload + digit` pass the Luhn check."""
    total = 0
    for i, ch in enumerate(reversed(payload)):
        n = int(ch)
        if i % 2 == 0:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return str((10 - total % 10) % 10)


def group(digits: str, sep: str) -> str:
    return sep.join(digits[i : i + 4] for i in range(0, len(digits), 4))


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet="0123456789", min_size=12, max_size=18).filter(lambda d: len(set(d)) > 1),
    st.sampled_from(["", " ", "-"]),
    st.integers(1, 9),
)
def test_luhn_decides_card_numbers(payload: str, sep: str, wrong: int) -> None:
    good = payload + luhn_check_digit(payload)
    bad = payload + str((int(luhn_check_digit(payload)) + wrong) % 10)
    assert "payment card number" in kinds(f"pay with {group(good, sep)} today")
    assert "payment card number" not in kinds(f"pay with {group(bad, sep)} today")


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_a_token_is_found_whatever_surrounds_it(before: str, after: str) -> None:
    token = "AKIA" + "D" * 16
    text = f"{before} {token} {after}"
    assert "AWS access key" in kinds(text)
