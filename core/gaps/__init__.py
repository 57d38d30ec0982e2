"""The gap backlog (G1-G5): recording uncovered questions, PII masking, merging, reshaping, replay before
closing, article drafts and the CLI commands. Imports ``core.agent`` and the layers below it."""
