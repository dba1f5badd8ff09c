"""`looprover validate --witness W FILE`: check an SV-COMP witness (2.0; 2.1 for termination, in
`validate_termination.py`) without the engine that wrote it.

Why a separate check: a witness is only worth something if it can be checked by something other than its
author. Here no engine runs. The property is the witness's `specification` (unreach-call, no-overflow: the program
gets that property's checks, so an overflow is an assertion like any other; termination; for violation witnesses
also the parts of valid-memsafety, `G valid-deref`, `G valid-free`, `G valid-memtrack`, and `G valid-memcleanup`,
whose run must fail an assertion of that part):
- a violation witness is replayed on the concrete interpreter (`program.interp.run`): each `__VERIFIER_nondet_*`
  call whose closing parenthesis is the next `function_return` waypoint's location returns that waypoint's value
  (any other call returns 0, and the run is then no longer pinned by the witness); the witness is confirmed when
  the run fails an assertion on the target's line having used every waypoint, rejected when a fully pinned run
  ends anywhere else, and unknown otherwise. A run longer than `MAX_RUN_STEPS` that has used every value is
  finished by the original program compiled with gcc (`_compiled`);
- a value that is no C expression at all rejects the witness; C outside the subset is unknown (`unread`);
- a correctness witness's invariants are parsed back (`cexpr.parse`, only the C subset whose meaning is the
  mathematical one), tied to the CFA's loop heads by their C loop, and checked on the cutpoint graph's
  pc-encoded system with fresh solvers: an invariant that fails on a real execution within a few cutpoint
  steps rejects the witness; if the invariants (with "no error") are inductive together, they prove the property
  and the witness is confirmed; otherwise it is not confirmed (unknown), since invariants that are true but not
  inductive alone are no error of the witness. An `acsl_expression` invariant (a quantified one over array
  cells, `cexpr.check_acsl`) is assumed through its instances at the query's index terms and checked at one
  fresh cell (`smt/instances.py`): every query stays quantifier-free, an unsat answer is a proof, and for the
  array property fragment a sat one is a real counterexample to induction.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
import z3

from looprover.deadline import Deadline
from looprover.errors import InputError
from looprover.program.cfa import Program
from looprover.program.interp import InputOracle
from looprover.properties import (
    MEMORY_PARTS, MEMORY_PROPERTIES, NO_OVERFLOW, TERMINATION, UNMODELLED, UNREACH_CALL, VALID_MEMCLEANUP,
    VALID_MEMSAFETY, defines_violation, load_property)
from looprover.smt.instances import at_cell, index_terms, instantiate
from looprover.witness.cexpr import (
    NotC, as_condition, at_any_prev, c_syntax_error, check, check_acsl, parse, to_z3,
)
from looprover.witness.csource import CSource

if TYPE_CHECKING:
    from looprover.jobs import Job

BOUNDED_STEPS = 3          # cutpoint steps from the start in which a failing invariant rejects the witness
MAX_RUN_STEPS = 1_000_000   # interpreted edges of a violation witness's run; a longer one is compiled


@dataclass
class Validation:
    status: str                 # confirmed | rejected | unknown
    reason: str
    kind: str | None = None     # violation | correctness
    loop: int | None = None     # the loop head (CFA location) whose transition invariant failed, where one did

    def line(self) -> str:
        return self.status if self.status == "confirmed" and not self.reason else f"{self.status}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "kind": self.kind}


def read_witness(path: Path) -> list[dict[str, Any]]:
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, list) or not data or not all(isinstance(e, dict) for e in data):
        raise InputError(f"{path}: a witness is a non-empty YAML list of entries")
    return data


SPEC_PROPERTIES = ((re.compile(r"G\s*!\s*call\(\s*reach_error\(\)\s*\)"), UNREACH_CALL),
                   (re.compile(r"G\s*!\s*overflow\b"), NO_OVERFLOW),
                   (re.compile(r"\bF\s*end\b"), TERMINATION),
                   (re.compile(r"\bG\s*valid-(deref|free|memtrack)\b"), VALID_MEMSAFETY),
                   (re.compile(r"\bG\s*valid-memcleanup\b"), VALID_MEMCLEANUP))
MEMORY_PART = re.compile(r"\bG\s*(" + "|".join(map(re.escape, MEMORY_PARTS)) + r")\b")


def spec_property(spec: str) -> str | None:
    """The property a witness's `specification` names (the LTL formula of SV-COMP's property file), or None."""
    return next((name for pattern, name in SPEC_PROPERTIES if pattern.search(spec)), None)


def spec_part(spec: str) -> str | None:
    """The part of a memory property a witness's `specification` names (`valid-deref`, ...), or None. A violation
    witness names one: the part its run violates."""
    parts = set(MEMORY_PART.findall(spec))
    return parts.pop() if len(parts) == 1 else None


def validate(witness: Path, job: Job, data_model: str | None, deadline: Deadline,
             property_given: bool = False) -> Validation:
    """Check `witness` for the job's program. The property is the witness's own (its `specification`), the
    program built with that property's checks; a property given on the command line must be the same one."""
    from looprover.jobs import load_job_program
    entries = read_witness(witness)
    types = {e.get("entry_type") for e in entries}
    if types == {"violation_sequence"}:
        kind = "violation"
    elif types == {"invariant_set"}:
        kind = "correctness"
    else:
        return Validation("unknown", f"unsupported entry types {sorted(map(str, types))}", None)
    task = (entries[0].get("metadata") or {}).get("task") or {}
    src = CSource(job.input, data_model or task.get("data_model") or "ILP32")
    hashes = task.get("input_file_hashes") or {}
    if hashes and src.sha256 not in {str(h).lower() for h in hashes.values()}:
        return Validation("unknown", "the witness is for another file (its SHA-256 differs)", kind)
    spec = str(task.get("specification", ""))
    prop = spec_property(spec) if spec else job.property.name
    if prop is None:
        return Validation("unknown", f"unsupported specification {spec!r}", kind)
    if property_given and prop != job.property.name:
        return Validation("unknown", f"the witness is for {prop}, not for {job.property.name}", kind)
    if prop not in (UNREACH_CALL, NO_OVERFLOW, TERMINATION) and not (kind == "violation" and prop in MEMORY_PROPERTIES):
        return Validation("unknown", f"{kind} witnesses of property {prop} are not validated", kind)
    named = job.property if prop == job.property.name else load_property(prop)
    program = load_job_program(dataclasses.replace(job, property=named, data_model=src.data_model))
    if prop == TERMINATION:
        from looprover.witness.validate_termination import validate_nontermination, validate_termination
        outside = sorted(program.properties() & UNMODELLED.keys())
        # termination does not check assertions: `jobs.verify_job` answers TRUE here only after a safety run on the
        # unmodelled ones, which a termination witness does not carry, so it cannot be confirmed
        if kind == "correctness" and outside:
            return Validation("unknown", f"the program has runs outside looprover's model ({', '.join(outside)})",
                              kind)
        check = validate_termination if kind == "correctness" else validate_nontermination
        return check(entries, program, src, deadline)
    return validate_entries(entries, program, src, deadline, prop)


