"""Loop invariants of a closed program read off its only execution.

Why: `execute` proves a closed program (one that reads no input) by running it, so its TRUE carries no invariant a
correctness witness could print, and the loops of such programs (a million iterations in phases: `x++` until
x = 50000, then `x++, y++`) defeat the domains' candidates and Spacer alike. But a closed program's reachable
states at a loop head are exactly the states its one run visits there, and that set is inductive by construction:
printed exactly, it is an invariant the validator checks on its own, without trusting the run.

How: the compiled run of `native` (the program printed by `emit_c`), with a call at each loop head that records
the visit's state. One phase of a loop adds the same amount to every variable per iteration, so the observer
(`OBSERVER`, C) compresses the visits into arithmetic progressions as they happen -- 10^8 visits become a few
lines. Each progression is printed exactly: the variables that stay constant, the others' affine relation to a
pivot variable, the pivot's range and stride; a head's invariant is the disjunction over its progressions,
restricted to the variables C can name at the loop (a projection: still every reachable state). A head whose
visits do not compress into at most `MAX_PROGRESSIONS` progressions (the inner loops of a nest, geometric
updates) gets each variable's range over the run instead, as candidates the writer's Houdini keeps or drops (in a
nest of counting loops, the other heads' exact sets make them inductive). A run that does not end in the time
given, or a variable that wraps within a progression: no invariants, and the writer falls back to its other
sources.
"""
from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import z3

from looprover.deadline import Deadline
from looprover.program.cfa import Program
from looprover.program.expr import BoolType, IntType

MAX_PROGRESSIONS = 64     # per loop head, as the run records them (before projection and merging)

# The observer: one translation unit of its own beside `native.RUNTIME` (whose headers it uses). A head's open
# progression is (start, last, delta, count); a visit that does not continue it closes it (a line `P head count
# start... last...`) and starts the next. A head with more than LR_MAX progressions gives them up (`A head`) and
# keeps only each variable's range over its visits (`B head min... max...`, written for every head at the end).
# Unsigned arithmetic: the deltas of 64-bit values never overflow.
OBSERVER = r"""
static unsigned long long __lr_start[LR_HEADS][LR_VARS], __lr_last[LR_HEADS][LR_VARS], __lr_delta[LR_HEADS][LR_VARS];
static long long __lr_min[LR_HEADS][LR_VARS], __lr_max[LR_HEADS][LR_VARS];
static long long __lr_count[LR_HEADS], __lr_visits[LR_HEADS]; static long __lr_closed[LR_HEADS]; static FILE *__lr_out;
static void __lr_open(void) {
  if (!__lr_out) { const char *p = getenv("LR_OBSERVE"); __lr_out = p ? fopen(p, "w") : 0; if (!__lr_out) _exit(2); }
}
static void __lr_close(int k) {
  __lr_open();
  if (++__lr_closed[k] > LR_MAX) { fprintf(__lr_out, "A %d\n", k); __lr_closed[k] = -1; __lr_count[k] = 0; return; }
  fprintf(__lr_out, "P %d %lld", k, __lr_count[k]);
  for (int i = 0; i < LR_NVARS; i++) fprintf(__lr_out, " %lld", (long long)__lr_start[k][i]);
  for (int i = 0; i < LR_NVARS; i++) fprintf(__lr_out, " %lld", (long long)__lr_last[k][i]);
  fputc('\n', __lr_out);
}
void __lr_observe(int k, const long long *v) {
  for (int i = 0; i < LR_NVARS; i++) {
    if (!__lr_visits[k] || v[i] < __lr_min[k][i]) __lr_min[k][i] = v[i];
    if (!__lr_visits[k] || v[i] > __lr_max[k][i]) __lr_max[k][i] = v[i];
  }
  __lr_visits[k]++;
  if (__lr_closed[k] < 0) return;
  long long c = __lr_count[k];
  if (c >= 2) {
    int i = 0;
    while (i < LR_NVARS && (unsigned long long)v[i] - __lr_last[k][i] == __lr_delta[k][i]) i++;
    if (i == LR_NVARS) {
      for (i = 0; i < LR_NVARS; i++) __lr_last[k][i] = (unsigned long long)v[i];
      __lr_count[k] = c + 1;
      return;
    }
    __lr_close(k);
    if (__lr_closed[k] < 0) return;
    c = 0;
  }
  for (int i = 0; i < LR_NVARS; i++) {
    if (c == 1) __lr_delta[k][i] = (unsigned long long)v[i] - __lr_last[k][i];
    else __lr_start[k][i] = (unsigned long long)v[i];
    __lr_last[k][i] = (unsigned long long)v[i];
  }
  __lr_count[k] = c + 1;
}
__attribute__((destructor)) static void __lr_flush(void) {
  __lr_open();
  for (int k = 0; k < LR_HEADS; k++) {
    if (__lr_closed[k] >= 0 && __lr_count[k]) __lr_close(k);
    if (!__lr_visits[k]) continue;
    fprintf(__lr_out, "B %d", k);
    for (int i = 0; i < LR_NVARS; i++) fprintf(__lr_out, " %lld", __lr_min[k][i]);
    for (int i = 0; i < LR_NVARS; i++) fprintf(__lr_out, " %lld", __lr_max[k][i]);
    fputc('\n', __lr_out);
  }
  fclose(__lr_out);
}
"""


