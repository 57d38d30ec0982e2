"""The Sandbox trace readable at 1,400 px (#17 item 6): each search's candidates show the path, whether it was
selected, what found it and why within the chat message's width; the gate's claims table fits it."""
from __future__ import annotations

from tests.apptest import settle
from tests.pages import test_sandbox
from tests.pages.test_wide_tables import CHAT_PX, layout, visible

fake, runtime, ctx = test_sandbox.fake, test_sandbox.runtime, test_sandbox.ctx  # the Sandbox tests' fixtures


def test_the_sandbox_trace_shows_found_by_selected_and_why(runtime, ctx):
    at = settle(test_sandbox.say(test_sandbox.open_page(runtime.store), test_sandbox.INSTALMENTS[0]))
    table = next(d for d in at.dataframe if "Found by" in d.value.columns)
    order, widths = layout(table)
    assert order[:3] == ["Path", "Selected", "Found by"]
    assert {"Path", "Selected", "Found by", "Score", "Similarity", "Why"} <= set(visible(order, widths, CHAT_PX))
    assert widths["Path"] >= 230  # "faq/how-do-i-change-my-delivery-address" has no space to wrap at
    claims = next(d for d in at.dataframe if "Claim" in d.value.columns)
    order, widths = layout(claims)
    assert sum(widths.values()) <= CHAT_PX
