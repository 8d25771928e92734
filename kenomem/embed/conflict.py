"""Whether a new statement gives a new value for what a fact states: the same subject and
relation, another value ("Deploys go out on Wednesdays" against "Deploys go out on
Tuesdays", "Moved to Madrid" against "Lives in Porto"). Pure functions, by words. By
meaning, `remember` names as unsure what `likeness.judge` finds may contradict, unless
`apart` says the words set the two apart (another subject, a refinement, one more value).

The two statements are read as words (lower case, lightly stemmed; "I" dropped, the
user being the subject of a fact that names none), with the words that only say a
change happened ("now", "anymore", "from now on") and a negation ("not", "no longer")
set aside, and the phrases of one relation written alike ("lives in", "moved to", "is
based in"; "works at", "works for", "joined"). Then, aligned word for word:

- the same words, one side negated: a conflict, **sure** ("The staging server is public"
  / "... is not public");
- one stretch of words replaced, the rest the same: the replaced words are the values.
  When both values are of one kind (times, days, months, dates, numbers with the same
  unit, names), the stretch is not the subject (what comes before the verb: "The
  standup" / "The retro" are two meetings, "Adrian" / "Maria" two people; except before
  a verb of ownership, "owns", "leads": one owner replaces another), the relation is not
  one a subject has many of ("likes", "speaks", "uses", "reviews", "allergic to"), and
  neither value holds the other ("Portugal" / "Porto, Portugal" refines): **sure**. A
  value of no clear kind ("tea" / "coffee", "master" / "main") or a replacement with
  words added elsewhere: **unsure**;
- anything else (words only added: a refinement; two stretches replaced: another subject
  and another value; another relation): no conflict.

A memory of several sentences is compared sentence by sentence, and a conflict in one of
them is never sure: superseding the memory would hide its other sentences. A new text of
several sentences, or a memory longer than `MAX_CHARS` or `MAX_SENTENCES`, is not judged.

Precision comes first: a wrong "sure" supersedes, and so hides, a true fact. Measured on
bench/data/conflicts.jsonl (pairs labelled by hand): `bench/conflicts.py`.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

Level = Literal["sure", "unsure"]


class Verdict(NamedTuple):
    """A conflict found: how sure, the old and new values as said, and why in words."""

    level: Level
    old: str
    new: str
    why: str


# At most this many words in a statement compared (a longer text is not one fact), and
# this many characters and sentences in a memory compared with it (one that says much
# more is left alone: reading it all would cost every `remember` for nothing).
MAX_WORDS = 30
MAX_CHARS = 4000
MAX_SENTENCES = 12
# At most this many words in a replaced value.
MAX_VALUE = 4

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred thousand million half once twice""".split()
)
_STOP = frozenset(
    """a an the my our your his her their its this that these those of to in on at for by
    with from and or is are was were be been am do does did has have had will would
    shall should can could may might must it we you he she they i me us them there""".split()
)
# Words that only say that something changed, or how often: set aside before comparing.
_MARKERS = re.compile(
    r"\b(?:from now on|as of (?:today|now)|these days|any ?more|now|currently|nowadays"
    r"|instead|actually|recently|still|always|usually|normally|again)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:no longer|not|never|cannot)\b"
    r"|\b(?:does|do|did|is|are|was|were|has|have|had|ca|wo|should|would|could)n'?t\b",
    re.IGNORECASE,
)
# The phrases of one relation, written alike: (mark, what it replaces, written as).
_RELATIONS: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (mark, re.compile(rx, re.IGNORECASE), written)
    for mark, rx, written in (
        (
            # A time something happens at: "is at 9:30", "starts at 10", "moved to 10:00".
            "is_at",
            r"\b(?:is|are|starts?|begins?|happens?|takes? place|is held|are held|runs?"
            r"|kicks? off)\s+at\s+(?=\d|noon\b|midnight\b)|\b(?:(?:has|have) been |was |is )?"
            r"(?:moved|rescheduled|pushed|shifted|changed)\s+to\s+(?=\d|noon\b|midnight\b)",
            " is_at ",
        ),
        (
            "lives_in",
            r"\b(?:(?:is|am|are|has|have|just)\s+)*(?:lives?|living|resides?|residing"
            r"|based|moved|moving|relocated|relocating|settled)\s+(?:in|to)\b",
            " lives_in ",
        ),
        (
            "works_at",
            r"\b(?:(?:is|am|are|has|have|just)\s+)*(?:works?|working|employed|joined"
            r"|started)\s+(?:at|for|by|with)\b|\b(?:has|have)\s+joined\b",
            " works_at ",
        ),
    )
)
_RELATION_WORDS = {
    "is_at": "starts begins held moved rescheduled",
    "lives_in": "lives living based moved relocated",
    "works_at": "works working employed joined",
}
# Verbs of ownership: the owner is the value, even before the verb ("Alice owns the API"
# then "Bob owns the API").
_OWNING = frozenset(
    "own owns owned lead leads led run runs manage manages maintain maintains head heads".split()
)
# Relations a subject may have many values of: a new value adds, it replaces nothing.
_MANY = frozenset(
    """like likes liked love loves loved enjoy enjoys enjoyed speak speaks spoke know knows
    use uses used play plays played visit visits visited read reads collect collects
    review reviews reviewed attend attends allergic owns owned has had leads led manages
    managed maintains maintained runs supports include includes contain contains met
    meet meets ran went goes bought buy buys""".split()
)
# Prepositions: a value brought by another one is another relation ("on Tuesdays" /
# "after the tests pass").
_PREPOSITIONS = frozenset(
    "on in at after before by for with from to during every per since until".split()
)
# Words that, after a replaced object, bind it to one purpose ("We use Jenkins for CI"):
# then even a relation of many values may have one value for that purpose.
_PURPOSE = frozenset(("for", "as"))

