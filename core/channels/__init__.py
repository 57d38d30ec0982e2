"""Where conversations happen: conversations and turns, the turn pipeline (admit, answer, record, policy),
rating an answer, handoffs to people and their webhook (A4, A7, H1-H2). Imports the layers below and ``core.gaps``."""
