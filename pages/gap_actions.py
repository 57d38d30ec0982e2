"""The gap backlog page's shared plumbing: the errors written for the user, and the flash message an
editorial callback leaves for the next run of the page."""
from __future__ import annotations

from core.base.config import ConfigError
from core.gaps.backlog import GapError
from core.knowledge.sources import SourceError
from core.tenancy.context import AuthError
from pages import common

#: The errors of the backlog, the tree and the settings: their messages are written for the user.
USER_ERRORS = (GapError, AuthError, SourceError, ConfigError)
FLASH = "gaps_flash"

_flash = common.Flash(FLASH)
flash, show_flash = _flash.set, _flash.show


def guarded(action):
    """Run an editorial callback; a user error becomes a message on the page, never a traceback."""
    def run(*args):
        try:
            action(*args)
        except USER_ERRORS as exc:
            flash("error", str(exc))
    return run