@dataclass(frozen=True)
class Progression:
    """Visits of one loop head: `count` states start, start + d, ..., last (d = (last - start) / (count - 1))."""
    count: int
    start: tuple[int, ...]
    last: tuple[int, ...]

    def delta(self) -> tuple[int, ...]:
        return tuple((b - a) // (self.count - 1) for a, b in zip(self.start, self.last)) if self.count > 1 \
            else (0,) * len(self.start)

    def exact(self) -> bool:
        """Whether start and last lie on one progression of `count` integer points (no value wrapped in it)."""
        return self.count == 1 or all((b - a) % (self.count - 1) == 0 for a, b in zip(self.start, self.last))

    def project(self, keep: list[int]) -> "Progression":
        start, last = tuple(self.start[i] for i in keep), tuple(self.last[i] for i in keep)
        return Progression(self.count if start != last else 1, start, last)


def observed_variables(program: Program) -> list[str]:
    """The variables the observer records: the scalars (the arrays' contents are not part of the invariant)."""
    return [n for n, info in program.variables.items()
            if isinstance(info.var.type, BoolType) or (isinstance(info.var.type, IntType) and info.var.type.bits)]


def _decode(value: int, t) -> int:
    """A value the observer printed as `long long`, as a value of the variable's type."""
    if _unsigned64(t):
        return value % (1 << 64)
    return value


@dataclass
class Visits:
    """What the run recorded at one loop head: its progressions in the order of the run (None when there were
    more than `MAX_PROGRESSIONS`), and each variable's least and greatest value there."""
    progressions: list[Progression] | None = field(default_factory=list)
    low: tuple[int, ...] = ()
    high: tuple[int, ...] = ()


def observe(program: Program, heads: list[int], budget: float) -> tuple[list[str], dict[int, Visits]] | str:
    """Run the closed `program` compiled, recording its visits of `heads`: the recorded variables and what each
    head saw (a head never visited is absent); or why not."""
    from looprover.program.emit_c import emit_c
    from looprover.evidence import native
    why = native.why_not(program) or native.why_open(program)
    if why is not None:
        return f"no compiled run: {why}"
    names = observed_variables(program)
    types = [program.variables[n].var.type for n in names]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="looprover-observe-") as tmp:
        defs = "".join(f"#define {k} {v}\n" for k, v in (("LR_HEADS", len(heads)), ("LR_NVARS", len(names)),
                                                          ("LR_VARS", max(len(names), 1)),
                                                          ("LR_MAX", MAX_PROGRESSIONS)))
        exe = native.build(emit_c(program, observe={h: names for h in heads}), Path(tmp), budget,
                           extra=defs + OBSERVER)
        if exe is None:
            return "the instrumented program did not compile"
        out = Path(tmp) / "visits"
        left = budget - (time.monotonic() - t0)
        if left <= 0.05:
            return "no time left for the instrumented run"
        why = native.run_executable(exe, {"LR_OBSERVE": str(out)}, left)
        if why != native.ENDED_WITHOUT_VIOLATION.format(code=0):
            return f"the instrumented run did not end normally: {why or 'it reached reach_error'}"
        if not out.exists():
            return "the instrumented run recorded nothing"
        got: dict[int, Visits] = {}
        n = len(names)
        for line in out.read_text().splitlines():
            kind, k, *rest = line.split()
            vals = [int(x) for x in rest]
            v = got.setdefault(heads[int(k)], Visits())
            if kind == "A":
                v.progressions = None
            elif kind == "P" and v.progressions is not None:
                v.progressions.append(Progression(vals[0], tuple(_decode(x, t) for x, t in zip(vals[1:n + 1], types)),
                                                  tuple(_decode(x, t) for x, t in zip(vals[n + 1:], types))))
            elif kind == "B":
                v.low, v.high = tuple(vals[:n]), tuple(vals[n:])
    return names, got


def _joined(a: Progression, b: Progression) -> Progression | None:
    """`a` followed by `b` as one progression, if they are one."""
    step = tuple(y - x for x, y in zip(a.last, b.start))
    if not any(step):
        return None
    if a.count > 1 and step != a.delta():
        return None
    if b.count > 1 and step != b.delta():
        return None
    return Progression(a.count + b.count, a.start, b.last)


