"""Rating an answer (answer feedback): the turn is found in its conversation here, where the turns live, and
the rating is recorded by :mod:`core.gaps.feedback` (which puts a 👎 on the gap backlog).

The widget rates through ``POST /v1/conversations/{id}/turns/{turn}/feedback`` (the endpoint checks first that
the conversation is the visitor's own), the Sandbox through the same function with the editor's context: a
Sandbox turn is a recorded turn like any other, so its 👎 reaches the backlog under its channel (``sandbox``).
A turn of another conversation, and any turn of another tenant, is not found, exactly like a missing one.
"""
from __future__ import annotations

from core.base.store import Store
from core.channels import conversations
from core.gaps import feedback
from core.tenancy.context import TenantContext


class TurnNotFound(conversations.ConversationError):
    """No such turn in that conversation (or no such conversation) for this tenant."""


def rate(ctx: TenantContext, store: Store, backlog, conversation_id: str, turn_id: int, rating: str,
         reason: str | None = None) -> feedback.Feedback:
    """Record (or replace) the rating of one turn of one conversation; returns what was recorded."""
    rating, reason = feedback.check_rating(rating), feedback.check_reason(reason)
    turn = conversations.get_turn(ctx, store, conversation_id, turn_id)
    if turn is None:
        raise TurnNotFound(f"No answer #{turn_id} in conversation '{conversation_id}'; rate an answer of this "
                           "conversation (the done event names its turn_id).")
    rated = feedback.RatedTurn(turn["id"], turn["conversation_id"], turn["channel"], turn["language"] or "",
                               turn["status"], turn["question"], turn["answer"], turn["citations"],
                               turn["provider"] or "")
    return feedback.record(ctx, store, backlog, rated, rating, reason)
