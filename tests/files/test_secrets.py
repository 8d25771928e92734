"""kenomem.files.secrets.find_secrets: credentials are refused, ordinary text is not."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.errors import SecretDetected
from kenomem.files.secrets import Finding, check, find_secrets, is_placeholder
from tests.conftest import REPO, TEMPLATE
from tests.helpers import project_prose

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
    if kind == "password in a URL":  # the finding is the password, not the whole URL
        start = text.index(":", text.index("://") + 3) + 1
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
    st.text(alphabet="0123456789", min_size=12, max_size=18)
    .map(lambda d: str(2 + int(d[0]) % 5) + d[1:])  # a network's first digit: 2 to 6
    .filter(lambda d: len(set(d)) > 1),
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


# -- what the first detector missed (issue 15) ----------------------------------------------

# A random-looking 40-character key, made here (the AWS documentation's example key is a
# real-looking one too, and is public).
AWS_SECRET = "Zq3Tk9XbW7pL2mVn/R8yHc4Ds+Jf6Ga1Eo5Ui0Pl"
AWS_DOC_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

# (kind, text, the part of it that is the secret)
MISSED = [
    ("password in a URL", "db at Postgres://admin:pw@db.internal/app", "pw"),
    ("password in a URL", "cache at REDIS://:pw@cache:6379/0", "pw"),
    ("password in a URL", "redis://:hunter22@cache:6379", "hunter22"),
    ("password in a URL", "postgres://app:p@ss@db.example.com:5432/app", "p@ss"),
    ("password in a URL", "amqp://guest:gu3st!@rabbit/vhost", "gu3st!"),
    ("payment card number", "card 4111.1111.1111.1111 exp 12/29", "4111.1111.1111.1111"),
    ("payment card number", "card 5555.5555.5555.4444.", "5555.5555.5555.4444"),
    ("payment card number", "card 4111111111111111 2029", "4111111111111111"),
    ("payment card number", "card 4111-1111-1111-1111 12 29", "4111-1111-1111-1111"),
    ("AWS secret key", f"the secret is {AWS_SECRET}", AWS_SECRET),
    ("AWS secret key", f"{AWS_DOC_SECRET}\n", AWS_DOC_SECRET),
    ("AWS secret key", f"key='{AWS_SECRET}'", AWS_SECRET),
    (
        "HTTP authorization header",
        "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789' https://api.example.com",
        "abcDEF123456ghiJKL789",
    ),
    (
        "HTTP authorization header",
        "authorization: basic dXNlcjpodW50ZXIy",
        "dXNlcjpodW50ZXIy",
    ),
    ("HTTP authorization header", "send Bearer 9f8e7d6c5b4a39281706 along", "9f8e7d6c5b4a39281706"),
    ("password or token", "DB_PASSWORD=hunter2", "hunter2"),
    ("password or token", "export PGPASSWORD=supersecret", "supersecret"),
    ("password or token", "PASSWORD: s3cr3t!x", "s3cr3t!x"),
    ("password or token", "my password: Tr0ub4dor&3 for the wifi", "Tr0ub4dor"),
    ("password or token", "secret=9a8b7c6d5e", "9a8b7c6d5e"),
    ("password or token", "token=abc123xyz789", "abc123xyz789"),
    ("password or token", "api_key = 'q1w2e3r4t5y6'", "q1w2e3r4t5y6"),
    ("password or token", '{"api_key": "q1w2e3r4t5y6"}', "q1w2e3r4t5y6"),
    ("password or token", "client_secret: 'shhh-do-not-tell'", "shhh-do-not-tell"),
    ("password or token", "https://example.com/cb?access_token=ya1b2c3d4&x=1", "ya1b2c3d4"),
    ("password or token", "mysql --password=Hunter2! -u root", "Hunter2!"),
    ("password or token", "Server=db;Uid=sa;Pwd=Secr3t99;", "Secr3t99"),
]


@pytest.mark.parametrize(("kind", "text", "secret"), MISSED)
def test_what_the_first_detector_missed(kind: str, text: str, secret: str) -> None:
    found = [f for f in find_secrets(text) if f.kind == kind]
    assert found, kinds(text)
    start = text.index(secret)
    assert any((f.start, f.end) == (start, start + len(secret)) for f in found), [
        text[f.start : f.end] for f in found
    ]


# Ordinary text, code and identifiers a memory holds: none of it is a secret.
NOT_SECRETS = [
    "git SHA 3f786850e387550fdab836ed7e6dc881de23001b and 3F786850E387550FDAB836ED7E6DC881DE23001B",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "src/Components/Header2/HeaderTitle/index and usr/local/lib/Python3/site/packages/foo1",
    "class ThisIsAVeryLongCamelCaseIdentifierName",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "pi is 3.141592653589793238 and e is 2.718281828459045",
    "at 1662359454750 ms since the epoch; epoch 1700000000",
    "IP 192.168.100.200, version 2024.01.15.123456, build 10.0.19045.3693",
    "https://cdn.example.com/uploads/2018/05/IMG_0960-e1527675276357.jpg",
    "https://www.example.com/gcdn/presto/2019/07/16/PGRB/fa8d60a1-0a21-421c-b36d-31f4bc2d2b6d.png",
    "the password is in 1Password, item 'Prod DB'",
    "Password: ask Anna. Token: 1h. Secret: none",
    "password: str = ''",
    "def login(user: str, password: str | None = None) -> Token:",
    "login(user, password=password) then token=get_token() and secret=os.environ['X']",
    "API_KEY = os.environ['API_KEY']",
    "DB_PASSWORD=${DB_PASSWORD} and DB_PASSWORD=<your password> and TOKEN=...",
    'token: ${GITHUB_TOKEN} and "token": null and api_key: ***',
    "max_tokens=1000, token_count=42, tokens=12000, tokenizer = tiktoken:cl100k_base",
    "the Authorization: Bearer header carries the token",
    "Authorization: Bearer <token>, Authorization: Bearer $TOKEN",
    "use a bearer token for the API",
    "ssh://git@github.com/org/repo and https://user@example.com/ and mailto:a@b.c",
    "http://localhost:8080/users/@me and https://mastodon.social/@kenomem",
    "phone +44 20 7946 0958, order 1234-5678-9012, ISBN 978-3-16-148410-0",
    "card ending in 4242",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_no_false_positive(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


def _corpus() -> list[str]:
    texts = [
        (REPO / name).read_text(encoding="utf-8")
        for name in ("CONTRIBUTING.md", "CHANGELOG.md", "bench/README.md")
    ]
    texts.append(project_prose())  # the README and docs/
    texts += [p.read_text(encoding="utf-8") for p in TEMPLATE.rglob("*") if p.is_file()]
    with open(REPO / "bench/data/labelled-entries.jsonl", encoding="utf-8") as lines:
        texts += [json.loads(line)["text"] for line in lines]
    return texts


def test_the_projects_own_prose_has_no_finding() -> None:
    for text in _corpus():
        assert find_secrets(text) == [], [
            (f.kind, text[f.start : f.end]) for f in find_secrets(text)
        ]


LOCOMO = REPO.parent / "shared" / "bench-data" / "locomo-dev.json"


@pytest.mark.skipif(not LOCOMO.exists(), reason="the LoCoMo data is not on this machine")
def test_locomo_conversations_have_no_finding() -> None:
    texts: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    walk(json.loads(LOCOMO.read_text(encoding="utf-8")))
    assert len(texts) > 1000
    flagged = [(f.kind, t[f.start : f.end]) for t in texts for f in find_secrets(t)]
    assert flagged == []


# -- Hypothesis: a secret anywhere is found; prose never is --------------------------------

SEPARATORS = st.sampled_from([" ", "\n", "\t", "  ", " \n"])
PASSWORD_CHARS = st.characters(
    codec="ascii", exclude_characters=" \t\n\r\x0b\x0c/?#", min_codepoint=33
)


@st.composite
def secrets_(draw: st.DrawFn) -> tuple[str, str, str, str]:
    """(kind, what is written before the secret, the secret, what is written after it)."""
    form = draw(st.sampled_from(["token", "url", "assignment", "card", "aws", "bearer"]))
    if form == "token":
        kind, token = draw(st.sampled_from(TOKENS))
        if kind == "password in a URL":
            head, rest = token.split("://", 1)
            user, rest = rest.split(":", 1)
            password, host = rest.rsplit("@", 1)
            return kind, f"{head}://{user}:", password, f"@{host}"
        return kind, "", token, ""
    if form == "url":
        scheme = draw(st.sampled_from(["postgres", "Postgres", "REDIS", "mongodb+srv", "https"]))
        user = draw(st.text("abcdefgXYZ0123_", max_size=8))
        password = draw(
            st.text(PASSWORD_CHARS, min_size=1, max_size=20).filter(lambda p: not is_placeholder(p))
        )
        host = draw(st.sampled_from(["db", "db.example.com", "10.0.0.5:5432", "cache"]))
        return "password in a URL", f"{scheme}://{user}:", password, f"@{host}/x"
    if form == "assignment":
        key = draw(
            st.sampled_from(["DB_PASSWORD", "PASSWORD", "API_KEY", "GITHUB_TOKEN", "secret"])
        )
        value = draw(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9!@#%^*+~-]{5,30}", fullmatch=True))
        value = value + draw(st.sampled_from("0123456789"))  # a digit: a value, not a name
        op = draw(st.sampled_from(["=", ": ", " = ", "="]))
        return "password or token", f"{key}{op}", value, ""
    if form == "card":
        payload = draw(st.text("0123456789", min_size=14, max_size=14))
        digits = draw(st.sampled_from("23456")) + payload
        number = digits + luhn_check_digit(digits)
        sep = draw(st.sampled_from(["", " ", "-", "."]))
        return "payment card number", "", group(number, sep), ""
    if form == "aws":
        key = draw(st.sampled_from([AWS_SECRET, AWS_DOC_SECRET, *RANDOM_AWS]))
        return "AWS secret key", "", key, ""
    token = draw(st.from_regex(r"[A-Za-z0-9._~+/-]{12,40}", fullmatch=True)) + "7"
    return "HTTP authorization header", "Authorization: Bearer ", token, ""


def _random_aws_keys(n: int) -> list[str]:
    import random

    rng = random.Random(15)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+"
    keys = []
    while len(keys) < n:
        key = "".join(rng.choice(alphabet) for _ in range(40))
        if key[0] not in "/+":  # as written after a space or a quote
            keys.append(key)
    return keys


RANDOM_AWS = _random_aws_keys(50)


@settings(max_examples=400, deadline=None)
@given(
    secrets_(),
    # Digits right before or after a card's groups would make it a longer number.
    st.text(max_size=80).filter(lambda t: not t[-1:].isdigit()),
    st.text(max_size=80).filter(lambda t: not t[:1].isdigit()),
    SEPARATORS,
    SEPARATORS,
)
def test_a_secret_anywhere_in_text_is_found(
    secret: tuple[str, str, str, str], before: str, after: str, left: str, right: str
) -> None:
    kind, head, value, tail = secret
    text = before + left + head + value + tail + right + after
    start = len(before + left + head)
    end = start + len(value)
    found = [f for f in find_secrets(text) if f.kind == kind]
    assert any(start <= f.start < f.end <= end for f in found), (kind, head + value + tail)


def test_most_random_keys_look_random() -> None:
    # The bare AWS key rule is a heuristic: it must take nearly every random key.
    keys = _random_aws_keys(2000)
    missed = [k for k in keys if "AWS secret key" not in kinds(f" {k} ")]
    assert len(missed) <= len(keys) // 100, missed[:5]


def _words() -> list[str]:
    words = sorted({w for text in _corpus() for w in re.findall(r"[A-Za-z][a-z']*", text)})
    return [*words, ",", ".", ":", "?", "!", "-", "(", ")", "2026", "3", "14:30", "I'm"]


WORDS = _words()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=25).map(" ".join),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["\n", "\n\n", "\n- ", "\n## ", " "]),
)
def test_prose_has_no_finding(sentences: list[str], glue: str) -> None:
    text = glue.join(sentences)
    assert find_secrets(text) == []


# -- check: the one check of every door -----------------------------------------------------


def test_check_names_the_field_and_the_kind_and_never_the_secret() -> None:
    check({"text": "fine", "title": "also fine", "tag": ["a", "b"], "scope": None})
    with pytest.raises(SecretDetected) as caught:
        check({"text": "fine", "session id": "ghp_" + fill(36)})
    message = caught.value.message
    assert "the session id looks like it holds a secret" in message
    assert "GitHub token: ghp_…" in message
    assert "nothing was written" in message
    assert fill(36) not in message
    with pytest.raises(SecretDetected) as caught:
        check({"tag": ["ok", "x:DB_PASSWORD=hunter22"]}, then="not imported")
    assert "the tag looks like" in caught.value.message
    assert "hunter22" not in caught.value.message and "hunt" not in caught.value.message
    assert caught.value.message.endswith("; not imported")
    assert caught.value.hint


@pytest.mark.parametrize(("kind", "text", "secret"), MISSED)
def test_a_reported_finding_never_shows_a_password(kind: str, text: str, secret: str) -> None:
    for f in find_secrets(text):
        shown = f.masked(text).rstrip("…")
        assert len(shown) <= 4
        if f.kind not in ("AWS access key", "GitHub token"):
            assert shown == ""
