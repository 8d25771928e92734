"""Whoosh's StemmingAnalyzer, as whoosh_engine.py configures it, in plain Python.

The tantivy engine indexes the terms this module makes (joined by spaces, split again by
tantivy's whitespace tokenizer), so that both engines hold exactly the same terms for
the same text: the same tokens (Whoosh's default word pattern, which keeps `*` and inner
dots), lower case, the shared STOP_WORDS, no one-character words, and Whoosh's own
Porter stemmer. tantivy's English stemmer is Snowball (Porter2): on real English text
6% of the words got another term from it (`used` -> `use`, not `us`), which would have
changed which words count as the same word on one engine and not on the other.

The price is Python time while indexing, about 0.1 ms per memory of 165 words; each
distinct word is stemmed once per process. tests/index/test_engines.py checks that this gives
the very terms Whoosh's analyser gives.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from whoosh.lang.porter import stem

from kenomem.index.analysis import STOP_WORDS

# whoosh.analysis.StemmingAnalyzer's default expression.
WORD = re.compile(r"[\w*]+(?:\.?[\w*]+)*")

_MEMO_LIMIT = 200_000
_memo: dict[str, str] = dict.fromkeys(STOP_WORDS, "")  # lower-case word -> term ("" = none)


def _term(word: str) -> str:
    term = "" if len(word) < 2 or word in STOP_WORDS else stem(word)
    if len(_memo) >= _MEMO_LIMIT:
        _memo.clear()
        _memo.update(dict.fromkeys(STOP_WORDS, ""))
    _memo[word] = term
    return term


# ASCII text, lower-cased, with every character that cannot be in a word made a space:
# what is left between spaces is a word, once the dots that no word can hold (beside a
# space: a sentence's end) are gone too.
_ASCII_WORDS = str.maketrans(
    {chr(c): chr(c).lower() if chr(c).isalnum() or chr(c) in "_*." else " " for c in range(128)}
)


def _words(text: str) -> list[str]:
    if text.isascii():  # twice as fast as WORD.findall(text.lower()), and the same words
        spaced = text.translate(_ASCII_WORDS)
        if "." in spaced:
            spaced = spaced.replace(". ", " ").replace(" .", " ")
            if "." in spaced:  # inner dots ("e.g", "v1.2"), runs of dots, at an end
                return [w for r in spaced.split() for w in (WORD.findall(r) if "." in r else (r,))]
        return spaced.split()
    return [word.lower() for word in WORD.findall(text)]


def _terms(text: str) -> list[str]:
    """A term or "" for each word of `text`."""
    words = _words(text)
    terms = list(map(_memo.get, words))
    if None in terms:
        terms = [
            _term(word) if term is None else term for word, term in zip(words, terms, strict=True)
        ]
    return terms  # type: ignore[return-value]


def analyze(text: str) -> list[str]:
    """The terms of `text`, in order, as Whoosh's analyser makes them."""
    return list(filter(None, _terms(text)))


def joined(text: str) -> str:
    """The terms of `text` joined by spaces: what tantivy's whitespace tokenizer splits."""
    return " ".join(filter(None, _terms(text)))


def term_offsets(text: str, wanted: Iterable[str]) -> list[tuple[str, int]]:
    """Where the `wanted` terms occur in `text`, as WhooshEngine.term_offsets finds them."""
    wanted = set(wanted)
    heads = {term[:1] for term in wanted}
    found = []
    for match in WORD.finditer(text):
        word = match.group().lower()
        if word[:1] in heads:
            term = _memo.get(word) or stem(word)
            if term in wanted:
                found.append((term, match.start()))
    return found
