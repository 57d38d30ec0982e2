"""Cobertura core: the knowledge tree, retrieval and (later) the agent, shared by every surface."""
