"""Program -> Program transformations, by the name `looprover transform --technique NAME` uses."""
from __future__ import annotations

from typing import Callable

from looprover.program.cfa import Program


def _labmc(program: Program) -> Program:
    from looprover.transforms.labmc import labmc
    return labmc(program)


TRANSFORMS: dict[str, Callable[[Program], Program]] = {
    "labmc": _labmc,
}
