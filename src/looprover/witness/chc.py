"""CHC-COMP evidence of a Horn-clause answer: a model of the clauses as the file states them (sat) or a
derivation of false (unsat), and the check of either against the file.

Why in this form: our engines prove and refute the cutpoint graph of the program the front-end made (a
predicate is a location, its arguments shared slots, loop-free predicates folded into the graph's edges), so
their evidence speaks of slots at loop heads. What users of Horn-clause solvers check is an interpretation of
every predicate of the file, written as `define-fun`s (as Spacer, Eldarica and Golem print models), and a
derivation: numbered facts, each with the step it follows from (Golem's `--print-witness` format). So the
front-end's translation is undone here (the back-translation of issue 27's preprocessing):
- the engine's invariants at the loop heads are kept as far as they are inductive (Houdini), projected onto each
  predicate's arguments (what a clause leaving the predicate reads);
- a predicate the graph folded into an edge is given the strongest postcondition of its incoming clauses (QE,
  or an `exists` where QE does not finish);
- a counterexample's clause steps become the facts they derive.
`check_model` and `check_derivation` read the witness and the original file with z3 alone: they know nothing of
the translation, so a witness they confirm holds for the file whatever our front-end did.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.errors import GiveUp, UnsupportedError
from looprover.program.cfa import Program
from looprover.witness.validate import Validation

CHECK_SECONDS = 5.0     # per clause or derivation step, at most
REACH_STEPS = 1000      # steps of the forward iteration of the reachable states, at most


# ------------------------------------------------------------------------------------------- models
def cutpoint_invariants(proof: Any, program: Program, deadline: Deadline) -> dict[int, z3.BoolRef] | str:
    """A safe inductive invariant per node of the program's cutpoint graph, over the current-state constants:
    a cutpoint proof's own, else the largest inductive subset of the proof's invariants (Houdini) when it
    excludes the error; or why there is none."""
    from looprover.evidence.proofs import CutpointInvariantProof, cutpoint_failure
    from looprover.program.cpg import build_cpg
    from looprover.smt.cpg_system import CPGSystem
    from looprover.smt.text import from_text
    sys = CPGSystem(build_cpg(program), False, deadline)
    if isinstance(proof, CutpointInvariantProof) and not proof.splits:
        interp = {n: from_text(t) for n, t in proof.invariants}
    else:
        from looprover.witness.svcomp import proof_invariants
        got = proof_invariants(proof, program, deadline)
        if isinstance(got, str):
            return got
        per_node, names = got
        to_state = [(z3.Const(c, sys.cur[v].sort()), sys.cur[v]) for c, v in names.items() if v in sys.cur]
        cands = [(n, z3.substitute(f, *to_state) if to_state else f)
                 for node, fs in per_node.items() for f in fs
                 for n in (sys.cpg.sources if node is None else [node]) if n in sys.cpg.fragments]
        interp = _inductive(sys, cands, deadline)
        if isinstance(interp, str):
            return interp
    why = cutpoint_failure(sys, interp, deadline)
    return interp if why is None else f"the invariants are not a safe inductive invariant: {why}"


def _inductive(sys: Any, cands: list[tuple[int, z3.BoolRef]], deadline: Deadline) -> dict[int, z3.BoolRef] | str:
    """The conjunction per cutpoint of the largest inductive subset of `cands` (Houdini on the pc-encoded
    system)."""
    from looprover.smt.houdini import houdini
    from looprover.smt.terms import mk_and
    ts = sys.ts
    nxt = list(zip(ts.state, ts.next))
    pre = [z3.Implies(sys.pc == sys.pc_id[n], f) for n, f in cands]
    post = [z3.Implies(sys.pc_next == sys.pc_id[n], z3.substitute(f, *nxt)) for n, f in cands]
    try:
        kept = houdini([ts.trans], pre, post, deadline, init=ts.init)
    except (OutOfTime, GiveUp) as exc:
        return f"Houdini on the proof's invariants did not finish ({exc})"
    out: dict[int, list[z3.BoolRef]] = {n: [] for n in sys.cpg.sources}
    for i in kept:
        out[cands[i][0]].append(cands[i][1])
    return {n: mk_and(*fs) for n, fs in out.items()}


def predicate_locations(program: Program) -> dict[int, str]:
    """The location of each of the file's predicates (every location but the entry and the error)."""
    return {loc: name for loc, name in program.loc_names.items() if loc not in (program.exit, program.init)}


