"""Termination witnesses, format 2.1: a termination TRUE's per-loop arguments written as `loop_transition_invariant`s,
with the proof's state invariants as `loop_invariant`s (the states the arguments may assume).

Each argument of `termination.ranking` is a relation R between an earlier visit of the loop's head
(`\\at(x, AnyPrev)`) and the current one: a bounded decrease `e(prev) > e(x) && e(prev) >= 0` (strict order,
ranking function), a lexicographic one (a disjunction over the components, each bounded where it decreases), or a
disjunction of bounded decreases (disjunctive transition invariant). The engine checked its argument for every
iteration that is followed by another one; a transition invariant must also hold for the last one, so the witness
is written only when `validate`'s own check (`validate_termination`) confirms it.
"""
from __future__ import annotations

from typing import Any

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.termination.proof import TerminationProof
from looprover.termination.ranking import DISJUNCTIVE, LEX, NONE, RANKING, STRICT, LinearTerm, LoopArgument
from looprover.witness.cexpr import NotC, at_any_prev, from_z3
from looprover.witness.csource import CSource
from looprover.evidence.hints import LoopInvariantHints
from looprover.witness.svcomp import (
    Witness, conjunction, dump, inductive_loop_invariants, invariant_item, loop_invariants_content, metadata,
    printed_loop_invariants, proof_invariants, single_c_loop,
)

FORMAT_VERSION = "2.1"
PREV = "!prev:"
SEARCH_SECONDS = 5.0     # for an argument that ranks every iteration, where the proof's does not
MAX_TRIES = 8        # validations of candidate witnesses (another strict order for a loop the validator refused)


def termination_witness(proof: Any, program: Program, src: CSource, input_name: str, data_model: str,
                        deadline: Deadline | None = None) -> Witness:
    if not isinstance(proof, TerminationProof):
        return Witness(None, None, "no termination witness: the TRUE has no termination proof")
    dl = deadline if deadline is not None else Deadline.never()
    cutpoints = build_cpg(program).cutpoints
    options = []          # per loop: (C loop, candidate texts of its transition invariant)
    for arg in proof.loops:
        if not single_c_loop(program, src, arg.header, cutpoints):
            return Witness(None, None, f"no termination witness: the loop at {program.loc_label(arg.header)} has "
                                       f"no C loop of its own where the format reads it")
        loop = src.loop_of_head(program, arg.header)
        texts = _texts(_arguments(arg, program, dl), program, src, loop)
        if not texts:
            return Witness(None, None, f"no termination witness: the argument for the loop at line {loop.line} "
                                       f"({arg.kind}) is not expressible in C")
        options.append((loop, texts))
    got = proof_invariants(LoopInvariantHints("termination", proof.invariants), program)
    states = printed_loop_invariants(*got, program, src)[0] if not isinstance(got, str) else []
    meta = metadata(src, input_name, "termination", data_model)
    meta["format_version"] = FORMAT_VERSION
    transitions = [(loop, texts[0]) for loop, texts in options]
    searched = [False] * len(options)
    kept = inductive_loop_invariants(states, program, src, input_name, meta, dl) if states else []
    states = kept if isinstance(kept, list) else []         # candidates the validator cannot read: none
    from looprover.witness.validate_termination import validate_termination
    for _ in range(MAX_TRIES):
        entry = {"entry_type": "invariant_set", "metadata": meta,
                 "content": _content(states, transitions, input_name)}
        res = validate_termination([entry], program, src, dl)
        if res.status == "confirmed":
            return Witness(dump([entry]), "correctness",
                           f"termination witness (format {FORMAT_VERSION}): {len(transitions)} transition "
                           f"invariant(s), {sum(len(p) for _, p in states)} state invariant(s); the validator "
                           f"confirms them")
        # another candidate for the loop whose transition invariant the validator did not confirm, if it has one
        failed = next((i for i, a in enumerate(proof.loops) if a.header == res.loop), None)
        if failed is None or dl.expired():
            break
        loop, texts = options[failed]
        k = texts.index(transitions[failed][1]) + 1
        if k == len(texts) and not searched[failed]:
            # the argument ranks the iterations followed by another one; search one for every iteration
            searched[failed] = True
            texts += _texts(_every_iteration(proof, proof.loops[failed], program, dl), program, src, loop)
        if k >= len(texts):
            break
        transitions[failed] = (loop, texts[k])
    return Witness(None, None, f"no termination witness: the validator does not confirm it ({res.reason})")


