"""Value types of the command-line options, shared by `looprover` and `python -m looprover.bench.reference`.

Each raises `argparse.ArgumentTypeError`, so a bad value is a usage error (exit 2) with argparse's message.
"""
from __future__ import annotations

import argparse


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return v


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return v


def engine_option(text: str) -> tuple[str, str, str]:
    """`--option ENGINE.FIELD=VALUE` as (engine, field, value); the engine checks field and value."""
    key, eq, value = text.partition("=")
    engine, dot, name = key.strip().partition(".")
    if not eq or not dot or not engine or not name:
        raise argparse.ArgumentTypeError(f"expected ENGINE.OPTION=VALUE, got {text!r}")
    return engine, name.strip(), value.strip()
