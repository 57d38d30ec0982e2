"""How the admin pages' wide tables stay readable at 1,400 px (the main column is about 940 px wide next to the
sidebar, 850 px inside a chat message): fixed column widths that add up to the space there is, the columns that
matter first, and rows tall enough for a long text to wrap over a few lines instead of being cut."""
from __future__ import annotations

import streamlit as st

LINE_PX = 20
WRAP_MIN_PX = 70  # a cell wraps its text only from this row height on (measured in Chromium, Streamlit 1.67)
MAX_LINES = 4  # a longer text is cut in its cell; the pages show it in full elsewhere (details, the chosen row)


def _lines(text, per_line: int) -> int:
    return -(-len(str(text or "")) // per_line) or 1


def wrapped(columns: list[tuple[list, int]]) -> int:
    """Pixels per row for columns of texts, each with the characters one line of it holds: one line when nothing
    wraps, else as many lines as the longest cell needs, up to MAX_LINES."""
    needed = max((_lines(text, per_line) for texts, per_line in columns for text in texts), default=1)
    lines = min(needed, MAX_LINES)
    return 35 if lines == 1 else max(WRAP_MIN_PX, 24 + LINE_PX * lines)


# -- the Sources tree: the status ("changed since training") and the counts come before the long titles ---------------
SOURCE_ORDER = ("Tree", "Status", "Type", "★", "Lang", "Answers", "Chars", "Title / folder description")
SOURCE_COLUMNS = {
    "Tree": st.column_config.TextColumn(width=240),
    "Status": st.column_config.TextColumn(width=170),
    "Type": st.column_config.TextColumn(width=58),
    "★": st.column_config.TextColumn(width=30, help="Starred: preferred on near-ties, on the next answer"),
    "Lang": st.column_config.TextColumn(width=48),
    "Chars": st.column_config.NumberColumn(width=65, format="%d"),
    "Title / folder description": st.column_config.TextColumn(width=180),
}
SOURCE_ANSWERS_WIDTH = 110  # "12 · 3 unhelpful"

# -- the Sandbox trace: each search's candidates, what decided them first; long reasons and claims wrap -------------
CANDIDATE_ORDER = ("Path", "Selected", "Found by", "Score", "Similarity", "BM25", "Why", "Best sentence",
                   "Phrasings agree", "Type", "Chunk")
CANDIDATE_COLUMNS = {
    "Path": st.column_config.TextColumn(width=230),
    "Selected": st.column_config.TextColumn(width=92),
    "Found by": st.column_config.TextColumn(width=78, help="dense: by meaning (vectors); keyword: by words (BM25); "
                                                          "both"),
    "Score": st.column_config.NumberColumn(format="%.3f", width=60),
    "Similarity": st.column_config.NumberColumn(format="%.3f", width=78),
    "BM25": st.column_config.NumberColumn(format="%.2f", width=56),
    "Why": st.column_config.TextColumn(width=250),
    "Best sentence": st.column_config.NumberColumn(format="%.3f", width=100),
    "Phrasings agree": st.column_config.NumberColumn(format="%.2f", width=115),
    "Type": st.column_config.TextColumn(width=60),
    "Chunk": st.column_config.TextColumn(width=110),
}
GATE_COLUMNS = {
    "Claim": st.column_config.TextColumn(width=320),
    "Verdict": st.column_config.TextColumn(width=105),
    "Cites": st.column_config.TextColumn(width=105),
    "Detail": st.column_config.TextColumn(width=240),
    "Support": st.column_config.NumberColumn(format="%.2f", width=70),
}


def candidate_rows(frame) -> int:
    return wrapped([(list(frame["Why"]), 34)])  # a path has no spaces to wrap at


def gate_rows(frame) -> int:
    return wrapped([(list(frame["Claim"]), 46), (list(frame["Detail"]), 33)])
