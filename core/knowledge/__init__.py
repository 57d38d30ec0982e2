"""The knowledge tree and what is built from it: sources, extraction and import, chunking, embeddings, the
vector and keyword indexes, training, question variants, retrieval, browse/read (K1-K4, R1-R4).
Imports ``core.base`` and ``core.tenancy``; never ``core.grounding``."""