def validate_entries(entries, program: Program, src: CSource, deadline: Deadline, prop: str = UNREACH_CALL
                     ) -> Validation:
    """`validate` on a witness already read (its entries) for `program`, the C file `src` was built from. For a
    memory property, the run must violate the part the witness's specification names."""
    if {e.get("entry_type") for e in entries} != {"violation_sequence"}:
        return _correctness(entries, program, src, deadline)
    part = None
    if prop in MEMORY_PROPERTIES:
        spec = str((((entries[0].get("metadata") or {}).get("task") or {}).get("specification", "")))
        part = spec_part(spec)
        if part is None:
            return Validation("unknown", f"the specification {spec!r} names no single part of {prop} as violated",
                              "violation")
    return _violation(entries, program, src, deadline, prop, part)


# ------------------------------------------------------------------------------------------ violation
def _waypoints(entries) -> list[dict[str, Any]]:
    out = []
    for e in entries:
        for seg in e.get("content") or []:
            for item in (seg or {}).get("segment") or []:
                out.append((item or {}).get("waypoint") or {})
    return out


_RESULT = re.compile(r"^\s*\\result\s*==\s*(-?\d+)\s*$")


def _pinned_values(wps) -> list[tuple[tuple[int, int | None], int]] | Validation:
    """The `function_return` waypoints' (line, column) and value, in order; or why they cannot be read."""
    pinned: list[tuple[tuple[int, int | None], int]] = []
    for w in wps:
        if w.get("action", "follow") != "follow":
            return Validation("unknown", "avoid waypoints are not supported", "violation")
        if w.get("type") != "function_return":
            return Validation("unknown", f"{w.get('type')} waypoints are not supported", "violation")
        m = _RESULT.match(str((w.get("constraint") or {}).get("value", "")))
        loc = w.get("location") or {}
        if m is None or "line" not in loc:
            return Validation("unknown", "a function_return waypoint without `\\result == value` or a line",
                              "violation")
        pinned.append(((int(loc["line"]), loc.get("column")), int(m.group(1))))
    return pinned


