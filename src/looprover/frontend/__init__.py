"""The front-ends: C files (`frontend.c`) and Horn-clause files (`frontend.chc`) into the program IR."""
from __future__ import annotations

from looprover.errors import InputError


def check_text(shown: str, raw: bytes, kind: str) -> None:
    """Refuse a binary file before a compiler or parser sees it: their complaints about every byte of an
    executable run to megabytes (gcc echoes each offending line). Source text has no NUL bytes."""
    nul = raw.find(b"\0")
    if nul >= 0:
        raise InputError(f"{shown}: binary file (NUL byte at offset {nul}), not {kind}")
