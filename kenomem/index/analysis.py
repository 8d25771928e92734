"""The analysis every engine shares: the words not worth searching for, and whether a
memory's title says something its body does not.

Whoosh's own stop list has 34 words and misses the words questions are made of ("what",
"did", "how", "her"): in a question asked of a chat history they matched nearly every
turn and drowned the words that mattered. This is the common English list of NLTK's
corpus (itself the Snowball list), which standard BM25 set-ups use; with it, recall@10
on the LoCoMo questions went up by several points (bench/README.md).
"""

from __future__ import annotations

import itertools
import re

STOP_WORDS = frozenset(
    """
    a about above after again against ain all am an and any are aren arent as at be
    because been before being below between both but by can couldn couldnt d did didn
    didnt do does doesn doesnt doing don dont down during each few for from further had
    hadn hadnt has hasn hasnt have haven havent having he her here hers herself him
    himself his how i if in into is isn isnt it its itself just ll m ma me mightn
    mightnt more most mustn mustnt my myself needn neednt no nor not now o of off on
    once only or other our ours ourselves out over own re s same shan shant she shes
    should shouldn shouldnt shouldve so some such t than that thatll the their theirs
    them themselves then there these they this those through to too under until up ve
    very was wasn wasnt we were weren werent what when where which while who whom why
    will with won wont wouldn wouldnt y you youd youll your youre yours yourself
    yourselves youve tbd us may yet
    """.split()
)

_WORDS = re.compile(r"\w+")


def title_adds(title: str, body: str) -> bool:
    """Whether the title is worth searching apart from the body.

    A title that a person wrote (a heading, a `title:` that says something else) is; a
    title made from the body's first words (what `remember` does without `--title`) is
    not: weighting it again would favour the first words of every memory over the rest.
    """
    head = _WORDS.findall(title.lower())
    if not head:
        return False  # nothing in it to search for
    rest = body.lstrip()  # every line break is white space: blank lines go too
    if not rest:
        return True
    first = rest.split("\n", 1)[0].splitlines()[0].rstrip()  # its first line
    if first.startswith("#"):
        return True  # the body opens with a heading: the title is a real one
    # Made from the opening line if its words run, in order, within that line's first
    # few words ("Dana: hey there" titled "hey there"): no later word counts.
    found = _WORDS.finditer(first.lower())
    words = [m.group() for m in itertools.islice(found, 3 + len(head))]
    return not any(words[i : i + len(head)] == head for i in range(min(4, len(words))))