def _arguments(arg: LoopArgument, program: Program, deadline: Deadline) -> list[LoopArgument]:
    """The argument itself; for "at most one iteration" (no relation between two visits), strict orders from
    the loop's comparisons (`ranking.guard_terms`), which the validator tries as transition invariants."""
    if arg.kind != NONE:
        return [arg]
    from looprover.termination.ranking import guard_terms
    return [LoopArgument(arg.header, STRICT, (t,)) for t in guard_terms(_relation(program, arg.header, deadline))]


def _every_iteration(proof: TerminationProof, arg: LoopArgument, program: Program, deadline: Deadline
                     ) -> list[LoopArgument]:
    """An argument for the loop of `arg` that ranks every iteration, the last one included (`ArgumentSearch` with
    `every_iteration`), over the proof's invariants and the nested loops' summary of `arg`."""
    from looprover.errors import GiveUp
    from looprover.termination.ranking import ArgumentSearch
    rel = _relation(program, arg.header, deadline, proof.invariants)
    try:
        found = ArgumentSearch(rel, arg.summary, deadline.cap(SEARCH_SECONDS), every_iteration=True).run()
    except (OutOfTime, GiveUp):
        return []
    return [found] if found is not None and found.kind != NONE else []


def _relation(program: Program, header: int, deadline: Deadline, invariants: tuple = ()) -> Any:
    """The iteration relation of the loop at `header` (`termination.relation.LoopRelation`), integer encoding."""
    from looprover.program.loops import analyze_loops
    from looprover.smt.cpg_system import CPGSystem
    from looprover.termination.relation import LoopRelation
    forest = analyze_loops(program)
    return LoopRelation(CPGSystem(build_cpg(program, forest), False, deadline), forest.loops[header], invariants)


def _texts(args: list[LoopArgument], program: Program, src: CSource, loop) -> list[str]:
    out = []
    for a in args:
        try:
            out.append(_transition_text(a, program, src, loop))
        except NotC:
            continue
    return out


def _transition_text(arg: LoopArgument, program: Program, src: CSource, loop) -> str:
    """The argument as a C `ext_c_expression` over the loop's variables and `\\at(x, AnyPrev)`; NotC when C
    cannot express it."""
    c_of_ir = {ir: c for c, ir in src.ir_variables_at(program, loop).items()}
    types = {c: program.variables[ir].var.type for ir, c in c_of_ir.items()}
    types.update({at_any_prev(c): t for c, t in list(types.items())})

    def term(t: LinearTerm, prev: bool) -> z3.ArithRef:
        out: z3.ArithRef = z3.IntVal(t.const)
        for n, c in t.coeffs:
            if c:
                out = out + c * z3.Int(PREV + n if prev else n)
        return z3.simplify(out)

    def decrease(t: LinearTerm) -> z3.BoolRef:
        return z3.And(term(t, True) > term(t, False), term(t, True) >= 0)
    if arg.kind in (STRICT, RANKING):
        r = decrease(arg.terms[0])
    elif arg.kind == LEX:
        r = z3.Or([z3.And(*[term(u, True) >= term(u, False) for u in arg.terms[:i]], decrease(t))
                   for i, t in enumerate(arg.terms)])
    elif arg.kind == DISJUNCTIVE:
        r = z3.Or([decrease(t) for t in arg.terms])
    else:
        raise NotC(f"an argument of kind '{arg.kind}' is no relation between two visits")

    def names(c: z3.ExprRef) -> str | None:
        n = c.decl().name()
        if n.startswith(PREV):
            name = c_of_ir.get(n[len(PREV):])
            return at_any_prev(name) if name is not None else None
        return c_of_ir.get(n)
    return from_z3(r, names, types)


