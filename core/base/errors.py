"""The one base of every error a person can fix: what was wrong and what to do next, in its message.

Pages, the CLI and the API catch :class:`UserError` in one place each and show its message as it is;
anything else is a fault of ours and is reported as such.
"""
from __future__ import annotations


class UserError(ValueError):
    """Bad input or a refused operation; ``str(error)`` says what was wrong and what to do."""


class PermissionDenied(UserError, PermissionError):
    """The signed-in user's role may not do this; the message says which role may."""
