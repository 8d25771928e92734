"""More words for a short query: pseudo-relevance feedback, and the merge of a second,
lighter search into the first. Pure: the caller searches.

A query of two or three words often misses the memory that says the same thing in other
words ("pets" for a turn about "our cat Bailey"). The best few hits of the first search
are likely relevant; the words they share, and that are rare in the vault, are likely
words of the topic. They are searched for in a second search whose scores count for a
share (`weight`) of the first's, so they can bring new candidates and reorder close ones
but never outweigh the words the user typed (RM3, Lavrenko and Croft 2001, in its usual
simplified form).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from kenomem.index import Hit, SearchResult

_WORD = r"[^\W\d_]{3,}"  # words of letters, three or more (compiled when first used)


def feedback_words(
    query_terms: Sequence[str],
    hits: Sequence[Hit],
    analyze: Callable[[str], list[str]],
    doc_frequency: Callable[[Sequence[str]], tuple[Mapping[str, int], int]],
    docs: int = 3,
    words: int = 5,
) -> list[str]:
    """Up to `words` words from the top `docs` hits to search for besides the query.

    A term is weighed by how strongly the top hits hold it (each hit's share of the
    best score, times the term's share of that hit's words) and by how rare it is in the
    vault (idf); it must be in at least two of the hits when more than one is used, so
    that one hit's quirks do not steer the search. Returned as the words the text has
    (not stems), so that the search analyses them as it analyses any query.
    """
    top = [hit for hit in hits[:docs] if hit.score > 0]
    if not top:
        return []
    best = top[0].score
    skip = set(query_terms)
    weight: dict[str, float] = {}
    seen_in: Counter[str] = Counter()
    surface: dict[str, str] = {}
    stems: dict[str, str] = {}
    for hit in top:
        text = f"{hit.doc.title}\n{hit.doc.preview}"
        counts: Counter[str] = Counter()
        for word in re.findall(_WORD, text):
            lower = word.lower()
            if lower not in stems:
                analysed = analyze(lower)
                stems[lower] = analysed[0] if len(analysed) == 1 else ""
            stem = stems[lower]
            if stem and stem not in skip:
                counts[stem] += 1
                surface.setdefault(stem, lower)
        length = sum(counts.values()) or 1
        for stem, n in counts.items():
            weight[stem] = weight.get(stem, 0.0) + (hit.score / best) * n / length
            seen_in[stem] += 1
    need = 2 if len(top) > 1 else 1
    shared = [stem for stem in weight if seen_in[stem] >= need]
    if not shared:
        return []
    frequency, total_docs = doc_frequency(shared)
    scored = []
    for stem in shared:
        df = frequency.get(stem, 0)
        if df <= 0:
            continue
        idf = math.log(1 + (total_docs - df + 0.5) / (df + 0.5))
        scored.append((weight[stem] * idf, stem))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [surface[stem] for _, stem in scored[:words]]


def merge(first: SearchResult, second: SearchResult, weight: float) -> SearchResult:
    """The hits of both searches, each scored as first + weight * second."""
    extra = {hit.doc.id: hit.score for hit in second.hits}
    merged = [Hit(hit.doc, hit.score + weight * extra.pop(hit.doc.id, 0.0)) for hit in first.hits]
    merged += [Hit(hit.doc, weight * hit.score) for hit in second.hits if hit.doc.id in extra]
    merged.sort(key=lambda hit: (-hit.score, hit.doc.id))
    return SearchResult(merged, first.terms, first.total + len(merged) - len(first.hits))