class Pinned(InputOracle):
    """The witness's values for the `__VERIFIER_nondet_*` calls whose closing parenthesis is the next pinned
    location, in order; any other call returns 0 and counts as `free` (the run is then no longer pinned)."""

    def __init__(self, program: Program, src: CSource, pinned: list[tuple[tuple[int, int | None], int]]):
        super().__init__(program)
        self.program, self.src, self.pinned = program, src, pinned
        self.state = {"next": 0, "free": 0, "forced": 0, "uninit": 0}
        self.ends: dict[str, tuple[int, int] | None] = {}

    @property
    def used_all(self) -> bool:
        return self.state["next"] == len(self.pinned)

    def __call__(self, v):
        info = self.program.variables.get(v.name)
        nondet = info is not None and info.kind == "nondet"
        if info is not None and info.kind == "allocated":
            self.state["forced"] += 1       # succeeds (InputOracle), though the witness may mean it to fail
        elif info is not None and info.uninitialised:
            self.state["uninit"] += 1       # uninitialised memory reads 0 (InputOracle), in C any value
        if nondet and v.name not in self.ends:
            self.ends[v.name] = self.src.call_end(info.src) if info.src is not None else None
        end = self.ends.get(v.name)
        if nondet and self.state["next"] < len(self.pinned):
            (line, col), val = self.pinned[self.state["next"]]
            if end is not None and end[0] == line and (col is None or end[1] == col):
                self.state["next"] += 1
                self.inputs = [val]
                self.ipos = 0
                return super().__call__(v)
        if nondet:
            self.state["free"] += 1
        self.inputs, self.ipos = [], 0
        return super().__call__(v)

    def snapshot(self):         # the run tries several enabled edges from one snapshot
        return super().snapshot(), dict(self.state)

    def restore(self, snap) -> None:
        super().restore(snap[0])
        self.state.update(snap[1])


def _violation(entries, program: Program, src: CSource, deadline: Deadline, prop: str, part: str | None = None
               ) -> Validation:
    from looprover.program.interp import run
    wps = _waypoints(entries)
    if not wps or wps[-1].get("type") != "target":
        return Validation("unknown", "the witness does not end in a target waypoint", "violation")
    pinned = _pinned_values(wps[:-1])
    if isinstance(pinned, Validation):
        return pinned
    target_line = int((wps[-1].get("location") or {}).get("line", 0))
    oracle = Pinned(program, src, pinned)
    res = run(program, oracle, max_steps=MAX_RUN_STEPS, stop=deadline.expired)
    used_all = oracle.used_all
    state = oracle.state
    if res.outcome == "steps-exhausted" and used_all and not res.overflowed and prop == UNREACH_CALL:
        return _compiled(src, [v for _, v in pinned], deadline)
    # exact: every choice of the run was the witness's (not: an allocation that may fail made to succeed,
    # uninitialised memory read as 0 where C leaves it open; the format can pin neither)
    exact = used_all and not (state["free"] or state["forced"] or state["uninit"]) and not res.overflowed
    if res.outcome == "violation" and res.violated is not None and not defines_violation(res.violated.prop):
        return Validation("unknown", f"the run following the witness fails an assertion that is no violation of a "
                                     f"property ({res.violated.prop}) at {res.violated.src}", "violation")
    wrong_part = part is not None and res.outcome == "violation" and res.violated is not None \
        and res.violated.prop != part
    if res.outcome == "violation" and used_all and res.violated is not None and res.violated.src is not None \
            and res.violated.src.line == target_line and not res.overflowed and not wrong_part:
        return Validation("confirmed", f"the run following the witness reaches the violation at line {target_line}"
                          + (f" ({part})" if part else ""), "violation")
    if wrong_part:
        what = f"violates {res.violated.prop}, not {part} as the witness says"
    elif res.outcome == "violation":
        where = res.violated.src.line if res.violated is not None and res.violated.src is not None else "?"
        what = f"fails an assertion at line {where}, not at the target's line {target_line}"
    elif res.outcome in ("exit", "blocked"):
        what = "ends without a violation" if res.outcome == "exit" else "is blocked by an assumption"
    else:
        return Validation("unknown", f"the run following the witness stopped: {res.outcome} {res.detail}".strip(),
                          "violation")
    if not used_all:
        what += f" (it used {state['next']} of the witness's {len(pinned)} values)"
    if exact and res.outcome in ("exit", "blocked", "violation") and not wrong_part:
        return Validation("rejected", f"the run following the witness {what}", "violation")
    if wrong_part:          # what the program does after that first error is undefined: no verdict on the witness
        return Validation("unknown", f"the run following the witness {what} first", "violation")
    why = "signed overflow on the way" if res.overflowed else \
        f"{state['free']} input(s) not pinned by the witness" if state["free"] or not used_all else \
        f"{state['forced']} allocation(s) made to succeed, which the witness cannot pin" if state["forced"] else \
        f"{state['uninit']} uninitialised object(s) read as 0, which the witness cannot pin"
    return Validation("unknown", f"the run following the witness {what}; {why}", "violation")


