"""The `labmc` engine: the LABMC abstraction (`transforms/labmc.py`), then BMC of the bounded abstract program.

An instance of "transform, then engine" (`engines/transformed.py`): the abstraction over-approximates, so BMC's
TRUE on it is a TRUE; a counterexample of the abstraction is first tried as a test of the original program on
the same inputs, then confirmed (or refuted) by BMC of the original with the time left. BMC of the abstraction
gets the largest abstract-loop bound M as its bound: every abstract loop is exhausted there, so BMC decides or
reports why it could not.
"""
from __future__ import annotations

from looprover.engines.bmc import BMC
from looprover.engines.transformed import TransformThenEngine
from looprover.transforms.labmc import LabmcOptions, LABMCTransform


class LABMC(TransformThenEngine):
    name = "labmc"
    summary = "loop abstraction (output abstraction, abstract acceleration, induction), then BMC"
    Settings = LabmcOptions
    transform = LABMCTransform()
    inner = BMC()
    confirm = BMC()


PROVED = LABMC().proved
