"""The gap backlog (G1-G5): recording uncovered questions, PII masking, merging, reshaping, replay before
closing, article drafts, answer feedback (a 👎 is a gap too) with the per-source counts, and the CLI commands.
Imports ``core.agent`` and the layers below it."""
