"""The gap backlog page's shared plumbing: the errors written for the user, and the flash message an
editorial callback leaves for the next run of the page."""
from __future__ import annotations

from core.base.errors import UserError
from pages import common

#: The errors of the backlog, the tree and the settings: their messages are written for the user.
FLASH = "gaps_flash"

_flash = common.Flash(FLASH)
flash, show_flash = _flash.set, _flash.show


def guarded(action):
    """Run an editorial callback; a user error becomes a message on the page, never a traceback."""
    def run(*args):
        try:
            action(*args)
        except UserError as exc:
            flash("error", str(exc))
    return run