_TOKEN = re.compile(
    r"\d{1,2}(?::\d\d)?\s?(?:[ap]\.?m\.?)(?![\w])|\d{1,2}:\d\d|\d{4}-\d\d-\d\d"
    r"|[$€£]?\d[\w.,:/-]*\d%?|[$€£]?\d%?|[\w][\w'-]*\w|\w|@\w+",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


class _Word(NamedTuple):
    norm: str  # what is compared
    raw: str  # as written
    kind: str  # time | day | month | date | number | name | word | relation


def conflict(old: str, new: str) -> Verdict | None:
    """Whether `new` gives another value for what `old` states, by words (see the module's
    docstring); None when it does not, or cannot be told."""
    if len(old) > MAX_CHARS or len(new) > MAX_CHARS:
        return None
    olds = _sentences(old)
    news = _sentences(new)
    if not olds or not news or len(news) > 1 or len(olds) > MAX_SENTENCES:
        return None
    best: Verdict | None = None
    for sentence in olds:
        verdict = _compare(sentence, news[0])
        if not isinstance(verdict, Verdict):
            continue
        if len(olds) > 1:  # the memory says more: superseding it would hide the rest
            verdict = verdict._replace(level="unsure")
        if best is None or (verdict.level == "sure" and best.level != "sure"):
            best = verdict
    return best


def apart(old: str, new: str) -> str | None:
    """Why the words show that `new` sits beside what `old` states rather than replacing
    it ("another subject", "a value refined", "one more value", ...), or None when they do
    not tell. A likeness by meaning is no conflict then ("My brother lives in Lille" is
    near "My sister lives in Lyon")."""
    if len(old) > MAX_CHARS or len(new) > MAX_CHARS:
        return None
    olds = _sentences(old)
    news = _sentences(new)
    if len(olds) != 1 or len(news) != 1:
        return None
    said = _compare(olds[0], news[0])
    return said if isinstance(said, str) else None


def relation_words(text: str) -> str:
    """The words of the relations `text` states, written all the ways a fact may say
    them ("Moved to Madrid" gives "lives living based moved relocated"): what a search
    for the facts it may replace adds to its words."""
    return " ".join(_RELATION_WORDS[mark] for mark, rx, _ in _RELATIONS if rx.search(text))


def _sentences(text: str) -> list[str]:
    parts = [p.strip() for p in _SENTENCE.split(text.strip()) if p.strip()]
    return [p for p in parts if _TOKEN.search(p)]


def _compare(old: str, new: str) -> Verdict | str | None:
    """A conflict; or why the words set the two apart (a string); or None: no telling."""
    a, a_negated, a_changed = _words(old)
    b, b_negated, b_changed = _words(new)
    if not a or not b or len(a) > MAX_WORDS or len(b) > MAX_WORDS:
        return None
    sa, sb = [w.norm for w in a], [w.norm for w in b]
    if a_negated != b_negated:
        if sa == sb and _content(a) >= 1:
            said = "no longer" if b_negated else "again"
            return Verdict("sure", old.strip(), new.strip(), f"{said}: one of the two is negated")
        return None
    from difflib import SequenceMatcher  # what `context` imports of this module: not this

    ops = SequenceMatcher(None, sa, sb, autojunk=False).get_opcodes()
    changes = [op for op in ops if op[0] != "equal"]
    replaced = [op for op in changes if op[0] == "replace"]
    if not replaced:
        return "words added" if changes else "the same words"  # a refinement
    for op, k1, _, _, _ in changes:
        if all(w.norm in _STOP for w in a[:k1]) and (op != "replace" or len(replaced) > 1):
            return "another subject"  # "Deploys" / "Hotfix deploys", "My sister" / ...
    if len(replaced) > 1:
        return None  # several values replaced
    _, i1, i2, j1, j2 = replaced[0]
    was, now = a[i1:i2], b[j1:j2]
    if len(was) > MAX_VALUE or len(now) > MAX_VALUE:
        return None
    frame = [w for w in a[:i1] + a[i2:] if w.norm in sb]
    if _content(frame) < 1:
        return None  # nothing but the values and small words in common
    old_value = " ".join(w.raw for w in was)
    new_value = " ".join(w.raw for w in now)
    before = a[:i1]
    subject = all(w.norm in _STOP for w in before)
    owning = i2 < len(a) and a[i2].norm in _OWNING
    if subject and not owning:
        return "another subject"  # "The standup" / "The retro", "Adrian" / "Maria"
    kind = _kind_of(was)
    same_kind = kind == _kind_of(now) and kind != "word"
    refines = set(w.norm for w in was) <= set(w.norm for w in now) or set(
        w.norm for w in now
    ) <= set(w.norm for w in was)
    if refines:
        return "a value refined"
    if any(w.kind == "relation" for w in was + now):
        return "another relation"  # "is at 10:00" / "lasts 15 minutes"
    if {w.norm for w in was} & _PREPOSITIONS != {w.norm for w in now} & _PREPOSITIONS:
        return "another relation"  # "on Tuesdays" / "after the tests pass"
    verb = next((w for w in reversed(before) if w.norm not in _STOP), None)
    after = a[i2].norm if i2 < len(a) else ""
    many = (
        verb is not None
        and verb.raw.lower() in _MANY
        and before[-1].norm != "by"  # "is owned by Alice": one owner
        and not subject
        and after not in _PURPOSE
    )
    if kind in ("name", "word") and many:
        return "one more value"  # "Speaks French" after "Speaks Spanish"
    why = f"{old_value!r} then {new_value!r}"
    changed = b_changed and not a_changed
    if kind == "number" and _units(was) != _units(now):
        return "another count"  # "6 engineers" / "2 designers"
    if subject and owning and all(w.raw[0].isupper() for w in was + now):
        same_kind = True  # "Marco owns ..." / "Dana owns ...": a name, first in its sentence
    if not same_kind:
        if _kind_of(now) != "word" and kind != "word":
            return "another relation"  # two kinds of value: "in March" / "in Lisbon"
        return Verdict("unsure", old_value, new_value, why)
    if len(changes) > 1 or (many and not changed):
        return Verdict("unsure", old_value, new_value, why)
    if subject and owning and not all(w.raw[0].isupper() for w in was + now):
        return Verdict("unsure", old_value, new_value, why)  # an owner is named
    return Verdict("sure", old_value, new_value, why)


def _units(words: list[_Word]) -> set[str]:
    return {w.norm for w in words if w.kind != "number" and w.norm not in _STOP}


def _content(words: list[_Word]) -> int:
    return sum(1 for w in words if w.norm not in _STOP)


def _words(text: str) -> tuple[list[_Word], bool, bool]:
    """The words compared, whether the statement is negated, and whether it says that
    something changed."""
    changed = bool(_MARKERS.search(text))
    text = _MARKERS.sub(" ", text)
    negated = bool(_NEGATION.search(text))
    text = _NEGATION.sub(" ", text)
    for _, rx, written in _RELATIONS:
        text = rx.sub(written, text)
    words: list[_Word] = []
    first = True
    for match in _TOKEN.finditer(text):
        raw = match.group(0)
        norm = _norm(raw)
        if norm == "i" and not words:
            continue  # the user: a fact about them names no subject ("Lives in Porto")
        kind = "relation" if raw in _RELATION_WORDS else _kind(raw, norm, first)
        first = False
        if norm in ("do", "does", "did"):
            continue  # an auxiliary: what a negation leaves ("Alice doesn't drink")
        words.append(_Word(norm, raw, kind))
    return words, negated, changed


def _norm(raw: str) -> str:
    word = raw.lower().replace(" ", "").replace(".", "") if raw[0].isdigit() else raw.lower()
    if re.fullmatch(r"\d{1,2}(?::\d\d)?(?:am|pm)", word.replace(".", "")):
        word = word.replace(".", "")
        hour, _, rest = word[:-2].partition(":")
        minutes = rest or "00"
        h = int(hour) % 12 + (12 if word.endswith("pm") else 0)
        return f"{h:02d}:{minutes}"
    if re.fullmatch(r"\d{1,2}:\d\d", word):
        hour, minutes = word.split(":")
        return f"{int(hour):02d}:{minutes}"
    if word == "noon":
        return "12:00"
    if word == "midnight":
        return "00:00"
    word = word.removesuffix("'s").removesuffix("'")
    if word.endswith("s") and word[:-1] in _DAYS:
        return word[:-1]
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _kind(raw: str, norm: str, first: bool) -> str:
    if re.fullmatch(r"\d\d:\d\d", norm):
        return "time"
    if norm in _DAYS or norm in ("weekday", "weekend"):
        return "day"
    if norm in _MONTHS and (norm != "may" or raw[0].isupper()):
        return "month"
    if re.fullmatch(r"\d{4}-\d\d-\d\d", norm):
        return "date"
    if any(c.isdigit() for c in norm) or norm in _NUMBER_WORDS:
        return "number"
    if raw[0].isupper() and not first and norm not in _STOP:
        return "name"
    return "word"


def _kind_of(words: list[_Word]) -> str:
    """The kind of a value: its words' one kind ("GitHub Actions": a name), a number with
    its unit ("8 engineers": a number), else a word."""
    kinds = [w.kind for w in words if w.norm not in _STOP]
    if not kinds:
        return "word"
    if len(set(kinds)) == 1:
        return kinds[0]
    if kinds[0] == "number" and len(kinds) == 2:
        return "number"
    return "word"