def chc_model(program: Program, interp: dict[int, z3.BoolRef], deadline: Deadline
              ) -> dict[str, tuple[list[z3.ExprRef], z3.BoolRef]]:
    """The file's predicates interpreted (name -> parameters, body) from a safe inductive invariant `interp` of
    the cutpoint graph: projected onto each predicate's arguments at the loop heads, the strongest
    postcondition of the incoming clauses elsewhere (the graph cut at every predicate, so that its edges are the
    clauses)."""
    from looprover.program.cpg import build_cpg
    from looprover.smt.cpg_system import CPGSystem
    from looprover.smt.terms import mk_or
    _, params = _parameters(program)
    locs = predicate_locations(program)
    cpg = build_cpg(program, splits=frozenset(locs))
    sys = CPGSystem(cpg, False, deadline)
    slots_at = {loc: params.get(name, []) for loc, name in locs.items()}
    got: dict[int, z3.BoolRef] = {cpg.init: z3.BoolVal(True)}
    # what the init does not reach is false (the loop analysis cuts only the cycles it reaches)
    reached, todo = {cpg.init}, [cpg.init]
    while todo:
        for e in cpg.out_edges(todo.pop()):
            if e.dst not in reached:
                reached.add(e.dst)
                todo.append(e.dst)
    got.update((n, z3.BoolVal(False)) for n in slots_at if n not in reached)
    for n, f in interp.items():
        if n in slots_at and n in reached:
            got[n] = _project(f, [sys.cur[v.name] for v in slots_at[n]], deadline)

    def of(n: int) -> z3.BoolRef:
        """n's interpretation: the strongest postcondition of its incoming edges (the cutpoints' interpretations
        are given, so this recursion follows no cycle)."""
        if n not in got:
            got[n] = z3.simplify(mk_or(*(_image(sys, of(e.src), sys.edge_formula(e, slots_at[n]), slots_at[n],
                                                deadline) for e in cpg.in_edges(n))))
        return got[n]

    # the front-end gives every predicate of the file a location of its own
    return {name: ([sys.cur[v.name] for v in params[name]], of(loc)) for loc, name in locs.items()}


def _image(sys: Any, states: z3.BoolRef, step: z3.BoolRef, slots: list[Any], deadline: Deadline) -> z3.BoolRef:
    """The states one step (a formula over the current and next state) leads to from `states`, over the
    target's slots as current-state constants."""
    keep = [sys.nxt[v.name] for v in slots]
    post = _project(z3.And(states, step), keep, deadline)
    return z3.substitute(post, *[(sys.nxt[v.name], sys.cur[v.name]) for v in slots]) if slots else post


def _parameters(program: Program) -> tuple[dict[str, z3.FuncDeclRef], dict[str, list[Any]]]:
    """The file's predicates and, per predicate, the slot variables that hold its arguments."""
    from looprover.frontend.chc import argument_slots, read_clauses, slot_name
    preds, _, _ = read_clauses(Path(program.source_file))
    return preds, {name: [program.variables[slot_name(t, k)].var for t, k in argument_slots(d, name)]
                   for name, d in preds.items()}


def reachable_states(program: Program, deadline: Deadline) -> dict[int, z3.BoolRef] | str:
    """The exact reachable states per cutpoint, by forward iteration over the cutpoint graph (each step's new
    states the projection of the last step's through an edge), for programs whose reachable states run out:
    what bmc's exhaustive unwinding proved has no invariants of its own, and the union of the states of every
    depth is the strongest one. Or why it did not finish in time."""
    from looprover.program.cpg import build_cpg
    from looprover.smt.cpg_system import CPGSystem
    _, params = _parameters(program)
    locs = predicate_locations(program)
    sys = CPGSystem(build_cpg(program), False, deadline)
    cpg = sys.cpg
    slots_at = {loc: params.get(name, []) for loc, name in locs.items()}
    reached: dict[int, list[z3.BoolRef]] = {n: [] for n in cpg.sources}
    edges = [e for e in cpg.edges if e.dst in reached]
    formula = {id(e): sys.edge_formula(e, slots_at.get(e.dst, [])) for e in edges}
    try:
        return _forward(sys, slots_at, edges, formula, reached, deadline)
    except (OutOfTime, GiveUp):
        return "the forward iteration of the reachable states did not finish in time"