def _content(states: list, transitions: list, input_name: str) -> list[dict[str, Any]]:
    return loop_invariants_content(states, input_name) + [
        invariant_item(loop, text, input_name, "loop_transition_invariant", "ext_c_expression")
        for loop, text in transitions]


def nontermination_witness(w: Any, program: Program, src: CSource, input_name: str, data_model: str,
                           deadline: Deadline | None = None) -> Witness:
    """A non-termination FALSE's lasso as a 2.1 `violation_sequence`: the stem's inputs as `function_return`
    waypoints, then a cycle segment with the recurrent set as an `assumption` at the loop's head. Written only
    when `validate` confirms it (`validate_termination.validate_nontermination`)."""
    from looprover.domains import Candidate
    from looprover.verdict import NonTermination
    from looprover.witness.svcomp import edge_input_sites, input_segments, _location
    if not isinstance(w, NonTermination):
        return Witness(None, None, "no violation witness: no non-termination lasso")
    dl = deadline if deadline is not None else Deadline.never()
    if not single_c_loop(program, src, w.head, build_cpg(program).cutpoints):
        return Witness(None, None, f"no violation witness: the lasso's loop at {program.loc_label(w.head)} has no "
                                   f"C loop of its own where the format reads it")
    loop = src.loop_of_head(program, w.head)
    sites = edge_input_sites([(e, None) for e in w.stem], len(w.inputs), program)
    if sites is None:
        return Witness(None, None, "no violation witness: the stem's input calls do not line up with its inputs")
    segments = input_segments(w.inputs, sites, src, input_name)
    if isinstance(segments, str):
        return Witness(None, None, f"no violation witness: {segments}")
    from looprover.witness.validate_termination import validate_nontermination
    meta = metadata(src, input_name, "termination", data_model)
    meta["format_version"] = FORMAT_VERSION
    res = None
    # the recurrent set as C can print it (a conjunct C cannot express is left out, which may leave it open),
    # then the state the stem reaches, as a set of its own: closed when the cycle comes back to it exactly
    for recurrent in (w.recurrent, _stem_end(w, program)):
        if recurrent is None:
            continue
        got = proof_invariants(LoopInvariantHints("recurrent set", (Candidate(w.head, recurrent),)), program)
        printed = printed_loop_invariants(*got, program, src)[0] if not isinstance(got, str) else []
        value = conjunction(printed[0][1]) if printed else "1"
        cycle = {"segment": [{"waypoint": {
            "type": "assumption", "action": "cycle", "constraint": {"value": value, "format": "c_expression"},
            "location": _location(src, input_name, loop.line, loop.col)}}]}
        entry = {"entry_type": "violation_sequence", "metadata": meta, "content": segments + [cycle]}
        res = validate_nontermination([entry], program, src, dl)
        if res.status == "confirmed":
            return Witness(dump([entry]), "violation",
                           f"non-termination witness (format {FORMAT_VERSION}): {len(w.inputs)} stem input(s), "
                           f"recurrent set at line {loop.line}; the validator confirms it")
    return Witness(None, None, f"no violation witness: the validator does not confirm it ({res.reason})")


def _stem_end(w: Any, program: Program):
    """The state the lasso's stem ends in at the loop's head, as an IR formula (the values of its scalar variables
    live there: a dead one's value is whatever the engine's model said, which a validator's run need not repeat)."""
    from looprover.program.expr import BoolConst, BoolType, IntType, and_, cmp, const
    from looprover.program.interp import InputOracle, run
    from looprover.program.liveness import liveness
    res = run(program, InputOracle(program, havocs=w.stem_havocs), dict(w.stem_initial), max_steps=len(w.stem))
    if res.loc != w.head:
        return None
    live = {v.name for v in liveness(program).get(w.head, frozenset())}
    atoms = []
    for n, v in res.state.items():
        if n not in live:
            continue
        t = program.variables[n].var.type if n in program.variables else None
        if isinstance(t, IntType) and isinstance(v, int):
            atoms.append(cmp("==", program.variables[n].var, const(v, t)))
        elif isinstance(t, BoolType) and isinstance(v, bool):
            atoms.append(cmp("==", program.variables[n].var, BoolConst(v)))
    return and_(*atoms) if atoms else None
