"""Facts stated in a day's log, as (subject, attribute, value): the sleep cycle's step 3.

Pure pattern matching over what people say of themselves: identity, places, jobs,
relationships, possessions, dates, and preferences. An attribute is single-valued (one
lives in one place: a new value supersedes the old) or many-valued (one may like many
things: only the same value reinforces). A preference is stored per thing liked, so
"I like coffee" and later "I don't like coffee anymore" are one attribute whose value
changed.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kenomem.files.memory import fact_key, fact_value

_V = r"([^.,;!?\n]{1,60}?)"  # a value: up to the end of the clause
_END = (
    r"(?=[.,;!?\n]|$| (?:and|but|because|since|now|anymore|these days|last|this|next"
    r"|yesterday|today|recently|as of|for|ago|again)\b)"
)
_NAME = r"(?-i:([A-Z][\w'-]*(?: [A-Z][\w'-]*)?))"  # capitalised, whatever the rule's flags
_KIN = (
    r"wife|husband|partner|girlfriend|boyfriend|son|daughter|mother|mom|mum|father|dad"
    r"|brother|sister|boss|manager|best friend|cat|dog|doctor|dentist"
)


class Fact(NamedTuple):
    subject: str
    attribute: str
    value: str
    text: str  # the fact as a memory says it ("Lives in Lisbon")
    many: bool = False  # many-valued: a new value adds, it does not supersede

    @property
    def key(self) -> str:
        """What identifies the fact a new value would replace (or, if many, repeat)."""
        return fact_key(self.frontmatter())

    def frontmatter(self) -> dict[str, object]:
        values: dict[str, object] = {
            "subject": self.subject,
            "attribute": self.attribute,
            "value": self.value,
        }
        if self.many:
            values["many"] = True
        return values


normalise = fact_value


# (pattern, attribute, text template, many-valued). The value is the last group, the
# subject a named first group when the pattern has two.
_RULES: tuple[tuple[re.Pattern[str], str, str, bool], ...] = tuple(
    (re.compile(rx, re.IGNORECASE), attr, text, many)
    for rx, attr, text, many in (
        (rf"\bmy name is {_NAME}", "name", "Name: {v}", False),
        (rf"\b(?:call me|i go by) {_NAME}", "name", "Name: {v}", False),
        (
            rf"\bi(?:'m| am)? (?:now )?(?:living|live|based) in {_V}{_END}",
            "lives in",
            "Lives in {v}",
            False,
        ),
        (rf"\bi(?:'ve| have)? (?:just )?moved to {_V}{_END}", "lives in", "Lives in {v}", False),
        (rf"\bi(?:'m| am) from {_V}{_END}", "from", "Is from {v}", False),
        (rf"\bi(?: now)? work (?:at|for) {_V}{_END}", "works at", "Works at {v}", False),
        (rf"\bi(?: now)? work as (?:an? )?{_V}{_END}", "job", "Works as {v}", False),
        (rf"\bmy (?:new )?job is {_V}{_END}", "job", "Job: {v}", False),
        (rf"\bmy (?:new )?favou?rite (\w+(?: \w+)?) is {_V}{_END}", "favorite", "", False),
        (rf"\bmy ({_KIN})(?:'s name)? is (?:called |named )?{_NAME}", "kin", "", False),
        (rf"\bmy birthday is (?:on )?{_V}{_END}", "birthday", "Birthday: {v}", False),
        (rf"\bi was born (?:on|in) {_V}{_END}", "born", "Born {v}", False),
        (rf"(?-i:\b([A-Z][a-z]+))'s birthday is (?:on )?{_V}{_END}", "birthday", "", False),
        (rf"\bmy car is an? {_V}{_END}", "car", "Drives a {v}", False),
        (rf"\bi(?:'m| am) allergic to {_V}{_END}", "allergic to", "Allergic to {v}", True),
        (
            rf"\bi (?:own|have|bought|drive) (?:a|an|two|three|my) {_V}{_END}",
            "owns",
            "Owns {v}",
            True,
        ),
    )
)

# Opinions, one attribute per thing: "opinion of coffee" = likes | dislikes | prefers.
_OPINIONS = (
    (
        re.compile(
            rf"\bi (?:really |still |no longer |don'?t |do not |now )*(?:dislike|hate"
            rf"|can'?t stand|don'?t like|do not like|no longer like) {_V}{_END}",
            re.IGNORECASE,
        ),
        "dislikes",
        "Dislikes {v}",
    ),
    (
        re.compile(rf"\bi (?:really |now |still )*prefer {_V}{_END}", re.IGNORECASE),
        "prefers",
        "Prefers {v}",
    ),
    (
        re.compile(
            rf"\bi (?:really |now |still |do )*(?:like|love|enjoy) {_V}{_END}", re.IGNORECASE
        ),
        "likes",
        "Likes {v}",
    ),
)
# A value that names nothing on its own: a pronoun or a pointer to what was said before
# ("those games", "it"), or what one has that is no possession ("a great time").
_NOT_A_THING = re.compile(
    r"^(?:it|its|that|this|these|those|them|they|he|him|his|she|her|hers|we|us|our|ours"
    r"|you|your|yours|my|mine|their|theirs|one|ones|some|any|such|same|so|too|to|when|how"
    r"|what|doing|the idea)\b",
    re.IGNORECASE,
)
_NOT_OWNED = re.compile(
    r"^(?:(?:really|very|such|so|pretty|quite)\s+)?(?:(?:great|good|nice|fun|hard|tough"
    r"|lovely|wonderful|amazing|awesome|fantastic|blast|rough|busy|bad|quick|real|big"
    r"|huge|strong|little|long|short|lot|bit|ton)\b|(?:time|question|feeling|idea|chance"
    r"|look|go|try|point|plan|dream|moment|day|week|night|weekend|way|thought|talk"
    r"|chat|conversation|problem|sense|need|hard time|clue|lot|few|couple)\b)",
    re.IGNORECASE,
)
# "Buddy and I have ...", "my sister and I like ...": a subject of several, not the speaker.
_SHARED_SUBJECT = re.compile(
    r"(?:^|[.!?;:,]\s*|\b(?:so|but|then|because)\s+)(?:(?:my|our|the)\s+)?[\w'-]+(?:\s+[\w'-]+)?"
    r"\s+(?:and|&)\s+$",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"\s+(?:too|as well|also|either|though|lol)$", re.IGNORECASE)
# How a fact's text reads with its subject named ("Likes hiking" -> "Caroline likes
# hiking"), by the first word of the text as the rules write it.
_NAMED = {
    "Is": "is",
    "Born": "was born",
    "Allergic": "is allergic",
}


def extract(text: str, subject: str = "user", name: str = "") -> list[Fact]:
    """The facts `text` states; `subject` is who says "I" (the entry's speaker), and
    `name` how to name them in a fact's text ("Caroline likes hiking"; without it the
    text leaves the subject out: "Likes hiking", the vault's own user). A statement whose
    subject is several people ("Buddy and I"), or whose value points elsewhere ("those
    games", "it") or is no thing held ("a great time"), makes no fact."""
    facts: dict[str, Fact] = {}
    for rx, attribute, template, many in _RULES:
        for m in rx.finditer(text):
            if _SHARED_SUBJECT.search(
                text, max(0, m.start() - 60), m.start()
            ) and m.group().lower().startswith("i"):
                continue
            groups = [_TRAILING.sub("", g.strip()) for g in m.groups()]
            if _NOT_A_THING.match(groups[-1]) or (
                attribute == "owns" and _NOT_OWNED.match(groups[-1])
            ):
                continue
            fact = _rule_fact(subject, attribute, template, many, groups)
            if fact is not None:
                facts[fact.key] = _named(fact, name)
    for rx, verdict, template in _OPINIONS:
        for m in rx.finditer(text):
            if _SHARED_SUBJECT.search(text, max(0, m.start() - 60), m.start()):
                continue
            thing = _TRAILING.sub("", m.group(1).strip())
            if not thing or _NOT_A_THING.match(thing):
                continue
            key = f"{subject}|opinion of {normalise(thing)}"
            if key not in facts:  # the first, most specific, pattern wins
                fact = Fact(
                    subject, f"opinion of {normalise(thing)}", verdict, template.format(v=thing)
                )
                facts[key] = _named(fact, name)
    return list(facts.values())


def _named(fact: Fact, name: str) -> Fact:
    """The fact's text with its subject named, when it is someone's (`name`) and the
    text does not name anyone yet: "Caroline likes hiking", "Caroline's job: nurse"."""
    if not name or fact.subject != name.lower() or fact.text.startswith(name):
        return fact
    head, _, rest = fact.text.partition(" ")
    if ": " in fact.text:  # "Job: nurse", "Favorite color: blue"
        said = f"{name}'s {fact.text[0].lower()}{fact.text[1:]}"
    else:
        said = f"{name} {_NAMED.get(head, head.lower())} {rest}".rstrip()
    return fact._replace(text=said)


def _rule_fact(
    subject: str, attribute: str, template: str, many: bool, groups: list[str]
) -> Fact | None:
    value = groups[-1]
    if not value:
        return None
    if attribute == "favorite":
        thing = normalise(groups[0])
        return Fact(subject, f"favorite {thing}", value, f"Favorite {thing}: {value}")
    if attribute == "kin":
        kin = normalise(groups[0])
        return Fact(subject, kin, value, f"{kin.capitalize()}: {value}")
    if attribute == "birthday" and len(groups) == 2:  # someone else's birthday
        person = groups[0]
        return Fact(person.lower(), "birthday", value, f"{person}'s birthday: {value}")
    return Fact(subject, attribute, value, template.format(v=value), many)
