"""The floor for a cold recall on the tantivy engine: a bare Python process that imports
tantivy, opens the index kenomem built, runs the same search (a boosted term query for
each term in the title, tag and body fields, only active memories, 50 candidates) and
reads the hits' stored fields.

    python bench/floor_tantivy.py VAULT TERM...

The terms are given already analysed (stemmed, lower case, no stop words: what
`kenomem.index.stemming.analyze` makes of the query), so the floor pays for no analysis
at all: it is the least any Python process can do to answer the query with tantivy.
"""

import sys

import tantivy

vault, terms = sys.argv[1], sys.argv[2:]
ix = tantivy.Index.open(f"{vault}/.kenomem/index/tantivy")
ix.register_tokenizer("terms", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
schema = ix.schema
searcher = ix.searcher()
clauses = []
for term in terms:
    for field, boost in (("titletext", 3.0), ("tagtext", 2.0), ("body", 1.0)):
        if searcher.doc_freq(field, term):
            query = tantivy.Query.term_query(schema, field, term, index_option="freq")
            clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(query, boost)))
active = tantivy.Query.term_query(schema, "status", "active", index_option="basic")
query = tantivy.Query.boolean_query(
    [
        (tantivy.Occur.Must, tantivy.Query.boolean_query(clauses)),
        (tantivy.Occur.Must, tantivy.Query.const_score_query(active, 0.0)),
    ]
)
found = searcher.search(query, 50, count=False)
hits = [searcher.doc(address).get_first("stored") for _, address in found.hits]
print(len(hits))
