"""Recall by meaning: embeddings providers (fastembed in-process, any OpenAI-compatible
server) and the vector store kept beside the index under `.kenomem/vectors/`, derived
from the memory files like the index and keyed by the text each vector was made of.
"""