def _merged(progressions: list[Progression]) -> list[Progression]:
    """Consecutive progressions that continue one another as one; repeats dropped."""
    out: list[Progression] = []
    for p in progressions:
        joined = _joined(out[-1], p) if out else None
        if joined is not None:
            out[-1] = joined
        elif p not in out:
            out.append(p)
    return out


def _scaled(c: int, t: z3.ArithRef) -> z3.ArithRef:
    """c * t, printed without a factor 1."""
    return t if c == 1 else -t if c == -1 else c * t


def _offset(x: z3.ArithRef, s: int) -> z3.ArithRef:
    """x - s, printed without a term 0."""
    return x if s == 0 else x - s if s > 0 else x + (-s)


def progression_formula(p: Progression, terms: list[z3.ExprRef]) -> z3.BoolRef:
    """Exactly the states of `p` over `terms` (z3 constants, Int or Bool, in the order of p's values)."""
    def point(values: tuple[int, ...]) -> z3.BoolRef:
        return z3.And(*[t == (z3.BoolVal(v != 0) if z3.is_bool(t) else z3.IntVal(v)) for t, v in zip(terms, values)])
    d = p.delta()
    if p.count == 1 or not any(d):
        return point(p.start)
    if p.count == 2 and any(z3.is_bool(t) and di for t, di in zip(terms, d)):
        return z3.Or(point(p.start), point(p.last))
    pv = next(i for i, di in enumerate(d) if di)
    xp, sp, dp = terms[pv], p.start[pv], d[pv]
    parts = [z3.And(xp >= min(sp, p.last[pv]), xp <= max(sp, p.last[pv]))]
    if abs(dp) > 1:
        parts.append(_offset(xp, sp) % abs(dp) == 0)
    for i, (t, s, di) in enumerate(zip(terms, p.start, d)):
        if i == pv:
            continue
        if di == 0:
            parts.append(t == (z3.BoolVal(s != 0) if z3.is_bool(t) else z3.IntVal(s)))
            continue
        g = math.gcd(dp, di)
        a, b = dp // g, di // g
        if a < 0:
            a, b = -a, -b
        parts.append(_scaled(a, t) == _offset(_scaled(b, xp), b * sp - a * s))   # a (t - s) = b (xp - sp)
    return z3.And(*parts)


def closed_run_invariants(program: Program, src, deadline: Deadline | None
                          ) -> tuple[dict[int | None, list[z3.BoolRef]], dict[str, str]] | str:
    """Per C loop head, the disjunction of the progressions its visits make in the program's only run, over the
    variables C names at the loop (`proof_invariants`' form); at a head with too many, each variable's range
    there, as separate candidates; or why there are none."""
    from looprover.program.cpg import build_cpg
    heads = [h for h in build_cpg(program).cutpoints if src.loop_of_head(program, h) is not None]
    if not heads:
        return "no loop head of the run has a C loop"
    # half of what is left: the writer's other sources get the rest when the run does not end in time
    budget = 30.0 if deadline is None else deadline.left() / 2
    got = observe(program, heads, budget)
    if isinstance(got, str):
        return got
    names, visits = got
    consts = {n: z3.Bool(n) if isinstance(program.variables[n].var.type, BoolType) else z3.Int(n) for n in names}
    out: dict[int | None, list[z3.BoolRef]] = {}
    for h in heads:
        visible = set(src.ir_variables_at(program, src.loop_of_head(program, h)).values())
        keep = [i for i, n in enumerate(names) if n in visible]
        terms = [consts[names[i]] for i in keep]
        seen = visits.get(h)
        if seen is None:
            out[h] = [z3.BoolVal(False)]          # never visited: no state reaches it
        elif seen.progressions is None:
            # the ranges (not for 64-bit unsigned variables, whose values the observer compares as signed)
            out[h] = [f for i, t in zip(keep, terms) if not z3.is_bool(t) and
                      not _unsigned64(program.variables[names[i]].var.type)
                      for f in (t >= seen.low[i], t <= seen.high[i])]
        elif terms:
            if not all(p.exact() for p in seen.progressions):
                return f"a value wrapped around within a phase of loop {program.loc_label(h)}"
            disjuncts = [progression_formula(p, terms) for p in _merged([p.project(keep) for p in seen.progressions])]
            out[h] = [disjuncts[0] if len(disjuncts) == 1 else z3.Or(*disjuncts)]
    return out, {n: n for n in names}


def _unsigned64(t) -> bool:
    return isinstance(t, IntType) and not t.signed and t.bits == 64