def _forward(sys: Any, slots_at: dict, edges: list, formula: dict, reached: dict, deadline: Deadline
             ) -> dict[int, z3.BoolRef] | str:
    from looprover.smt.solver import check
    from looprover.smt.terms import mk_not, mk_or
    cpg = sys.cpg
    frontier = {cpg.init: z3.BoolVal(True)}
    for _ in range(REACH_STEPS):
        if deadline.expired():
            raise OutOfTime()
        new: dict[int, list[z3.BoolRef]] = {}
        for e in edges:
            if e.src in frontier:
                new.setdefault(e.dst, []).append(
                    _image(sys, frontier[e.src], formula[id(e)], slots_at.get(e.dst, []), deadline))
        frontier = {}
        for n, posts in new.items():
            f = z3.simplify(mk_or(*posts))
            s = z3.Solver()
            s.add(f, mk_not(mk_or(*reached[n])))
            if check(s, deadline) == z3.sat:        # states not reached before: a frontier
                reached[n].append(f)
                frontier[n] = f
        if not frontier:
            reached[cpg.init] = [z3.BoolVal(True)]
            return {n: mk_or(*fs) for n, fs in reached.items()}
    return f"the reachable states did not run out within {REACH_STEPS} steps"



def _project(f: z3.BoolRef, keep: list[z3.ExprRef], deadline: Deadline) -> z3.BoolRef:
    """∃(everything but keep). f: without quantifiers when QE finishes in time, else with them."""
    from looprover.smt.mbp import QEError, qe, vocabulary
    voc = vocabulary(f)
    kept = {k.get_id() for k in keep}
    gone = [c for c in voc.constants if c.get_id() not in kept]
    if not gone:
        return f
    try:
        return qe(f, keep=keep, deadline=deadline.cap(CHECK_SECONDS))
    except (QEError, OutOfTime, GiveUp, z3.Z3Exception):
        return z3.Exists(gone, f)


def _symbol(name: str) -> str:
    """A predicate name as an SMT-LIB symbol (quoted unless simple)."""
    return name if re.fullmatch(r"[A-Za-z~!@$%^&*_+=<>.?/\-][0-9A-Za-z~!@$%^&*_+=<>.?/\-]*", name) else f"|{name}|"


def model_text(model: dict[str, tuple[list[z3.ExprRef], z3.BoolRef]]) -> str:
    """The model as CHC-COMP solvers print one: a list of `define-fun`s."""
    lines = ["("]
    for name, (params, body) in model.items():
        ps = " ".join(f"({p} {p.sort().sexpr()})" for p in params)
        lines.append(f"  (define-fun {_symbol(name)} ({ps}) Bool\n    {body.sexpr()})")
    lines.append(")")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------- derivations
def derivation_text(cex: Any, program: Program) -> str | None:
    """A counterexample as Golem prints a derivation: `0: true`, then per clause applied the fact it derives
    and the step it follows from, the last `false`; None when the trace does not determine every fact (an
    abbreviated run, array values)."""
    from looprover.report import derivation
    if getattr(cex, "omitted", 0):
        return None
    steps = derivation(cex, program)
    if not steps or any(d is None or (d.clause.head_args and d.args is None) for d in steps):
        return None
    lines = ["0:\ttrue"]
    for i, d in enumerate(steps, 1):
        if d.clause.head is None:
            fact = "false"
        elif not d.args:
            fact = _symbol(d.clause.head)
        else:
            if any(not isinstance(a, (bool, int)) for a in d.args):      # an array's value
                return None
            fact = f"({_symbol(d.clause.head)} {' '.join(_value(a) for a in d.args)})"
        lines.append(f"{i}:\t{fact} -> {i - 1}\t; clause {d.clause.number}"
                     + (f" (line {d.clause.line})" if d.clause.line else ""))
    return "\n".join(lines) + "\n"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v) if v >= 0 else f"(- {-v})"


