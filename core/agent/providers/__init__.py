"""Language-model providers behind one ``Provider`` protocol: Anthropic, OpenAI-compatible endpoints, the
offline extractive responder, and the failover chain. Imports ``core.base`` and ``core.agent.protocol``."""
