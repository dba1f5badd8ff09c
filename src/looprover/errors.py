"""Errors that end a run with a clear UNKNOWN (never a traceback)."""
from __future__ import annotations


class LooproverError(Exception):
    """Base class: the message is shown to the user as the reason."""


class InputError(LooproverError):
    """The input cannot be read: missing file, syntax error, malformed task definition."""


class GiveUp(LooproverError):
    """An engine cannot continue soundly (solver `unknown`, failed interpolation, a refused system): the run
    ends with UNKNOWN and this message as the reason."""


class UnsupportedError(LooproverError):
    """The program uses a construct we cannot model soundly; the verdict is UNKNOWN(unsupported)."""

    def __init__(self, construct: str, where: object = None):
        self.construct = construct
        self.where = where  # a SrcLoc or a "file:line" string
        super().__init__(f"unsupported: {construct}" + (f" at {where}" if where is not None else ""))
