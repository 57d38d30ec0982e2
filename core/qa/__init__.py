"""QA suites (Q1-Q2): suites and cases, JSONL import/export, rehearsal runs and diffs, the CLI commands.
Imports every layer below it (channels included)."""
