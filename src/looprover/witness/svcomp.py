"""SV-COMP verification witnesses (YAML): what `verify --witness FILE` writes, format 2.0 for unreach-call and
no-overflow, violation witnesses for valid-memsafety and valid-memcleanup (termination's 2.1 witnesses:
`termination_witness.py`).

Why: other tools check a verifier's answers through witnesses. A FALSE gets a violation witness, one
`violation_sequence` entry whose segments pin every nondet value (a `function_return` waypoint at the closing
parenthesis of each `__VERIFIER_nondet_*` call, `\\result == v`) and end in a `target` waypoint at the C
statement where the property fails; for memory safety its `specification` is the part the run violates (`G
valid-deref` at the access, `G valid-free` at the free, `G valid-memtrack` where the last pointer to an object is
lost, `G valid-memcleanup` where the run ends), as SV-COMP's validators expect. SV-COMP validates no correctness
witnesses for memory safety, so its TRUEs get none. A TRUE gets a correctness witness, one `invariant_set` entry with a
`loop_invariant` per C loop (at its keyword), when the engine's proof holds state invariants at loop heads
(k-induction's invariants and the certificates of labmc and summarize, Spacer's cutpoint invariants, TPA's
state invariant when it derived one). The invariants are printed in the C subset of `cexpr.py`, over the C
variables declared at the loop (`csource.py`); a conjunct that cannot be printed there is left out and counted
in the note. Every engine's printed conjuncts go through the validator's own checks (`validate.inductive_subset`),
and the witness is written only when `validate` confirms what is left. A TRUE without such invariants (bmc,
execute, TPA without a state invariant, k-induction with k > 1) falls back to the proof's invariants with the
abstract domains' candidates, then to Spacer's invariants, checked the same way. Every witness, violation
witnesses included, is confirmed by `validate` before it is written. Horn-clause input gets no witness, and the
note says why. The format's rules were taken from its public documentation (sosy-lab sv-witnesses, format 2.0);
`tests/witness/witness-2.0.schema.json` is our schema of it.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
import z3
from z3.z3util import get_vars

from looprover.deadline import Deadline
from looprover.program.cfa import Assert, Havoc, Program, SrcLoc
from looprover.program.expr import IntType
from looprover.smt.terms import conjuncts
from looprover.properties import MEMORY_PARTS, MEMORY_PROPERTIES, NO_OVERFLOW, TERMINATION, UNREACH_CALL
from looprover.verdict import Counterexample, Status, Verdict
from looprover.witness.cexpr import NotC, acsl_from_z3, expression_format, from_z3
from looprover.witness.csource import CSource

FORMAT_VERSION = "2.0"
SPECIFICATIONS = {UNREACH_CALL: "G ! call(reach_error())", NO_OVERFLOW: "G ! overflow", TERMINATION: "F end"}


@dataclass
class Witness:
    """A witness to write (`text`, None when there is none) and what to tell the user about it."""
    text: str | None
    kind: str | None          # "violation" or "correctness"
    note: str


def _producer_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("looprover")
    except PackageNotFoundError:
        return "unknown"


def metadata(src: CSource, input_name: str, prop: str, data_model: str, spec: str | None = None
             ) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "uuid": str(uuid.uuid4()),
        "creation_time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "producer": {"name": "looprover", "version": _producer_version()},
        "task": {"input_files": [input_name], "input_file_hashes": {input_name: src.sha256},
                 "specification": spec or SPECIFICATIONS[prop], "data_model": data_model, "language": "C"},
    }


def _location(src: CSource, input_name: str, line: int, col: int) -> dict[str, Any]:
    loc: dict[str, Any] = {"file_name": input_name, "line": line, "column": col}
    fn = src.function_at(line)
    if fn is not None:
        loc["function"] = fn
    return loc


def dump(entries: list[dict[str, Any]]) -> str:
    return yaml.safe_dump(entries, sort_keys=False, default_flow_style=False, width=1000)


# ------------------------------------------------------------------------------------------ violation
def edge_input_sites(edges: list, count: int, program: Program) -> list[SrcLoc | None] | None:
    """The call site of each nondet havoc on `edges` ((edge, its source location) pairs), or None unless there
    are `count` of them."""
    sites: list[SrcLoc | None] = []
    for edge, where in edges:
        for s in edge.stmts:
            if isinstance(s, Havoc):
                for v in s.vars:
                    info = program.variables.get(v.name)
                    if info is not None and info.kind == "nondet":
                        sites.append(s.src or where)
    return sites if len(sites) == count else None


def input_segments(values: list, sites: list[SrcLoc | None], src: CSource, input_name: str
                   ) -> list[dict[str, Any]] | str:
    """One segment per input: a `function_return` waypoint with its value at the end of its call; or why not."""
    segments = []
    for value, site in zip(values, sites):
        end = src.call_end(site) if site is not None else None
        if end is None:
            return f"no call found in the C text for input {value} (at {site})"
        segments.append({"segment": [{"waypoint": {
            "type": "function_return", "action": "follow",
            "constraint": {"value": f"\\result == {int(value)}", "format": "acsl_expression"},
            "location": _location(src, input_name, *end)}}]})
    return segments


def _target(cex: Counterexample) -> SrcLoc | None:
    if cex.violated_at is not None:
        return cex.violated_at
    if cex.steps:
        for s in cex.steps[-1].edge.stmts:
            if isinstance(s, Assert) and s.src is not None:
                return s.src
    return None


def violation_witness(cex: Counterexample, program: Program, src: CSource, input_name: str, prop: str,
                      data_model: str) -> Witness:
    values = list(cex.inputs)
    if getattr(cex, "omitted", 0) and not values and getattr(cex, "plan", None):
        values = _kept_inputs(cex, program)
        if values is None:
            # a deep run keeps its first and last edges: its witness lists its inputs when they are all read there
            return Witness(None, None, f"no violation witness: the run ({getattr(cex, 'length', 0)} edges) reads "
                                       f"inputs in its omitted middle part or starts from uninitialised values")
    sites = edge_input_sites([(step.edge, step.src) for step in cex.steps], len(values), program)
    if sites is None:
        return Witness(None, None, "no violation witness: the trace's input calls do not line up with its inputs")
    segments = input_segments(values, sites, src, input_name)
    if isinstance(segments, str):
        return Witness(None, None, f"no violation witness: {segments}")
    target = _target(cex)
    if target is None or not src.same_file(target.file):
        return Witness(None, None, "no violation witness: the violation has no location in the C file")
    spec = None
    if prop in MEMORY_PROPERTIES:
        part = getattr(cex.violated, "prop", None)
        if part not in MEMORY_PARTS:
            return Witness(None, None, f"no violation witness: the run violates no part of {prop} ({part})")
        spec = MEMORY_PARTS[part]
    segments.append({"segment": [{"waypoint": {
        "type": "target", "action": "follow",
        "location": _location(src, input_name, target.line, max(target.col, 1))}}]})
    entry = {"entry_type": "violation_sequence", "metadata": metadata(src, input_name, prop, data_model, spec),
             "content": segments}
    return Witness(dump([entry]), "violation",
                   f"violation witness: {len(values)} input value(s), target at line {target.line}")


def _kept_inputs(cex: Any, program: Program) -> list | None:
    """The nondet inputs of a deep run from its havoc plan, when every havoc of the run is on its kept first and
    last edges and no variable starts uninitialised (the plan then is exactly those edges' havoc values)."""
    from looprover.evidence.deep import PlanSeq
    from looprover.evidence.native import initial_plan
    if initial_plan(program, dict(cex.initial)):
        return None
    havocked = [v for step in cex.steps for st in step.edge.stmts if isinstance(st, Havoc) for v in st.vars]
    plan = PlanSeq(cex.plan)
    if len(plan) != len(havocked):
        return None
    return [plan[i] for i, v in enumerate(havocked)
            if (info := program.variables.get(v.name)) is not None and info.kind == "nondet"]


# ---------------------------------------------------------------------------------------- correctness
def proof_invariants(proof: Any, program: Program, deadline: Deadline | None = None
                     ) -> tuple[dict[int | None, list[z3.BoolRef]], dict[str, str]] | str:
    """The proof's state invariants as z3 formulas per CFA location (None: every location) and the map from
    the z3 constants' names to IR variable names; or why the proof has none. The writer checks them before
    printing (`_checked`)."""
    from looprover.smt.encode import Encoder
    from looprover.evidence.proofs import CutpointInvariantProof, KInductiveProof
    sorts = Encoder(program, False)
    consts = {name: z3.Const(name, sorts.sort(info.var.type)) for name, info in program.variables.items()}
    from looprover.evidence.hints import LoopInvariantHints
    if isinstance(proof, (KInductiveProof, LoopInvariantHints)):
        enc = Encoder(program, False)
        out: dict[int | None, list[z3.BoolRef]] = {}
        for c in (proof.invariants if isinstance(proof, KInductiveProof) else proof.atoms):
            try:
                out.setdefault(c.node, []).append(enc.expr(c.atom, consts))
            except Exception:  # noqa: BLE001 -- an atom the integer encoding cannot take: left out
                continue
        return out, {n: n for n in consts}
    if isinstance(proof, CutpointInvariantProof):
        from looprover.smt.cpg_system import state_name
        from looprover.smt.text import from_text
        return ({n: [from_text(t)] for n, t in proof.invariants},
                {state_name(n): n for n in program.variables})
    from looprover.tpa.proof import TransitionInvariantProof
    if isinstance(proof, TransitionInvariantProof) and proof.state_invariant_text is not None:
        # TPA's state invariant (checked by the engine; `validate` checks it again): over the loop's state, or
        # over pc and the state of the pc-encoded system, split here by cutpoint
        from looprover.program.cpg import build_cpg
        from looprover.smt.cpg_system import state_name
        from looprover.smt.text import from_text
        f = from_text(proof.state_invariant_text)
        names = {state_name(n): n for n in program.variables}
        if proof.head is not None:
            return {proof.head: [f]}, names
        pc = z3.Int(".pc")
        nodes = build_cpg(program).nodes
        return {n: [z3.simplify(z3.substitute(f, (pc, z3.IntVal(i))))] for i, n in enumerate(nodes)}, names
    from looprover.tpa.proof import NetworkProof
    if isinstance(proof, NetworkProof):
        return _network_candidates(proof, program, deadline)
    kind = getattr(proof, "kind", None)
    if kind is None:
        return "the engine's TRUE comes without invariants (no proof object)"
    return f"the {kind} proof has no state invariants at loop heads"


def _network_candidates(proof: Any, program: Program, deadline: Deadline | None
                        ) -> tuple[dict[int | None, list[z3.BoolRef]], dict[str, str]]:
    """The multi-loop engine's facts at its loop heads: post[v] (every state the loop's body reaches from pre[v],
    arrival included, stays in it), pre[v] (the states on arrival: an invariant when the body keeps it) and, for a
    loop proved by a TPA certificate, the state invariant derived from it when QE is cheap (the reachable states
    of the loop from pre[v]). Candidates: not each of them is inductive at the C loop head on its own."""
    from looprover.program.cpg import build_cpg
    from looprover.smt.cpg_system import CPGSystem, state_name
    from looprover.smt.systems import cpg_network
    from looprover.smt.text import from_text
    from looprover.program.liveness import liveness
    dl = deadline if deadline is not None else Deadline.never()
    pre = {v: from_text(t) for v, t in proof.pre}
    post = {v: from_text(t) for v, t in proof.post}
    out: dict[int | None, list[z3.BoolRef]] = {v: [_nnf(post[v]), _nnf(pre[v])] for v in pre if v in post}
    if proof.certificates:
        net = cpg_network(CPGSystem(build_cpg(program), False, dl), liveness(program))
        for v, cert in proof.certificates:
            if v in pre and v in post and v in net.loops and not dl.expired():
                try:
                    inv = cert.state_invariant(net.loop_system(v, pre[v], z3.Not(post[v])), dl.cap(2.0))
                except Exception:  # noqa: BLE001 -- a candidate less, never a lost verdict
                    inv = None
                if inv is not None:
                    out[v].append(_nnf(inv))
    return out, {state_name(n): n for n in program.variables}


def _nnf(f: z3.BoolRef) -> z3.BoolRef:
    """`f` in negation normal form when that is not much larger: TPA's sets are often negated disjunctions, whose
    conjuncts the writer can then check (and keep) one by one."""
    try:
        goals = z3.Tactic("nnf").apply(f)
    except z3.Z3Exception:
        return f
    if len(goals) != 1:
        return f
    g = z3.And(*goals[0]) if len(goals[0]) != 1 else goals[0][0]
    return g if len(g.sexpr()) <= 2 * len(f.sexpr()) + 64 else f


def _implied_by_types(f: z3.ExprRef, ir_name: dict[str, str], program: Program, s: z3.Solver) -> bool:
    """Whether `f` holds for all values of its variables' unsigned C types (a range fact, which the validator
    assumes, `CPGSystem.unsigned_ranges`); `s` is an empty solver to use. Signed ranges are not assumed there
    (signed values are mathematical), so a signed range fact is kept: it may be what the proof needs."""
    from looprover.witness.cexpr import range_of
    s.push()
    try:
        for t in get_vars(f):
            info = program.variables.get(ir_name.get(t.decl().name(), ""))
            unsigned = info is not None and isinstance(info.var.type, IntType) and not info.var.type.signed
            r = range_of(info.var.type) if unsigned else None
            if r is not None and t.sort() == z3.IntSort():
                s.add(t >= r[0], t <= r[1])
        s.add(z3.Not(f))
        return s.check() == z3.unsat
    finally:
        s.pop()


def printed_loop_invariants(per_node: dict[int | None, list[z3.BoolRef]], ir_name: dict[str, str],
                            program: Program, src: CSource) -> tuple[list, int, list[str]]:
    """The conjuncts of the invariants at each loop head (`proof_invariants`) printed in C, per C loop: (C loop,
    texts) pairs, the number of conjuncts C cannot express, and the loop heads without a single C loop of their
    own (a `do` loop, whose head is not where the format reads it; a loop of a function inlined twice)."""
    from looprover.program.cpg import build_cpg
    cutpoints = build_cpg(program).cutpoints
    loops, left_out, skipped = [], 0, []
    ranges = z3.Solver()
    ranges.set("timeout", 1000)
    for head in cutpoints:
        loop = src.loop_of_head(program, head)
        formulas = per_node.get(head, []) + per_node.get(None, [])
        if not formulas:
            continue
        if not single_c_loop(program, src, head, cutpoints):
            skipped.append(program.loc_label(head))
            continue
        c_of_ir = {ir: c for c, ir in src.ir_variables_at(program, loop).items()}
        types = {c: program.variables[ir].var.type for ir, c in c_of_ir.items()}

        def names(t: z3.ExprRef) -> str | None:
            return c_of_ir.get(ir_name.get(t.decl().name(), ""))
        printed = []
        for f in formulas:
            for conj in conjuncts(_quantifier_free(f)):
                if _implied_by_types(conj, ir_name, program, ranges):
                    continue
                text = _printed(conj, names, types)
                if text is None:
                    left_out += 1
                    continue
                if text not in printed:
                    printed.append(text)
        if printed:
            loops.append((loop, printed))
    return loops, left_out, skipped


def _printed(f: z3.BoolRef, names, types) -> str | None:
    """`f` in C, or when it quantifies or reads array cells in ACSL (`cexpr`); None when neither can say it."""
    try:
        return from_z3(f, names, types)
    except NotC:
        pass
    try:
        return acsl_from_z3(f, names, types) if _on_cells(f) else None
    except NotC:
        return None


def _on_cells(f: z3.ExprRef) -> bool:
    """Whether `f` quantifies or reads an array: what only the ACSL form can say."""
    seen, stack = set(), [f]
    while stack:
        e = stack.pop()
        if z3.is_quantifier(e) or z3.is_select(e):
            return True
        if e.get_id() not in seen:
            seen.add(e.get_id())
            stack.extend(e.children())
    return False


def _quantifier_free(f: z3.BoolRef) -> z3.BoolRef:
    """`f` without its quantifiers (Spacer's invariants may carry `∃`, which C cannot say) when QE manages in a
    second; else `f` itself, whose quantified conjuncts are then left out (or written in ACSL). A universal
    quantifier over array cells stays: the ACSL form says it exactly, QE would not."""
    from looprover.smt.mbp import QEError, eliminate_quantifiers
    if _on_cells(f):
        return f
    try:
        return eliminate_quantifiers(f, deadline=Deadline.after(1.0))
    except (QEError, z3.Z3Exception):
        return f


def single_c_loop(program: Program, src: CSource, head: int, cutpoints) -> bool:
    """Whether the CFA loop head is the head of a C `for`/`while` loop that no other cutpoint maps to."""
    loop = src.loop_of_head(program, head)
    return loop is not None and loop.keyword != "do" and \
        sum(1 for h in cutpoints if src.loop_of_head(program, h) == loop) == 1


def correctness_witness(proof: Any, program: Program, src: CSource, input_name: str, prop: str,
                        data_model: str, deadline: Deadline | None = None) -> Witness:
    from looprover.evidence.proofs import ClosedRunProof
    if isinstance(proof, ClosedRunProof):
        # the only run's loop-head states, exactly (`closed_run.py`): what the run proved, as invariants
        from looprover.witness.closed_run import closed_run_invariants
        got = closed_run_invariants(program, src, deadline)
    else:
        got = proof_invariants(proof, program, deadline)
    if isinstance(got, str):
        return Witness(None, None, f"no correctness witness: {got}")
    loops, left_out, skipped = printed_loop_invariants(*got, program, src)
    extra = (f"; {left_out} conjunct(s) not expressible in C left out" if left_out else "") + \
        (f"; loops without a C counterpart skipped: {', '.join(skipped)}" if skipped else "")
    if not loops:
        # nothing to say at the loops (what the proof needs is in the C types or the loop's own condition):
        # `1` at each loop, which the validator confirms when that is enough
        from looprover.program.cpg import build_cpg
        cutpoints = build_cpg(program).cutpoints
        loops = [(src.loop_of_head(program, h), ["1"]) for h in cutpoints if single_c_loop(program, src, h, cutpoints)]
    if not loops:
        return Witness(None, None, "no correctness witness: no invariant expressible in C at a loop" + extra)
    meta = metadata(src, input_name, prop, data_model)
    # every engine's invariants are checked as the validator would before they are written: k-induction's are
    # k-inductive (not 1-inductive for k > 1), and the summarize/multiloop ones are candidates; a witness that
    # `validate` cannot confirm is worse than none
    checked = _checked(loops, program, src, input_name, meta, deadline)
    if isinstance(checked, str):
        return Witness(None, None, f"no correctness witness: {checked}" + extra)
    loops = checked
    extra += f"; {getattr(proof, 'kind', 'invariants')} checked: the validator confirms them"
    entry = {"entry_type": "invariant_set", "metadata": meta,
             "content": loop_invariants_content(loops, input_name)}
    return Witness(dump([entry]), "correctness", f"correctness witness: {len(loops)} loop invariant(s)" + extra)


def conjunction(printed: list[str]) -> str:
    """C conjuncts joined by `&&` (each parenthesised when there are several)."""
    return " && ".join(f"({p})" if len(printed) > 1 else p for p in printed)


def invariant_item(loop: Any, value: str, input_name: str, kind: str = "loop_invariant",
                   fmt: str = "c_expression") -> dict[str, Any]:
    """One `invariant` of an `invariant_set`, at a C loop's keyword."""
    return {"invariant": {"type": kind, "location": {"file_name": input_name, "line": loop.line, "column": loop.col,
                                                     "function": loop.function},
                          "value": value, "format": fmt}}


def loop_invariants_content(loops: list, input_name: str, split: bool = False) -> list[dict[str, Any]]:
    """One `loop_invariant` per loop (its conjuncts joined by `&&`), or per conjunct with `split`."""
    return [invariant_item(loop, value, input_name, fmt=expression_format(value))
            for loop, printed in loops for value in (printed if split else [conjunction(printed)])]


def inductive_loop_invariants(loops: list, program: Program, src: CSource, input_name: str,
                              meta: dict[str, Any], deadline: Deadline) -> list | str:
    """The conjuncts per loop (C loop, texts) that the validator's own Houdini keeps (`validate.inductive_subset`),
    loops left without one dropped; or why they cannot be checked. Parsing the printed C back makes the check see
    exactly what a reader of the witness sees."""
    from looprover.witness.validate import Validation, inductive_subset
    entries = [{"entry_type": "invariant_set", "metadata": meta,
                "content": loop_invariants_content(loops, input_name, split=True)}]
    keep = inductive_subset(entries, program, src, deadline)
    if isinstance(keep, Validation):
        return f"the candidate invariants cannot be checked ({keep.reason})"
    flags = iter(keep)
    kept = [(loop, [p for p in printed if next(flags)]) for loop, printed in loops]
    return [(loop, printed) for loop, printed in kept if printed]


def _checked(loops: list, program: Program, src: CSource, input_name: str, meta: dict[str, Any],
             deadline: Deadline | None) -> list | str:
    """The candidate conjuncts per loop that survive the validator's own checks (`inductive_loop_invariants`),
    when those confirm them; else why there is no witness."""
    from looprover.witness.validate import validate_entries
    dl = deadline if deadline is not None else Deadline.never()
    kept = inductive_loop_invariants(loops, program, src, input_name, meta, dl)
    if isinstance(kept, str):
        return kept
    if not kept:
        return "no candidate invariant is inductive at the C loop heads"
    final = [{"entry_type": "invariant_set", "metadata": meta, "content": loop_invariants_content(kept, input_name)}]
    res = validate_entries(final, program, src, dl)
    if res.status != "confirmed":
        return f"the inductive candidate invariants are not confirmed ({res.reason})"
    return kept


def _closed_run(proof: Any, program: Program, deadline: Deadline | None) -> Any:
    """For a closed program whatever engine proved it: its only run's loop-head states (`closed_run.py`)."""
    from looprover.evidence.native import why_open
    from looprover.evidence.proofs import ClosedRunProof
    return None if isinstance(proof, ClosedRunProof) or why_open(program) is not None else ClosedRunProof()


SPACER_SECONDS = 10.0     # at most, for Spacer's invariants, when no other source gives a confirmed witness


def _with_domain_candidates(proof: Any, program: Program, deadline: Deadline | None) -> Any:
    """The domains' candidates with the proof's own invariants (when they are program atoms): Houdini over the
    union of both sources."""
    from looprover.evidence.hints import LoopInvariantHints
    from looprover.evidence.proofs import KInductiveProof
    own = tuple(proof.invariants) if isinstance(proof, KInductiveProof) else \
        tuple(proof.atoms) if isinstance(proof, LoopInvariantHints) else ()
    hints = domain_hints(program, deadline)
    return LoopInvariantHints("the proof's invariants and the abstract domains' candidates" if own else hints.source,
                              own + tuple(a for a in hints.atoms if a not in own))


def _spacer_invariants(proof: Any, program: Program, deadline: Deadline | None) -> Any:
    """Invariants per cutpoint from z3's Spacer on the program's cutpoint Horn clauses (the `spacer` engine, for
    at most `SPACER_SECONDS`), when it proves the program in that time; disjunctive invariants, which the
    domains do not offer, come from here. None otherwise."""
    from looprover.engines import verify
    budget = SPACER_SECONDS if deadline is None else min(SPACER_SECONDS, deadline.left() - 1.0)
    if budget < 0.5 or getattr(proof, "kind", None) == "cutpoint-invariants":
        return None
    v = verify("spacer", program, timeout=budget)
    return v.evidence if v.status == Status.TRUE else None


def domain_hints(program: Program, deadline: Deadline | None) -> Any:
    """Candidate loop invariants of `program` from the abstract domains (`certify.domain_candidates`, the ones
    k-induction starts from), filtered by states of random runs: for a TRUE whose engine gives no usable
    invariants. They are candidates only (`LoopInvariantHints`): the writer keeps what the validator confirms."""
    from looprover.evidence.certify import domain_candidates
    from looprover.evidence.hints import LoopInvariantHints
    return LoopInvariantHints("the abstract domains' candidates", tuple(domain_candidates(program, False, deadline)))


def _confirmed(w: Witness, program: Program, src: CSource, prop: str, deadline: Deadline | None) -> Witness:
    """`w` if `validate` confirms it (a violation witness is replayed, a deep one compiled and run), else none."""
    if w.text is None:
        return w
    from looprover.witness.validate import validate_entries
    res = validate_entries(yaml.safe_load(w.text), program, src,
                           deadline if deadline is not None else Deadline.never(), prop)
    if res.status != "confirmed":
        return Witness(None, None, f"no {w.kind} witness: the validator does not confirm it ({res.reason})")
    return Witness(w.text, w.kind, f"{w.note}; the validator confirms it")


def witness_for(verdict: Verdict, program: Program | None, input_path: Path, prop: str, data_model: str,
                deadline: Deadline | None = None) -> Witness:
    """The witness of a verdict, or why there is none; `deadline` bounds the check of candidate invariants."""
    if verdict.status == Status.UNKNOWN:
        return Witness(None, None, "no witness for UNKNOWN")
    if program is None:
        return Witness(None, None, "no witness: no program")
    if input_path.suffix == ".smt2" or program.clauses:
        from looprover.witness.chc import chc_witness
        return chc_witness(verdict, program, deadline)
    if prop not in SPECIFICATIONS and prop not in MEMORY_PROPERTIES:
        return Witness(None, None, f"no witness: witnesses for property {prop} are not written")
    if prop in MEMORY_PROPERTIES and verdict.status == Status.TRUE:
        return Witness(None, None, f"no correctness witness: SV-COMP validates none for {prop}")
    src = CSource(input_path, data_model)
    name = str(input_path)
    try:
        if prop == TERMINATION:
            from looprover.witness.termination_witness import nontermination_witness, termination_witness
            if verdict.status == Status.FALSE:
                return nontermination_witness(verdict.evidence, program, src, name, data_model, deadline)
            return termination_witness(verdict.evidence, program, src, name, data_model, deadline)
        if verdict.status == Status.FALSE:
            if not isinstance(verdict.evidence, Counterexample):
                return Witness(None, None, "no violation witness: no counterexample")
            return _confirmed(violation_witness(verdict.evidence, program, src, name, prop, data_model),
                              program, src, prop, deadline)
        w = correctness_witness(verdict.evidence, program, src, name, prop, data_model, deadline)
        if w.text is not None:
            return w
        # the engine has no invariants (bmc) or they are not 1-inductive at the C loop heads (k-induction with
        # k > 1): other sources, each written only if the validator confirms it
        for source in (_closed_run, _with_domain_candidates, _spacer_invariants):
            if deadline is not None and deadline.left() <= 0.5:
                break
            hints = source(verdict.evidence, program, deadline)
            d = correctness_witness(hints, program, src, name, prop, data_model, deadline) if hints else None
            if d is not None and d.text is not None:
                d.note += f" ({verdict.engine}: {w.note.removeprefix('no correctness witness: ')})"
                return d
        w.note += f" ({verdict.engine})"
        return w
    except Exception as exc:  # noqa: BLE001 -- a witness problem never costs the verdict
        return Witness(None, None, f"no witness: {type(exc).__name__}: {exc}")