def _compiled(src: CSource, values: list[int], deadline: Deadline) -> Validation:
    """The rest of a run too long for the interpreter, which has used every value of the witness at its call:
    the original program compiled by gcc with the values in order (`harness.run_harness`; later calls return 0,
    one of the values the witness leaves open), run until `reach_error` is entered or the deadline."""
    from looprover.witness.harness import run_harness
    budget = deadline.left() - 0.5
    if budget < 1.0:
        return Validation("unknown", f"the run following the witness is longer than {MAX_RUN_STEPS} edges and "
                                     f"there is no time left to compile and run it", "violation")
    res = run_harness([src.path], values, src.data_model, budget, exact_model=True)
    if res.reached_error:
        return Validation("confirmed", f"the run following the witness uses every value at its call within "
                                       f"{MAX_RUN_STEPS} interpreted edges, and then reaches reach_error "
                                       f"({res.detail})", "violation")
    return Validation("unknown", f"the run following the witness is longer than {MAX_RUN_STEPS} edges; compiled: "
                                 f"{res.detail}", "violation")


# ---------------------------------------------------------------------------------------- correctness
Invariants = dict[int, list[tuple[str, z3.BoolRef]]]      # loop head -> (how it reads, formula over sys.cur)


def _correctness(entries, program: Program, src: CSource, deadline: Deadline) -> Validation:
    from looprover.program.cpg import build_cpg
    from looprover.smt.cpg_system import CPGSystem
    sys = CPGSystem(build_cpg(program), False, deadline)
    items = _loop_invariants(entries, program, src, sys)
    if isinstance(items, Validation):
        return items
    invs: Invariants = {}
    for h, what, f, _ in items:
        invs.setdefault(h, []).append((what, f))
    return _check_invariants(sys, invs, program, deadline)


TRANSITION = "loop_transition_invariant"


def _loop_invariants(entries, program: Program, src: CSource, sys, prev: dict[str, z3.ExprRef] | None = None
                     ) -> list[tuple[int, str, z3.BoolRef, str]] | Validation:
    """Every `loop_invariant` of the witness, in order, as (loop head, how it reads, formula over sys.cur, type);
    or why the witness cannot be read. With `prev` (IR name -> constant for its value at an earlier visit), also
    the `loop_transition_invariant`s (format 2.1), whose `\\at(x, AnyPrev)` is read as prev's constant."""
    heads = {h: src.loop_of_head(program, h) for h in sys.cpg.cutpoints}
    out: list[tuple[int, str, z3.BoolRef, str]] = []
    kinds = ("loop_invariant",) + ((TRANSITION,) if prev is not None else ())
    for e in entries:
        for item in e.get("content") or []:
            inv = (item or {}).get("invariant") or {}
            loc = inv.get("location") or {}
            kind = inv.get("type")
            if kind not in kinds:
                return Validation("unknown", f"{kind} entries are not supported here", "correctness")
            formats = ("c_expression", "ext_c_expression") if kind == TRANSITION else ("c_expression", ACSL)
            fmt = inv.get("format", "c_expression")
            if fmt not in formats:
                return Validation("unknown", f"invariant format {fmt} is not supported", "correctness")
            line, col = loc.get("line"), loc.get("column")
            at = [h for h, lp in heads.items() if lp is not None and lp.line == line and (col is None or lp.col == col)]
            if len(at) != 1:
                return Validation("unknown", f"no single loop head of the program at line {line}", "correctness")
            h = at[0]
            c_to_ir = src.ir_variables_at(program, heads[h])
            types = {c: program.variables[ir].var.type for c, ir in c_to_ir.items()}
            env = {c: _reader(sys.cur[ir], types[c]) for c, ir in c_to_ir.items()}
            if kind == TRANSITION:
                types.update({at_any_prev(c): t for c, t in types.items()})
                env.update({at_any_prev(c): prev[ir] for c, ir in c_to_ir.items()})
            text = str(inv.get("value", ""))
            try:
                node = parse(text)
                (check_acsl if fmt == ACSL else check)(node, types)
            except NotC as exc:
                if fmt == ACSL:
                    return Validation("unknown", f"invariant {text!r} at line {line} is outside the ACSL subset "
                                                 f"looprover reads ({exc})", "correctness")
                return unread(text, f"invariant {text!r} at line {line}", exc, "correctness")
            out.append((h, f"{text!r} at line {line}", as_condition(to_z3(node, env)), kind))
    return out


