"""The `accel` engine: under-approximating acceleration (`transforms/accelerate.py`), then BMC of the result.

An instance of "transform, then engine" (`engines/transformed.py`). BMC unwinds the accelerated program with
doubling bounds until the time is up: one accelerated step stands for any number of iterations of its path,
so a shallow unwinding reaches deep bugs. The transform under-approximates, so only counterexamples carry
over, once expanded to the original program and replayed (or run) on it; BMC's TRUE on the accelerated
program proves nothing, and the engine declares FALSE only. Branches whose guard keeps a quantifier come in a
second stage (`stages`). No confirming engine: the expansion is exact, a
counterexample that does not replay is a bug in the transform, not a hint.

A program with an array it writes and never reads (the output of a copy loop, whose bounds the assertions check
but whose contents nothing reads) has its loops accelerated on its slice to the assertions (`OnSlice`), which
drops those writes: otherwise each becomes an array fill, a z3 lambda, in every accelerated branch, and BMC's
queries on it ran from one second to over a minute on the same program, as z3's instantiations happened to go
(Verisec mime_fromqp at BASE_SZ 1000). A counterexample of the slice is replayed on the program; one that does
not replay (a path a dropped branch condition opened), or a run too long to run again in the time left, leaves
that time to acceleration of the program itself.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from looprover.engines.base import Run, Task
from looprover.engines.bmc import BMC
from looprover.engines.transformed import OnSlice, TransformThenEngine
from looprover.program.cfa import Assert, Assign, Assume, Program
from looprover.program.expr import ArrayType, Store, free_vars
from looprover.transforms.accelerate import AccelerateTransform, AccelOptions
from looprover.transforms.base import Transformed
from looprover.verdict import Verdict

TRANSFORM_SHARE = 0.4     # of the run's time, at most, for finding paths and closed forms


class FalsifyingBMC(BMC):
    """BMC that looks for violations only: the accelerated program under-approximates, so its unsat answers
    prove nothing, and its quantified guards may be encoded one way (much cheaper for z3)."""
    falsify_only = True


class Accel(TransformThenEngine):
    name = "accel"
    summary = "under-approximating loop acceleration (closed forms of loop paths), then BMC: deep bugs only"
    Settings = AccelOptions
    transform = AccelerateTransform()
    inner = FalsifyingBMC()
    confirm = None
    result = "accelerated program"
    slice_first: ClassVar[bool] = True

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        if not self.slice_first or not write_only_arrays(program):
            return super().solve(program, task, run)
        return OnSlice(_AccelOfProgram()).solve(program, task, run)

    def stages(self, t: Transformed) -> list[tuple[Transformed, float]]:
        """Branches whose guard keeps a quantifier can make every BMC query slow (z3 instantiating it): BMC
        first gets half the time on the program without them, then the rest on the whole program."""
        costly = {e for e, acc in t.back.accels.items() if acc.quantified}
        if not costly:
            return [(t, 1.0)]
        cheaper = dataclasses.replace(t, program=t.program.with_edges(e for e in t.program.edges if e not in costly))
        return [(cheaper, 0.5), (t, 1.0)]

    def settings(self, run: Run) -> Any:
        """The transform gets a share of the run's time (its solver queries are capped per query too)."""
        own: AccelOptions = super().settings(run)
        left = run.deadline.left()
        return dataclasses.replace(own, deadline=run.deadline.cap(left * TRANSFORM_SHARE))


def write_only_arrays(program: Program) -> set[str]:
    """The arrays `program` writes and never reads: `a = Store(a, i, v)` reads the indices and values it
    stores, not a's cells."""
    written: set[str] = set()
    read: set[str] = set()
    for e in program.edges:
        for st in e.stmts:
            exprs = [st.rhs] if isinstance(st, Assign) else [st.cond] if isinstance(st, (Assume, Assert)) else []
            if isinstance(st, Assign) and isinstance(st.lhs.type, ArrayType):
                written.add(st.lhs.name)
                rhs, exprs = st.rhs, []
                while isinstance(rhs, Store):
                    exprs += [rhs.index, rhs.value]
                    rhs = rhs.array
                if rhs != st.lhs:
                    exprs.append(rhs)
            for x in exprs:
                read |= {v.name for v in free_vars(x) if isinstance(v.type, ArrayType)}
    return written - read


class _AccelOfProgram(Accel):
    """Acceleration of the program it is given, as is: of the slice, and of the program where the slice's
    counterexample did not replay."""
    slice_first = False
