"""How much a buffer entry matters, 1-10, from what it says (the sleep cycle's step 1).

Pure and explainable: each signal adds points, and `score` returns them with their
reasons. The signals, after the issue's list: explicit markers ("remember this"),
errors and their fixes ("X did it", "that worked"), decisions and commitments, dates
and plans, named people (not places or days), emotional words, facts about the user,
preferences that change ("switched from X to Y", "from now on"), habits and identity
("I run at 6:30 on Tuesdays", "I've been vegetarian for ten years"), standing
instructions to the assistant, people introduced with their role, health, things done,
and novelty against what the vault already knows. Trivia ("ok thanks") scores 1; an
entry that opens laughing ("lol ...") is banter. Trivia is only acknowledgements,
greetings and thanks: an entry holding a number or a name is never trivia (`is_trivia`).

What the assistant says restates or answers what the user said: it scores as salient
only when it takes something on itself ("I'll remind you on 13 March").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

# Points per signal; an entry starts at BASE and is clamped to 1..10.
BASE = 2
# Salient from this importance up: what an agent says stays below it unless it takes
# something on. (The sleep cycle keeps every entry but trivia, at its importance.)
KEEP_AT = 5

_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
# Who is speaking, when a sentence starts with them: "I" but not "I'll" or "I would".
_I_DO = r"\bi (?!will\b|would\b|could\b|should\b|might\b|can\b|think\b|guess\b)\w+"

_SIGNALS: tuple[tuple[str, int, re.Pattern[str]], ...] = tuple(
    (name, points, re.compile(rx, re.IGNORECASE))
    for name, points, rx in (
        (
            "explicit",
            5,
            r"\b(?:remember (?:this|that)|important|don'?t forget|do not forget"
            r"|note to self|keep in mind|make a note|never forget|for future reference"
            r"|remind me)\b",
        ),
        (
            "error",
            3,
            r"\b(?:error|exception|traceback|failed|failure|crash(?:ed|es|ing)?|bug"
            r"|broken|doesn'?t work|not working|stopped working|timed? ?out|refused"
            r"|already in use|complain(?:s|ed|ing)|permission denied|out of memory"
            r"|won'?t (?:start|work|load|boot|connect|open|install)"
            r"|can'?t (?:connect|log ?in|sign in|access|reach))\b",
        ),
        (
            "fix",
            3,
            r"\b(?:fixed|the fix|solved|resolved|workaround|worked after|works now"
            r"|was caused by|turned out|did the trick|got it working|works again"
            r"|(?:is |are )?(?:working|up) again|up and running|sorted it)\b"
            # "X did it", "X worked": a thing that fixed something, not what someone did
            r"|(?<!\bi )(?<!\bwe )(?<!\byou )(?<!\bhe )(?<!\bshe )(?<!\bthey )"
            r"\b(?:did it\b|worked\b(?! (?:at|for|on|as|with|in|from|late|hard|out|there)\b))",
        ),
        (
            "decision",
            3,
            r"\b(?:decided|decision|we will|we'll|i will|i'll|agreed|commit(?:ted)?"
            r" to|promise|plan(?:ning)? to|going to|deadline|due (?:on|by)|went with"
            r"|going with|settled on|opted for|(?:i|we) (?:chose|picked))\b",
        ),
        (
            "plan",
            2,
            rf"\b(?:next (?:week|month|year|{_DAY})|(?:on|by|every) {_DAY}s?"
            rf"|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}(?::\d\d)? ?(?:am|pm)|at \d{{1,2}}:\d\d"
            rf"|\d{{1,2}}(?:st|nd|rd|th)? {_MONTH}|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?"
            r"|appointment|meeting|birthday|anniversary)\b",
        ),
        ("soon", 1, r"\b(?:tomorrow|tonight|later today|this (?:evening|afternoon|weekend))\b"),
        (
            "emotion",
            2,
            r"\b(?:love|hate|angry|furious|happy|sad|upset|worried|anxious|excited"
            r"|frustrat\w*|scared|afraid|proud|grateful|thrilled|devastated"
            r"|disappointed|stressed|dread\w*|nervous|terrified|panick\w*|overwhelmed"
            r"|relieved|lonely|heartbroken|embarrass\w*|ashamed|fed up|gutted)\b",
        ),
        (
            "fact",
            3,
            r"\b(?:my (?:name|wife|husband|partner|son|daughter|mother|mom|father|dad"
            r"|brother|sister|friend|boss|job|birthday|address|favou?rite)|i (?:\w+ly )?(?:live"
            r"|work|moved|was born|prefer|like|love|hate|own|have a)|i'm (?:a|an|from"
            r"|allergic))\b",
        ),
        (
            # A preference that changed: what was true of the user is not any more.
            "change",
            3,
            r"\b(?:switched (?:from|to|over)|changed (?:from|to)|from now on|no more"
            r"|(?:given|gave|giving) up|no longer|(?:don'?t|do not) \w+ any ?more"
            r"|stopped (?:using|drinking|eating|going|taking|buying)|instead of)\b",
        ),
        (
            # Who the user is and what they do regularly.
            "habit",
            3,
            r"\bi(?:'ve| have) been (?:an? )?[\w-]+(?: [\w-]+)? for (?:\w+ )?"
            r"(?:years?|months?|decades?|ages|a while)\b"
            r"|\bi (?:always|never|usually|normally|often|rarely|tend to) \w+"
            rf"|{_I_DO} (?:at \d{{1,2}}\b|on {_DAY}s\b|every (?:day|morning|evening|night"
            rf"|week|weekend|{_DAY})\b)",
        ),
        (
            # A standing instruction to the assistant.
            "instruction",
            3,
            r"\bfrom now on\b|\b(?:always|never) (?:keep|use|give|send|put|make|write"
            r"|suggest|book|schedule|call|include|add|ask|reply|answer|show|format)\b"
            r"|\b(?:don'?t|do not) (?:ever )?(?:put|suggest|send|book|schedule|call"
            r"|include|recommend|mention)\b|\bwhen(?:ever)? you\b[^.!?\n]*\bplease\b"
            r"|\bplease (?:always|never|don'?t|keep|use)\b|\bkeep it (?:short|brief|simple)\b",
        ),
        (
            # Someone introduced with their role: who they are, what they own.
            "role",
            3,
            r"(?-i:\b[A-Z][a-z]+(?: [A-Z][a-z]+)?) (?:on|from|in|at) (?:the |our |my )?"
            r"[\w-]+(?: [\w-]+)? team\b"
            r"|(?-i:\b[A-Z][a-z]+) (?:owns|runs|leads|manages|maintains|heads"
            r"|is in charge of|is responsible for)\b"
            r"|\bwho to (?:ask|talk to|go to)\b|\bthe person to ask\b"
            r"|(?-i:\b[A-Z][a-z]+) \((?:my|our|his|her|their) [\w -]{2,30}\)"
            r"|(?-i:\b[A-Z][a-z]+), (?:my|our) [\w-]+(?: [\w-]+)?,",
        ),
        (
            "health",
            2,
            r"\b(?:sick|unwell|threw up|throwing up|vomit\w*|fever|injur\w*|hospital"
            r"|surgery|diagnos\w*|symptoms?|stomach bug|infection|migraine|sprained)\b",
        ),
        (
            # Something the user said they would do, done.
            "done",
            2,
            r"(?:^|[.!?;]\s+|\b(?:i|we|just|finally|already) )(?:sent|submitted|shipped"
            r"|finished|completed|delivered|handed in|passed)\b",
        ),
    )
)
# Signals of what the speaker takes on: when an agent speaks, only these make its entry
# worth keeping (the rest of what it says restates or answers what the user said).
_COMMITS = re.compile(
    r"\b(?:i'll|i will|i'm going to|i am going to|i promise|i've (?:set|scheduled|booked"
    r"|added)|i have (?:set|scheduled|booked|added))\b",
    re.IGNORECASE,
)
_REMINDS = re.compile(r"\bremind(?:er)?\b", re.IGNORECASE)
# An entry that opens laughing is banter: its feelings are not news.
_BANTER = re.compile(r"^(?:lol|lmao|rofl|haha\w*|hehe\w*|😂|🤣)(?:\W|$)", re.IGNORECASE)

# Trivia: acknowledgements, greetings and thanks, nothing else. An entry holding a
# number or a capitalised word outside these (a name, a place, a product) is never trivia.
_ACK = (
    r"ok(?:ay)?|k|thanks?|thank you|thx|ty|cool|nice|great|sure|yes|yep|yeah|no|nope"
    r"|lol|haha|hmm+|right|got it|sounds (?:good|great|fun|awesome|amazing|lovely|perfect)"
    r"|np|no problem|good|fine|hi|hello|hey|bye|good (?:morning|night)|see you|cheers"
    r"|you'?re welcome|welcome|wow|awesome|amazing|perfect|me too|you too|same here"
    r"|take care|talk (?:soon|later)|that'?s (?:great|awesome|cool|amazing|nice|good)"
    r"|will do|all good|of course|absolutely|definitely|totally|agreed|(?:good )?morning"
    r"|(?:good )?night(?: night)?|ugh|go ahead|looks (?:fine|good|great)"
    r"|have a (?:good|nice|great|lovely) (?:day|weekend|night|evening|one)"
)
_FILLERS = r"so much|a lot|then|man|again|for sharing"
_TRIVIA = re.compile(
    rf"^(?:{_ACK})(?:[\s,!.]+(?:{_ACK}|{_FILLERS}))*[\s!.?]*$",
    re.IGNORECASE,
)
_ACK_WORDS = frozenset(re.findall(r"[a-z]+", _ACK + _FILLERS)) | {"re", "s"}
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_NOT_NAMES = frozenset(
    """I The A An And But Or So If Then When What Why How Who Where This That These Those It
    We You He She They My Your Our Their Its Monday Tuesday Wednesday Thursday Friday
    Saturday Sunday Mondays Tuesdays Wednesdays Thursdays Fridays Saturdays Sundays January
    February March April May June July August September October November December Today
    Tomorrow Yesterday Ok Okay Thanks Yes No Please Sorry""".split()
)
# Capitalised words one after another ("Wellington Street", "Headingley Vets"): a place
# when a word of place comes before them or a kind of place ends them, not a person.
_CAPITALISED = re.compile(r"\b[A-Z][\w'&-]*(?: [A-Z][\w'&-]*)*")
_PLACE_BEFORE = re.compile(
    r"\b(?:in|at|near|around|outside|inside|across|via|into|through|towards?|(?:go|going"
    r"|went|fly|flying|flew|travel|travelling|traveling|trip|move|moved|moving|drive"
    r"|driving|way|back) to)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
# How far before a capitalised word the words that make it a place or a thing are looked
# for: a few words, so that a long entry costs time in proportion to its length.
_BEFORE = 40
# What a person's name does not follow ("the Kafka migration", "my Tesla"), and what it
# is not followed by: a number ("Model 3", "Windows 11"), a word for a thing.
_THING_BEFORE = re.compile(
    r"\b(?:the|a|an|my|our|your|his|her|their|its|this|that|these|those|new|old|some"
    r"|any|every|using|use|used|install(?:ed)?|upgrade[ds]?|upgrading|run(?:ning)?|on)\s+$",
    re.IGNORECASE,
)
_THING_AFTER = re.compile(
    r"\s+(?:v?\d|(?:migration|cluster|server|servers|database|db|api|app|apps|service"
    r"|update|upgrade|release|version|account|integration|pipeline|deploy|deployment"
    r"|config|plugin|instance|queue|topic|stack|repo|project|car|phone|laptop|subscription"
    r"|card|store|shop|docs|code|build|job|jobs|feature|model|dashboard|bill|order|key"
    r"|token|bucket|cache|index|schema|table|broker|consumer|producer|client|driver"
    r"|package|library|framework|engine|console|cli|sdk|charger|battery|stock|shares)\b)",
    re.IGNORECASE,
)
# Products and services often named in a log, never taken for people.
_PRODUCTS = frozenset(
    """Kafka Tesla Python Docker Kubernetes Postgres PostgreSQL MySQL Redis Linux Windows
    MacBook iPhone Android Google Apple Amazon Azure GitHub GitLab Slack Zoom Jira
    Notion Excel Spotify Netflix YouTube Instagram Facebook Twitter Uber Airbnb Chrome
    Firefox Safari Nginx React Terraform Ansible Grafana Prometheus Kibana Elasticsearch
    Ubuntu Debian Fedora Heroku Vercel Stripe Shopify Salesforce Dropbox Figma Trello
    Whatsapp WhatsApp Telegram Discord Outlook Gmail Kotlin Swift Java Rust Ruby Rails
    Django Flask Node Deno Vue Angular Svelte Webpack Vite Mongo MongoDB SQLite Snowflake
    BigQuery Airflow Spark Hadoop Jenkins Ollama OpenAI ChatGPT Claude Gemini Model""".split()
)
_PLACE_NOUNS = frozenset(
    """Street St Road Rd Avenue Ave Lane Place Square Park Station Airport Hospital Bridge
    Hill City Town Centre Center Vets Clinic Mall Market""".split()
)


class Salience(NamedTuple):
    importance: int
    reasons: tuple[str, ...]
    trivia: bool


def says(signal: str, text: str) -> bool:
    """Whether `text` carries one of the signals ("error", "fix", "decision", ...)."""
    return any(rx.search(text) for name, _, rx in _SIGNALS if name == signal)


def is_trivia(text: str) -> bool:
    """Whether `text` is only an acknowledgement, a greeting or thanks ("ok thanks",
    "Sounds great!"), which the sleep cycle drops (and lists). Never an entry holding a
    number or a capitalised word that is not one of those words: a name, a place, a
    product, a code."""
    stripped = text.strip()
    if not stripped:
        return True
    if not _TRIVIA.match(stripped) and len(stripped) >= 3:
        return False
    return not any(
        any(c.isdigit() for c in word)
        or (word[0].isupper() and word.lower() not in _ACK_WORDS and not _TRIVIA.match(word))
        for word in re.findall(r"\w+", stripped)
    )


def names(text: str) -> list[str]:
    """Capitalised words that look like people's names: not at a sentence's start, not
    days or months, not places ("in Leeds", "Wellington Street"), not things: a word
    after an article or a possessive ("the Kafka migration", "my Tesla"), before a number
    ("Model 3"), before a word for a thing ("Kafka cluster"), or a known product."""
    places = [
        m.span()
        for m in _CAPITALISED.finditer(text)
        if _PLACE_BEFORE.search(text, max(0, m.start() - _BEFORE), m.start())
        or m.group().split()[-1].removesuffix("'s") in _PLACE_NOUNS
        or _THING_BEFORE.search(text, max(0, m.start() - _BEFORE), m.start())
        or _THING_AFTER.match(text, m.end())
        or any(word.removesuffix("'s") in _PRODUCTS for word in m.group().split())
    ]
    covered = {i for start, end in places for i in range(start, end)}
    found = (m.group(1) for m in _NAME.finditer(text) if m.start() not in covered)
    return [n for n in dict.fromkeys(found) if n not in _NOT_NAMES]


def commits(text: str) -> bool:
    """Whether the speaker takes something on, with a time or as a reminder ("I'll
    remind you on 13 March"); an offer asked as a question does not count."""
    if text.rstrip().endswith("?") or not _COMMITS.search(text):
        return False
    return bool(_REMINDS.search(text)) or says("plan", text) or says("soon", text)


def score(
    text: str,
    novelty: Callable[[str], float] | None = None,
    people: frozenset[str] = frozenset(),
    *,
    agent: bool = False,
    states_fact: bool = False,
) -> Salience:
    """Importance 1-10 of one entry. `novelty(text)` (0..1) says how much of it the vault
    does not know yet; `people` are names that matter (participants seen before).

    `agent`: the assistant said it. Its replies restate or answer what the user said, so
    names and novelty do not count for it, and it stays below KEEP_AT unless it takes
    something on itself (`commits`). `states_fact`: a fact was read from the entry.
    """
    if is_trivia(text):
        return Salience(1, ("trivia",), True)
    banter = bool(_BANTER.match(text.strip()))
    points = BASE
    reasons = []
    for name, value, rx in _SIGNALS:
        if (rx.search(text) or (name == "fact" and states_fact)) and not (
            banter and name == "emotion"
        ):
            points += value
            reasons.append(name)
    if agent:
        if commits(text):  # worth a decision: the user may hold it to its word
            points += 0 if "decision" in reasons else 3
            return Salience(max(1, min(10, points)), (*reasons, "commitment"), False)
        return Salience(max(1, min(KEEP_AT - 1, points)), (*reasons, "agent"), False)
    found = names(text)
    if found:
        points += 2 if people.intersection(found) else 1
        reasons.append("people")
    if novelty is not None:
        new = novelty(text)
        if new >= 0.5:
            points += 2 if new >= 0.8 else 1
            reasons.append("novel")
    if banter:
        points -= 2  # "lol ...": small talk, however new its words
        reasons.append("banter")
    elif len(text.split()) <= 4 and not reasons:
        points -= 1  # a few words with no signal at all: most likely chatter
    return Salience(max(1, min(10, points)), tuple(reasons), False)