ACSL = "acsl_expression"


def _reader(const: z3.ExprRef, t) -> Any:
    """What a C name reads in `cexpr.to_z3`: the state constant, or for an array the reading of its cells."""
    from looprover.program.expr import ArrayType
    from looprover.smt.encode import cell_read
    if isinstance(t, ArrayType):
        return lambda i: cell_read(const, i, t.elem, False)
    return const


def unread(text: str, what: str, exc: NotC, kind: str) -> Validation:
    """A witness's expression `parse` does not read: rejected when it is no C expression at all (an `\\at(x,
    AnyPrev)` read as a name), unknown when it is C outside the subset looprover reads exactly."""
    why = c_syntax_error(_AT.sub("__lr_at", text))
    if why is not None:
        return Validation("rejected", f"{what} is not a C expression ({why})", kind)
    return Validation("unknown", f"{what} is outside the C subset looprover reads exactly ({exc})", kind)


_AT = re.compile(r"\\at\s*\([^()]*\)")


def _fails_early(sys, invs: Invariants, deadline: Deadline) -> tuple[int, int, str] | None:
    """(head, index, steps) of an invariant that fails on an execution within `BOUNDED_STEPS` cutpoint steps from
    the start, or None."""
    ts = sys.ts
    for j in range(1, BOUNDED_STEPS + 1):
        s = sys.enc.solver(deadline)
        s.add(ts.at(ts.init, 0), *[ts.trans_at(i) for i in range(j)])
        for h, fs in invs.items():
            for i, (_, f) in enumerate(fs):
                s.push()
                s.add(ts.at(z3.And(sys.pc == sys.pc_id[h], z3.Not(f)), j))
                r = s.check()
                s.pop()
                if r == z3.sat:
                    return h, i, j
    return None


def _guarded(sys, invs: Invariants, exclude_error: bool = True) -> z3.BoolRef:
    """The invariants as one state formula of the pc-encoded system, "not at the error" included unless
    `exclude_error` is False (the state invariants of a termination witness)."""
    from looprover.program.cpg import ERROR
    not_error = [sys.pc != sys.pc_id[ERROR]] if exclude_error and ERROR in sys.pc_id else []
    return z3.And([sys.valid_pc(), *not_error] +
                  [z3.Implies(sys.pc == sys.pc_id[h], f) for h, fs in invs.items() for _, f in fs])


