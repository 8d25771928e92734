"""Which kind of memory a text is, when `remember` is not told (`--type`).

The rules, in order, the first that matches deciding (documented in docs/guide.md;
measured on the labelled sentences of bench/data/router.json by bench/router.py):

1. episodic, reported speech: someone said something ("Alice said ...", "she told me
   ...", "Tom mentioned that ...", "my manager asked ..."): what was said is an event,
   even when it says "always" or "never";
2. episodic, a remembered event: "I will never forget the trip", "I remember the first
   time", "never" or "always" before a verb in the past ("we never found out");
3. semantic, a habit of a named person or thing: "Alice always works from home", "Bob
   never drinks coffee", "the backup job never runs on weekends" (not "the user"); a
   liking stays procedural ("Adrian prefers short answers"): the user is often named;
4. procedural: it says how to behave or how to do something: a preference ("prefers",
   "would rather", "I'd rather", "likes it when", "I want you to"), an instruction
   ("always", "never", "don't", "make sure", "remember to", "you should", a sentence that
   starts with a verb: "Use ...", "Format ..."), a condition and what to do ("when X, do
   Y", "if X, do Y", "for X, do Y"), or a how-to ("how to", "to deploy, run", "steps",
   "whenever", "instead of");
5. semantic, a schedule in the present: what recurs ("every Friday", "on Tuesdays",
   "daily", "weekly", a standup, a retro, a sync, office hours) at a time or on a day:
   "The standup is at 10:00", "Backups run at 02:00 every night", "The retro happens
   every Friday", with no day of its own ("yesterday", "on Monday", a date): when
   something recurs is a fact, which a new time replaces ("The demo is at 3pm" is an
   event);
6. episodic: it tells of something that happened at a time: a date or time
   ("yesterday", "last week", "on Monday", "2026-02-14", "10 February 2026", "in May",
   "at 3pm", "ago", "during the outage"), an event verb in the past ("met", "went",
   "decided", "shipped", "happened"), someone doing something in the past ("we spent",
   "I finally passed", "it rained"), or a past passive ("was delayed");
7. semantic: anything else, a fact that holds regardless of time ("Alice is a backend
   engineer", "The API uses OAuth").
"""

from __future__ import annotations

import re

_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"

