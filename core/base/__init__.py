"""Foundations every package uses: configuration, the SQLite store and its migrations, the clock, the
user-error base, sentence splitting and language detection. Imports nothing else of ``core``."""