def _check_invariants(sys, invs: Invariants, program: Program, deadline: Deadline,
                      exclude_error: bool = True) -> Validation:
    """Confirmed when the invariants are inductive and (unless `exclude_error` is False) exclude the error."""
    from looprover.program.cpg import ERROR
    if not invs:
        return Validation("unknown", "the witness has no invariants", "correctness")
    ts = sys.ts
    # a failing invariant on a real execution (a few cutpoint steps from the start) rejects the witness
    early = _fails_early(sys, invs, deadline)
    if early is not None:
        h, i, j = early
        return Validation("rejected", f"invariant {invs[h][i][0]} fails on an execution that reaches the loop "
                                      f"({j} cutpoint step(s) from the start)", "correctness")
    inv = _guarded(sys, invs, exclude_error)
    nxt = at_cell(z3.substitute(inv, *zip(ts.state, ts.next)), z3.FreshInt("cell"))
    inv = instantiate(inv, index_terms([inv, ts.trans, nxt]))
    s = sys.enc.solver(deadline)
    s.add(inv, ts.trans, z3.Not(nxt), *sys.unsigned_ranges())    # the writer leaves these facts out
    r = s.check()
    if r == z3.unsat:
        return Validation("confirmed", f"{sum(map(len, invs.values()))} invariant(s) inductive on the cutpoint graph "
                                       f"and they exclude the error", "correctness")
    if r == z3.sat:
        m = s.model()
        a = sys.node_of.get(m.eval(sys.pc, model_completion=True).as_long())
        b = sys.node_of.get(m.eval(sys.pc_next, model_completion=True).as_long())
        why = "do not exclude the error from " if b == ERROR else "are not inductive from "
        return Validation("unknown", f"not confirmed: the invariants {why}{program.loc_label(a)}"
                                     + ("" if b == ERROR else f" to {program.loc_label(b)}"), "correctness")
    return Validation("unknown", f"not confirmed: solver answered unknown ({s.reason_unknown()})", "correctness")


def inductive_subset(entries, program: Program, src: CSource, deadline: Deadline) -> list[bool] | Validation:
    """Which of the witness's `loop_invariant`s (in order) to keep: the largest set that no execution within
    `BOUNDED_STEPS` cutpoint steps refutes and that is inductive by the very check `validate` makes (Houdini:
    drop every invariant the set does not carry over one step, until none is dropped), less those the others
    at the same loop imply. For a writer whose
    invariants are candidates rather than a proof: what it keeps, `validate` does not reject, and confirms when
    the kept ones exclude the error."""
    from looprover.program.cpg import build_cpg
    from looprover.smt.cpg_system import CPGSystem
    sys = CPGSystem(build_cpg(program), False, deadline)
    items = _loop_invariants(entries, program, src, sys)
    if isinstance(items, Validation):
        return items
    from looprover.deadline import OutOfTime
    from looprover.errors import GiveUp
    from looprover.program.cpg import ERROR
    from looprover.smt.houdini import consecutive, unrefuted
    ts = sys.ts
    nxt = list(zip(ts.state, ts.next))
    # a quantified invariant is checked at one fresh cell and assumed through its instances (`_check_invariants`)
    cell = z3.FreshInt("cell")
    pre = [z3.Implies(sys.pc == sys.pc_id[h], f) for h, _, f, _ in items]
    post = [at_cell(z3.Implies(sys.pc_next == sys.pc_id[h], z3.substitute(f, *nxt)), cell) for h, _, f, _ in items]
    refutable = [at_cell(p, cell) for p in pre]
    assumed = [instantiate(p, index_terms([*pre, ts.trans, *post])) for p in pre]
    alive = list(range(len(items)))
    # refuted on an execution within BOUNDED_STEPS (each on its own, as `_fails_early` checks them), then
    # Houdini's consecution under all kept ones (`smt/houdini.py`)
    try:
        for j in range(1, BOUNDED_STEPS + 1):
            s = sys.enc.solver(deadline).z3
            s.add(ts.at(ts.init, 0), *[ts.trans_at(i) for i in range(j)])
            at_j = list(zip(ts.state, ts.step_vars(j)))
            alive = unrefuted(s, [z3.substitute(p, *at_j) for p in refutable], alive, deadline)
        alive = consecutive([sys.valid_pc(), ts.trans, *sys.unsigned_ranges(), sys.pc != sys.pc_id[ERROR]],
                            assumed, post, alive, deadline, lambda: sys.enc.solver().z3)
    except (OutOfTime, GiveUp) as exc:
        return Validation("unknown", f"the solver could not decide which invariants are inductive "
                                     f"({exc or 'out of time'})", "correctness")
    keep = [i in alive for i in range(len(items))]
    # then the ones the others at their loop imply: an equivalent set, so just as inductive, and shorter
    for k in reversed(range(len(items))):
        h, _, f, _ = items[k]
        others = [g for i, (hh, _, g, _) in enumerate(items) if keep[i] and i != k and hh == h]
        if keep[k] and others:
            s = sys.enc.solver(deadline)
            g = at_cell(f, cell)
            s.add(*(instantiate(o, index_terms([*others, g])) for o in others), z3.Not(g))
            if s.check() == z3.unsat:
                keep[k] = False
    return keep