# ------------------------------------------------------------------------------------------- checks
def check_witness_by(text: str, path: Path, deadline: Deadline) -> Validation:
    """`check_witness` in a child process killed at the deadline: z3 does not always stop at its timeout while
    it takes in a model of megabytes (Golem's, on multi-loop files), and `validate --timeout` must hold."""
    from looprover.processes import Child
    child = Child("looprover-validate", check_witness, text, path, deadline, daemon=False)
    try:
        if Child.wait([child], max(deadline.left(), 0.0) + 1.0):
            ok, value = child.result()
            return value if ok else Validation("unknown", f"the check crashed ({value})")
    finally:
        child.kill()
    return Validation("unknown", "timeout: the check did not finish in time")


def check_witness(text: str, path: Path, deadline: Deadline) -> Validation:
    """A model or a derivation for the Horn clauses of `path`, checked with z3 against the file's clauses. A
    solver's complaints about the file before its answer (Golem prints `(error "...")` lines for commands it
    ignores) and a leading `sat`/`unsat` are skipped."""
    lines = _strip_comments(text).strip().splitlines()
    while lines and (lines[0].startswith("(error ") or not lines[0].strip()):
        lines.pop(0)
    body = "\n".join(lines).strip()
    if body.startswith("sat"):
        body = body[3:].strip()
    elif body.startswith("unsat"):
        body = body[5:].strip()
    if "define-fun" in body or body.startswith("("):
        return check_model(body, path, deadline)
    return check_derivation(body, path, deadline)


def _strip_comments(text: str) -> str:
    return "\n".join(_uncommented(line) for line in text.splitlines())