# Verbs in the past that are not made with -ed.
_IRREGULAR_PAST = (
    r"went|saw|met|had|spent|took|got|made|came|found|lost|won|broke|ran|left|gave|heard"
    r"|felt|thought|bought|sold|wrote|drove|flew|ate|drank|slept|began|forgot|knew|did"
    r"|became|fell|caught|brought|sent|told|said|paid|built|chose|kept|stood|sat|spoke"
)
# Who said it: a pronoun, a capitalised name, or "the/my/our ..." and a word.
_SUBJECT = r"(?:(?i:i|we|he|she|they|you)|[A-Z][a-z'-]+|(?i:the|my|our|his|her|their)\s+[a-z]+)"
_SAYING = (
    r"said|told|mentioned|asked|explained|complained|admitted|promised|replied|wrote"
    r"|texted|emailed|messaged|warned|suggested|claimed|confirmed|called\s+to\s+say"
)
_REPORTED = re.compile(rf"\b{_SUBJECT}\s+(?:just\s+|also\s+|once\s+|then\s+)?(?i:{_SAYING})\b")
_REMEMBERED = re.compile(
    rf"""
    \bnever\s+forget\s+(?!to\b)\w+
    |\bi\s+(?:still\s+)?remember\s+(?:the|when|how|that|my|our|what|meeting|seeing)\b
    |\b(?:never|always)\s+(?:\w+ed|{_IRREGULAR_PAST})\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
# A named person or thing (a capitalised name, or "the ..." but not "the user") with a
# habit: the verb in the third person.
_HABIT = re.compile(
    r"""
    ^(?:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?|[Tt]he\s+(?!user\b)[a-z][\w-]*(?:\s+[a-z][\w-]*)?)
    \s+(?:always|never|usually|often|rarely|sometimes)\s+[a-z]+s\b
    """,
    re.VERBOSE,
)
# Verbs an instruction starts with.
_IMPERATIVE = (
    r"use|run|call|write|answer|reply|respond|keep|add|check|be|format|sort|start|ask"
    r"|avoid|try|put|set|send|open|close|make|stop|ignore|include|mention|show|tell|give"
    r"|wait|restart|restore|rotate|mark|ping|prefer|pin|tag|link|test|read|review|skip"
    r"|look|name|save|store|log|report|explain|list|let|treat|reach|push|pull|merge"
)
_PROCEDURAL = re.compile(
    rf"""
    \b(?:prefer(?:s|red|ence|ences)?|would\ rather|i'd\ rather|likes?\ it\ when
      |(?:dis)?likes?\ when|i\ want\ (?:you\ to|(?:\w+\ )?(?:answers|replies|responses))
      |always|never|don'?t|do\ not|must(?:n'?t)?|make\ sure|remember\ to|be\ sure\ to
      |you\ should|should\ (?:always|never|not|use|be)|please\ (?:use|do|don'?t|avoid)
      |avoid|how\ to|step\ \d|steps?\ (?:to|for)|whenever|instead\ of|in\ order\ to
      |to\ \w+(?:\ \w+){{0,3}},?\ (?:run|use|call|type|do|open|press|click)\b)
    |(?:^|[.;!]\s+)(?:{_IMPERATIVE})\b
    |(?:^|[.;!]\s+)(?:if|when|for|before|after|once)\b[^,.;]{{1,80}},\s*(?:{_IMPERATIVE})\b
    """,
    re.IGNORECASE | re.VERBOSE,
)

_EPISODIC = re.compile(
    rf"""
    \b(?:yesterday|today|tonight|this\ (?:morning|afternoon|evening|week|month|year)
      |last\ (?:night|week|weekend|month|year|{_DAYS}|time)
      |\w+\ (?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|while)\ ago
      |earlier\ today|on\ (?:{_DAYS})\b|(?:in|on|since)\ (?:{_MONTHS})\b
      |during\ (?:the|our|my|his|her|their)\b
      |\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}\s?(?:am|pm)\b|at\ \d{{1,2}}(?::\d{{2}})?\b
      |\d{{1,2}}(?:st|nd|rd|th)?\ (?:of\ )?(?:{_MONTHS}),?\ \d{{4}}
      |(?:{_MONTHS})\ \d{{1,2}}(?:st|nd|rd|th)?,?\ \d{{4}}
      |(?<!is\ )(?<!are\ )(?<!was\ )(?<!be\ )called
      |(?:met|went|visited|happened|decided|discussed|talked|shipped|released
        |launched|moved|started|finished|attended|celebrated|broke|lost|won|bought
        |agreed|announced|was\ born|got\ married)\b
      |(?:i|we|he|she|they|it)\ (?:\w+ly\ )?(?:\w+ed|{_IRREGULAR_PAST})\b
      |(?:was|were)\ (?:\w+ed|born|taken|broken|given|sent|held|built|sold|paid)\b)
    """,
    re.IGNORECASE | re.VERBOSE,
)

_SCHEDULE = re.compile(
    rf"""
    \b(?:is|are|starts?|begins?|runs?|happens?|takes\ place|kicks\ off|opens?|closes?
      |is\ held|are\ held|goes\ out|go\ out)
    \s+(?:at\ (?:\d{{1,2}}(?::\d\d)?\s?(?:am|pm)?|noon|midnight)\b
      |every\ (?:day|morning|evening|night|week|weekday|month|{_DAYS})\b
      |on\ (?:{_DAYS})s\b)
    """,
    re.IGNORECASE | re.VERBOSE,
)
_RECURS = re.compile(
    rf"""
    \b(?:every|each|daily|weekly|nightly|monthly|fortnightly|biweekly)\b|\bon\ (?:{_DAYS})s\b
    |\b(?:stand-?ups?|retros?|retrospectives?|syncs?|all-hands|check-ins?|office\ hours
      |huddles?|scrums?|one-on-ones?|1:1s?)\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
_ONE_DAY = re.compile(
    rf"""
    \b(?:yesterday|today|tonight|tomorrow|last\ \w+|next\ \w+|ago|this\ \w+
      |on\ (?:{_DAYS})\b(?!s)|\d{{4}}-\d{{2}}-\d{{2}}|(?:{_MONTHS})\ \d{{1,2}}\b
      |\d{{1,2}}(?:st|nd|rd|th)?\ (?:of\ )?(?:{_MONTHS})\b)
    |\b(?:was|were|had|did)\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


def classify(text: str) -> str:
    """semantic, episodic or procedural: the first of the rules above that matches."""
    text = text.strip()
    if _REPORTED.search(text) or _REMEMBERED.search(text):
        return "episodic"
    if _HABIT.search(text):
        return "semantic"
    if _PROCEDURAL.search(text):
        return "procedural"
    if _SCHEDULE.search(text) and _RECURS.search(text) and not _ONE_DAY.search(text):
        return "semantic"
    if _EPISODIC.search(text):
        return "episodic"
    return "semantic"
