"""The floor for a cold recall: a bare Python process that imports whoosh, opens the index
kenomem built, runs the same query (the same analysed terms, boosts and BM25F weighting,
the same number of candidates) and reads the hits' stored fields.

    python bench/floor.py VAULT QUERY...
"""

import sys

from whoosh import index
from whoosh import query as q
from whoosh.scoring import BM25F

vault, text = sys.argv[1], " ".join(sys.argv[2:])
ix = index.open_dir(f"{vault}/.kenomem/index/whoosh")
terms = list(dict.fromkeys(t.text for t in ix.schema["body"].analyzer(text)))
clauses = []
for term in terms:
    clauses += [
        q.Term("title", term, boost=3.0),
        q.Term("tagtext", term, boost=2.0),
        q.Term("body", term, boost=1.0),
    ]
with ix.searcher(weighting=BM25F()) as searcher:
    hits = [
        hit.fields()
        for hit in searcher.search(q.Or(clauses), filter=q.Term("status", "active"), limit=50)
    ]
print(len(hits))