def _uncommented(line: str) -> str:
    """The line without its `;` comment (a `;` inside |quoted| symbols stays)."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == "|":
            quoted = not quoted
        elif ch == ";" and not quoted:
            return line[:i]
    return line


class _List(list):
    """A parsed S-expression list that knows where its text is (models nest `let`s thousands deep: printing
    them back recursively would exceed Python's recursion limit, and a copy of the text per list is quadratic)."""
    source: str = ""
    start: int = 0
    end: int = 0

    @property
    def text(self) -> str:
        return self.source[self.start:self.end]


def _sexprs(text: str) -> list[Any]:
    """S-expressions of `text` (lists of atoms; |quoted| symbols and "strings" kept whole)."""
    stack: list[_List] = [_List()]
    for m in re.finditer(r'\(|\)|\|[^|]*\||"(?:[^"]|"")*"|[^\s()|"]+', text):
        t = m.group()
        if t == "(":
            new = _List()
            new.source, new.start = text, m.start()
            stack.append(new)
        elif t == ")":
            if len(stack) == 1:
                raise ValueError("unbalanced ')'")
            done = stack.pop()
            done.end = m.end()
            stack[-1].append(done)
        else:
            stack[-1].append(t)
    if len(stack) != 1:
        raise ValueError("unbalanced '('")
    return stack[0]


def _unparse(x: Any) -> str:
    return x if isinstance(x, str) else x.text


def _unquoted(sym: str) -> str:
    return sym[1:-1] if sym.startswith("|") and sym.endswith("|") else sym


def _definitions(text: str, preds: dict[str, z3.FuncDeclRef]) -> dict[str, z3.ExprRef] | str:
    """name -> body over Var(i) for the i-th parameter (what `z3.substitute_funs` takes), or what is wrong."""
    try:
        items = _sexprs(text)
    except ValueError as exc:
        return f"not a list of define-fun: {exc}"
    if len(items) == 1 and isinstance(items[0], list) and items[0] and items[0][0] != "define-fun":
        items = items[0]                   # the model's own parentheses
    out: dict[str, z3.ExprRef] = {}
    for item in items:
        if not (isinstance(item, list) and len(item) == 5 and item[0] == "define-fun" and isinstance(item[2], list)):
            return f"not a define-fun: {_unparse(item)[:80]}"
        name = _unquoted(item[1])
        d = preds.get(name)
        if d is None:
            continue                       # a symbol the file does not have: nothing to check
        params = item[2]
        if len(params) != d.arity() or any(not isinstance(p, list) or len(p) != 2 for p in params):
            return f"the definition of {name} does not take its {d.arity()} arguments"
        names = " ".join(p[0] for p in params)
        body = _unparse(item[4])
        script = (f"(assert (forall ({' '.join(_unparse(p) for p in params)}) (= ({item[1]} {names}) {body})))"
                  if params else f"(assert (= {item[1]} {body}))")
        try:
            eq = z3.parse_smt2_string(script, decls={name: d})[0]
        except z3.Z3Exception as exc:
            return f"the definition of {name} does not parse: {' '.join(str(exc).split())[:200]}"
        if not params:
            out[name] = eq.arg(1)
            continue
        consts = [z3.FreshConst(eq.var_sort(i), "p") for i in range(eq.num_vars())]
        inst = z3.substitute_vars(eq.body(), *reversed(consts)).arg(1)
        out[name] = z3.substitute(inst, *[(c, z3.Var(i, c.sort())) for i, c in enumerate(consts)])
    return out


def check_model(text: str, path: Path, deadline: Deadline) -> Validation:
    """Every clause of the file holds with its predicates replaced by the model's definitions."""
    from looprover.frontend.chc import read_clauses
    preds, clauses, assertions = read_clauses(path)
    defs = _definitions(text, preds)
    if isinstance(defs, str):
        return Validation("rejected", defs, "correctness")
    missing = sorted(set(preds) - set(defs))
    if missing:
        return Validation("rejected", f"no definition of {', '.join(missing)}", "correctness")
    pairs = [(preds[n], body) for n, body in defs.items()]
    for c, a in zip(clauses, assertions):
        r, why = _decide(deadline, z3.Not(z3.substitute_funs(a, *pairs)))
        where = f"clause {c.index + 1}" + (f" (line {c.line})" if c.line else "")
        if r == z3.sat:
            return Validation("rejected", f"{where} does not hold for the model", "correctness")
        if r != z3.unsat:
            return Validation("unknown", f"{where}: z3 does not decide it ({why})", "correctness")
    return Validation("confirmed", "", "correctness")


def _decide(deadline: Deadline, *fs: z3.BoolRef) -> tuple[z3.CheckSatResult, str]:
    """sat or unsat of the conjunction in a fresh solver within CHECK_SECONDS, else unknown and why."""
    from looprover.smt.solver import check
    s = z3.Solver()
    s.add(*fs)
    try:
        return check(s, deadline, cap=CHECK_SECONDS), ""
    except OutOfTime:
        return z3.unknown, "timeout"
    except GiveUp as exc:
        return z3.unknown, str(exc)


_STEP = re.compile(r"^\s*(\d+)\s*:\s*(.*?)\s*(?:->\s*([\d\s]*))?$")


def check_derivation(text: str, path: Path, deadline: Deadline) -> Validation:
    """Each numbered fact follows by one clause of the file from the fact it names (a clause whose variables
    have values that make its body the premise and its head the fact), and the last one is `false`."""
    from looprover.frontend.chc import read_clauses
    preds, clauses, _ = read_clauses(path)
    facts: dict[int, z3.BoolRef] = {}
    last = None
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _STEP.match(line)
        if not m:
            return Validation("rejected", f"not a derivation step: {line.strip()[:80]}", "violation")
        k, fact_text, premises = int(m.group(1)), m.group(2), (m.group(3) or "").split()
        try:
            fact = z3.parse_smt2_string(f"(assert {fact_text})", decls=dict(preds))[0]
        except z3.Z3Exception:
            return Validation("rejected", f"step {k}: cannot read the fact {fact_text[:80]}", "violation")
        if k in facts:
            return Validation("rejected", f"step {k} is given twice", "violation")
        used = [facts.get(int(p)) for p in premises]
        if any(u is None for u in used):
            return Validation("rejected", f"step {k} follows from a step not derived before it", "violation")
        body = [u for u in used if not z3.is_true(u)]
        if len(body) > 1:
            return Validation("unknown", f"step {k} has {len(body)} premises: only linear derivations are checked",
                              "violation")
        if premises or not z3.is_true(fact):
            failure = _step_failure(fact, body[0] if body else None, clauses, deadline)
            if failure:
                return Validation(failure[0], f"step {k}: {failure[1]}", "violation")
        facts[k] = fact
        last = fact
    if last is None or not z3.is_false(last):
        return Validation("rejected", "the derivation does not end with false", "violation")
    return Validation("confirmed", "", "violation")


def _step_failure(fact: z3.BoolRef, premise: z3.BoolRef | None, clauses: list, deadline: Deadline
                  ) -> tuple[str, str] | None:
    """None when a clause derives `fact` from `premise` (None: a body fact or no premise), else the status
    (rejected, or unknown where z3 did not decide a clause) and why."""
    def same(app: z3.ExprRef | None, ground: z3.BoolRef | None) -> list[z3.BoolRef] | None:
        if app is None or ground is None:
            return [] if app is None and ground is None else None
        if app.decl() != ground.decl():
            return None
        return [a == g for a, g in zip(app.children(), ground.children())]

    target = None if z3.is_false(fact) else fact
    undecided = False
    for c in clauses:
        heads = same(c.head, target)
        bodies = same(c.body_preds[0] if c.body_preds else None, premise)
        if heads is None or bodies is None:
            continue
        r, _ = _decide(deadline, c.constraint, *heads, *bodies)
        if r == z3.sat:
            return None
        undecided = undecided or r == z3.unknown
    return ("unknown", "undecided by z3") if undecided else \
        ("rejected", "no clause of the file derives it from its premise")


# ------------------------------------------------------------------------------------------- the writer
# engines asked for invariants, in turn, when the answer's own evidence has none that hold (bmc's exhaustive
# unwinding has none at all, and its reachable states may not run out in time): TPA's (on loops in sequence
# the network's, which proves the multi-loop files Spacer does not), then Spacer's, each for at most these seconds
MODEL_SOURCES = (("tpa", 20.0), ("spacer", 10.0))
REACH_SECONDS = 10.0        # for the reachable states of a program bmc unwound exhaustively


def _invariants(verdict: Any, program: Program, deadline: Deadline) -> dict[int, z3.BoolRef] | str:
    """Cutpoint invariants for a sat answer's model: from its own evidence, else from `MODEL_SOURCES`."""
    from looprover.engines import verify
    from looprover.verdict import Status
    interp = cutpoint_invariants(verdict.evidence, program, deadline)
    why = interp if isinstance(interp, str) else ""
    if why and getattr(verdict.evidence, "kind", None) == "unwinding":
        got = reachable_states(program, deadline.cap(REACH_SECONDS))
        if not isinstance(got, str):
            return got          # exact, so safe and inductive; the file's clauses are checked in any case
        why += f"; {got}"
    for engine, cap in MODEL_SOURCES:
        budget = min(cap, deadline.left() - 1.0)
        if not why or budget < 0.5:
            break
        if engine == verdict.engine:
            continue
        v = verify(engine, program, timeout=budget)
        got = cutpoint_invariants(v.evidence, program, deadline) if v.status == Status.TRUE else \
            f"{engine} did not prove it in {budget:.0f} s"
        if not isinstance(got, str):
            return got
        why += f"; {got}"
    return interp if not why else why

def chc_witness(verdict: Any, program: Program, deadline: Deadline | None) -> Any:
    """The witness of a Horn-clause answer (`svcomp.Witness`): a model for sat, a derivation for unsat, each
    written only when `check_witness` confirms it on the file."""
    from looprover.verdict import Counterexample, Status
    from looprover.witness.svcomp import Witness
    if verdict.status == Status.UNKNOWN:
        return Witness(None, None, "no witness for UNKNOWN")
    dl = deadline if deadline is not None else Deadline.never()
    path = Path(program.source_file) if program.source_file else None
    if path is None:
        return Witness(None, None, "no witness: the clauses' file is not known")
    if verdict.status == Status.FALSE:
        if not isinstance(verdict.evidence, Counterexample):
            return Witness(None, None, "no derivation: no counterexample")
        text = derivation_text(verdict.evidence, program)
        if text is None:
            return Witness(None, None, "no derivation: the trace does not give every fact's values "
                                       "(an abbreviated run or array values)")
        kind, what = "violation", "derivation"
    else:
        interp = _invariants(verdict, program, dl)
        if isinstance(interp, str):
            return Witness(None, None, f"no model: {interp}")
        try:
            text = model_text(chc_model(program, interp, dl))
        except UnsupportedError as exc:
            return Witness(None, None, f"no model: {exc}")
        kind, what = "correctness", "model"
    res = check_witness(text, path, dl)
    if res.status != "confirmed":
        return Witness(None, None, f"no {what}: the check on the file's clauses does not confirm it ({res.reason})")
    how = "every clause holds for it" if what == "model" else "each step follows by a clause"
    return Witness(text, kind, f"a {what} of the file's clauses; z3 confirms {how}")
