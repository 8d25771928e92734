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
_NOT_A_THING = re.compile(r"^(?:it|that|this|them|to|when|how|the idea|you)\b", re.IGNORECASE)


def extract(text: str, subject: str = "user") -> list[Fact]:
    """The facts `text` states; `subject` is who says "I" (the entry's speaker)."""
    facts: dict[str, Fact] = {}
    for rx, attribute, template, many in _RULES:
        for m in rx.finditer(text):
            groups = [g.strip() for g in m.groups()]
            fact = _rule_fact(subject, attribute, template, many, groups)
            if fact is not None:
                facts[fact.key] = fact
    for rx, verdict, template in _OPINIONS:
        for m in rx.finditer(text):
            thing = m.group(1).strip()
            if not thing or _NOT_A_THING.match(thing):
                continue
            key = f"{subject}|opinion of {normalise(thing)}"
            if key not in facts:  # the first, most specific, pattern wins
                facts[key] = Fact(
                    subject, f"opinion of {normalise(thing)}", verdict, template.format(v=thing)
                )
    return list(facts.values())


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
