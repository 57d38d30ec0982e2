"""The citation gate (A3): claims, their framing, numbers, related words, support scoring and relevance.
Pure functions, no I/O. Imports only ``core.base``; never ``core.knowledge``."""
