"""The termination engine (issue 10, item 4): per-loop arguments for TRUE, checked lassos for FALSE.

What is tested: the shared examples; terminating loops (counters up and down, two variables ranked
lexicographically, nested loops, a loop that stops only because an unsigned counter wraps); non-terminating
ones (`while(1)`, a loop that keeps its state, a loop that never stops because of a wrap, a nondet loop);
what must never be TRUE (a loop that stops only by signed overflow in integer mode, irreducible `goto` cycles,
recursion); that the checks reject arguments and witnesses that do not hold (so a wrong candidate cannot
become a wrong answer); and, on random loops, that every argument found holds on concrete runs of the
interpreter and every witness's cycle keeps running concretely.
"""
from __future__ import annotations

import dataclasses
import json
import random

import pytest

from helpers.progdsl import Prog, add, c, ge, gt, le, lt, ne, sub
from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.engines.base import Task, vet
from looprover.frontend.c import load_c_program
from looprover.program.expr import I32, and_
from looprover.program.interp import Evaluator, Oracle, UndefinedBehavior, commit, try_edge
from looprover.program.loops import analyze_loops
from looprover.properties import Property
from looprover.termination.proof import TerminationProof
from looprover.termination.ranking import DISJUNCTIVE, LEX, NONE, RANKING, STRICT, LinearTerm, LoopArgument
from looprover.verdict import Counterexample, NonTermination, Status, Verdict
from looprover.evidence.nontermination import check_nontermination

TERMINATION = Task(Property("termination"))
HEADER = """extern int __VERIFIER_nondet_int(void); extern unsigned int __VERIFIER_nondet_uint(void);
extern _Bool __VERIFIER_nondet_bool(void); extern void __VERIFIER_assume(int);
extern void reach_error(void); extern void abort(void);
"""


def load(tmp_path, body: str, name: str = "p.c"):
    f = tmp_path / name
    f.write_text(HEADER + body)
    return load_c_program(f, "ILP32")


def term(program, timeout=20.0, bitvector=False):
    return verify("termination", program, TERMINATION, timeout=timeout, bitvector=bitvector)


# ------------------------------------------------------------------------------------------ shared examples
def test_shared_examples(shared_dir):
    ex = shared_dir / "examples"
    v = term(load_c_program(ex / "termination_counter.c"))
    assert v.status == Status.TRUE, v.reason
    assert isinstance(v.evidence, TerminationProof) and len(v.evidence.loops) == 1
    assert v.evidence.check(load_c_program(ex / "termination_counter.c"), False, Deadline.after(20)) is None
    prog = load_c_program(ex / "termination_nonterm.c")
    v = term(prog)
    assert v.status == Status.FALSE, v.reason
    w = v.evidence
    assert isinstance(w, NonTermination) and w.validated
    assert check_nontermination(prog, w, False, Deadline.after(20)) is None


def test_json_prints_the_argument_per_loop_and_the_lasso(shared_dir, capsys):
    from looprover import cli
    ex = shared_dir / "examples"
    assert cli.main(["verify", str(ex / "termination_counter.c"), "--property", "termination",
                     "--engine", "termination", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "TRUE" and data["property"] == "termination"
    (loop,) = data["proof"]["loops"]
    assert loop["location"].endswith("termination_counter.c:6") and loop["kind"] in (STRICT, RANKING)
    assert "x" in loop["argument"]
    assert cli.main(["verify", str(ex / "termination_nonterm.c"), "--property", "termination", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)       # through the portfolio, which re-checks the witness
    assert data["status"] == "FALSE" and data["nontermination"]["validated"]
    assert data["nontermination"]["loop_location"].endswith("termination_nonterm.c:5")
    assert data["nontermination"]["recurrent_set"] and data["nontermination"]["cycle"]["steps"]


# ------------------------------------------------------------------------------------------ terminating
TERMINATING = {
    "up": "int main(void){ int i = 0, n = __VERIFIER_nondet_int(); while (i < n) i++; return 0; }",
    "down": "int main(void){ int x = __VERIFIER_nondet_int(); while (x > 0) x = x - 2; return 0; }",
    "lex": """int main(void){ int x = __VERIFIER_nondet_int(), y = __VERIFIER_nondet_int();
              while (x > 0 && y > 0) { if (__VERIFIER_nondet_int()) { x--; y = __VERIFIER_nondet_int(); }
                                       else y--; } return 0; }""",
    "nested": """int main(void){ int n = __VERIFIER_nondet_int(), m = __VERIFIER_nondet_int(), i, j;
                 for (i = 0; i < n; i++) for (j = 0; j < m; j++) { } return 0; }""",
    "nested_inner_progress": """int main(void){ int i = 0, j, n = __VERIFIER_nondet_int();
                 while (i < n) { j = 0; while (j < 10 && i < n) { j++; i++; } i++; } return 0; }""",
    "unsigned_wrap": "int main(void){ unsigned x = __VERIFIER_nondet_uint(); while (x != 0) x++; return 0; }",
    "reach_error_ends": """int main(void){ int x = __VERIFIER_nondet_int();
                 while (1) { if (x > 0) { reach_error(); abort(); } x++; } return 0; }""",
    "blocked": "int main(void){ int x = __VERIFIER_nondet_int(); while (x > 0) __VERIFIER_assume(0); return 0; }",
}


@pytest.mark.parametrize("name", sorted(TERMINATING))
def test_terminating_loops_are_true(tmp_path, name):
    prog = load(tmp_path, TERMINATING[name])
    v = term(prog)
    assert v.status == Status.TRUE, v.reason
    proof = v.evidence
    assert {a.header for a in proof.loops} == set(analyze_loops(prog).loops)      # one argument per loop
    assert proof.check(prog, False, Deadline.after(20)) is None
    if name == "lex":
        assert [a.kind for a in proof.loops] == [LEX]
    if name == "unsigned_wrap":       # ranked on the wrapped values: the step UINT_MAX -> 0 is the last one
        assert proof.loops[0].kind in (STRICT, RANKING)


def test_no_loops_is_true(tmp_path):
    v = term(load(tmp_path, "int main(void){ int x = __VERIFIER_nondet_int(); return x > 0; }"))
    assert v.status == Status.TRUE and v.evidence.loops == ()


@pytest.mark.parametrize("name", ["up", "lex", "unsigned_wrap"])
def test_bitvector_mode(tmp_path, name):
    prog = load(tmp_path, TERMINATING[name])
    v = term(prog, bitvector=True)
    assert v.status == Status.TRUE, v.reason
    assert v.evidence.check(prog, True, Deadline.after(20)) is None


# ------------------------------------------------------------------------------------------ non-terminating
NONTERMINATING = {
    "while1": "int main(void){ while (1) { } return 0; }",
    "keeps_state": "int main(void){ int x = 1; while (x != 0) x = x; return 0; }",
    "uchar_wrap": "int main(void){ unsigned char c; for (c = 0; c < 256; c++) { } return 0; }",
    "uint_wrap": "int main(void){ unsigned i; for (i = 0; i <= 4294967295u; i += 2) { } return 0; }",
    "nondet_loop": """int main(void){ unsigned x = 0; while (__VERIFIER_nondet_int()) x += 2; return 0; }""",
    "random_walk": """int main(void){ int x = __VERIFIER_nondet_int();
                      while (x > 0) { int d = __VERIFIER_nondet_int(); __VERIFIER_assume(d >= 0 && d <= 2);
                                       x = x - 1 + d; } return 0; }""",
    "five_round_cycle": """int main(void){ int x = __VERIFIER_nondet_int();
                      while (x > 0) { x = x - 1; if (x == 5) x = 10; } return 0; }""",
    "after_a_loop": """int main(void){ int i = 0, x = __VERIFIER_nondet_int();
                      while (i < 3) i++; while (x >= 0) { x = x * 1; if (x > 0) x--; } return 0; }""",
}


@pytest.mark.parametrize("name", sorted(NONTERMINATING))
def test_nonterminating_loops_are_false(tmp_path, name):
    prog = load(tmp_path, NONTERMINATING[name])
    v = term(prog)
    assert v.status == Status.FALSE, v.reason
    w = v.evidence
    assert isinstance(w, NonTermination) and w.validated
    assert check_nontermination(prog, w, False, Deadline.after(20)) is None
    assert_cycle_runs(prog, w, rounds=60)


def test_nonterminating_bitvector(tmp_path):
    prog = load(tmp_path, NONTERMINATING["uchar_wrap"])
    v = term(prog, bitvector=True)
    assert v.status == Status.FALSE and v.evidence.validated


def assert_cycle_runs(program, w: NonTermination, rounds: int) -> None:
    """Execute the stem, then the cycle `rounds` times, with the interpreter: nothing blocks or fails."""
    from looprover.program.interp import InputOracle, initial_state
    ev = Evaluator("math")
    state = initial_state(program, w.stem_initial)
    oracle = InputOracle(program, (), list(w.stem_havocs), strict=True)
    for e in w.stem:
        r = try_edge(ev, e, state, oracle)
        assert r.blocked is None and r.violated is None
        state = commit(r)
    for _ in range(rounds):
        oracle = InputOracle(program, (), list(w.loop_havocs), strict=True)
        for e in w.loop:
            r = try_edge(ev, e, state, oracle)
            assert r.blocked is None and r.violated is None
            state = commit(r)
        assert ev.eval(w.recurrent, state) is True
    assert not ev.overflowed


# ------------------------------------------------------------------------------------------ never TRUE
def test_signed_overflow_is_not_a_proof(tmp_path):
    """`while (x > 0) x++` stops only by overflowing (undefined behaviour): no TRUE in integer mode, and no
    FALSE either (every infinite run overflows)."""
    v = term(load(tmp_path, "int main(void){ int x = 1; while (x > 0) x++; return 0; }"), timeout=5)
    assert v.status == Status.UNKNOWN, v.reason


def test_irreducible_loops_are_never_true(tmp_path):
    prog = load(tmp_path, """int main(void){ int x = __VERIFIER_nondet_int();
        if (__VERIFIER_nondet_int()) goto B;
        A: x--;
        B: x--; if (x > 0) goto A;
        return 0; }""")
    assert analyze_loops(prog).irreducible
    v = term(prog, timeout=4)
    assert v.status == Status.UNKNOWN and "irreducible" in v.reason


def test_recursion_is_refused(tmp_path):
    from looprover.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="recursion"):
        load(tmp_path, "int f(int n){ return n <= 0 ? 0 : f(n - 1); }\n"
                       "int main(void){ return f(__VERIFIER_nondet_int()); }")


def test_engines_declare_what_they_check(tmp_path):
    from looprover.engines import ENGINES
    prog = load(tmp_path, TERMINATING["up"])
    v = verify("termination", prog, Task(), timeout=5)
    assert v.status == Status.UNKNOWN and "unsupported property: unreach-call" in v.reason
    for name in ENGINES:
        if name != "termination":
            v = verify(name, prog, TERMINATION, timeout=5)
            assert v.status == Status.UNKNOWN and "unsupported property: termination" in v.reason


# ------------------------------------------------------------------------------------------ checks reject
def _counter(tmp_path):
    return load(tmp_path, "int main(void){ int x = __VERIFIER_nondet_int(); while (x < 255) x++; return 0; }")


def _proof(prog, *args):
    return TerminationProof((), tuple(args))


def test_proof_check_rejects_wrong_arguments(tmp_path):
    """Each of these would be a wrong TRUE if it were believed; the check rejects every one."""
    prog = _counter(tmp_path)
    (h,) = analyze_loops(prog).loops
    x = prog.var("x").name
    dl = Deadline.after(20)
    good = LoopArgument(h, STRICT, (LinearTerm(((x, -1),), 255),))
    assert _proof(prog, good).check(prog, False, dl) is None
    increasing = LoopArgument(h, RANKING, (LinearTerm(((x, 1),), 0),))          # does not decrease
    assert "fails" in _proof(prog, increasing).check(prog, False, dl)
    unbounded = LoopArgument(h, RANKING, (LinearTerm(((x, -1),), 0),))          # decreases, not bounded
    assert "fails" in _proof(prog, unbounded).check(prog, False, dl)
    assert "at most one iteration" in _proof(prog, LoopArgument(h, NONE)).check(prog, False, dl)
    assert "no argument" in _proof(prog).check(prog, False, dl)
    assert "not a loop header" in _proof(prog, good, dataclasses.replace(good, header=h + 100)).check(prog, False, dl)
    # a non-terminating loop with a claimed ranking function: rejected
    stuck = load(tmp_path, NONTERMINATING["keeps_state"], "stuck.c")
    (h2,) = analyze_loops(stuck).loops
    claim = LoopArgument(h2, RANKING, (LinearTerm(((stuck.var("x").name, 1),), 0),))
    assert "fails" in _proof(stuck, claim).check(stuck, False, dl)
    lex = LoopArgument(h2, LEX, (LinearTerm(((stuck.var("x").name, 1),), 0), LinearTerm((), 5)))
    assert "fails" in _proof(stuck, lex).check(stuck, False, dl)
    disj = LoopArgument(h2, DISJUNCTIVE, (LinearTerm(((stuck.var("x").name, 1),), 0),
                                          LinearTerm(((stuck.var("x").name, -1),), 0)))
    assert "fails" in _proof(stuck, disj).check(stuck, False, dl)


def test_proof_check_rejects_a_summary_that_is_not_inductive(tmp_path):
    """An outer loop proved from a false claim about its inner loop (`j` unchanged) is rejected."""
    from looprover.program.expr import Var, cmp
    prog = load(tmp_path, """int main(void){ int i = 0, j = 0, n = __VERIFIER_nondet_int();
        while (i < n) { while (j < n) j++; i++; } return 0; }""")
    v = term(prog)
    assert v.status == Status.TRUE, v.reason
    outer = next(a for a in v.evidence.loops if a.summary)
    inner_node = outer.summary[0][0]
    j = prog.var("j")
    wrong = cmp("==", j, Var(j.name + "@entry", j.type))
    bad = dataclasses.replace(outer, summary=outer.summary + ((inner_node, wrong),))
    proof = dataclasses.replace(v.evidence, loops=tuple(bad if a is outer else a for a in v.evidence.loops))
    assert "summary" in proof.check(prog, False, Deadline.after(20))


def test_nontermination_check_rejects_wrong_witnesses(tmp_path):
    prog = load(tmp_path, NONTERMINATING["keeps_state"])
    v = term(prog)
    w: NonTermination = v.evidence
    dl = Deadline.after(20)
    assert check_nontermination(prog, w, False, dl) is None
    x = prog.var("x")
    # the recurrent set does not contain the stem's last state (x = 1)
    bad = dataclasses.replace(w, recurrent=lt(x, c(0)), validated=False)
    assert "not in the recurrent set" in check_nontermination(prog, bad, False, dl)
    # the stem does not reach the loop / uses other inputs
    assert check_nontermination(prog, dataclasses.replace(w, stem=[]), False, dl)
    assert check_nontermination(prog, dataclasses.replace(w, stem_havocs=w.stem_havocs + [7]), False, dl)
    walk = load(tmp_path, NONTERMINATING["random_walk"], "walk.c")
    ww = term(walk).evidence
    assert check_nontermination(walk, ww, False, dl) is None
    huge = dataclasses.replace(ww, stem_havocs=[2 ** 40] + ww.stem_havocs[1:])        # not an int
    assert "do not fit" in check_nontermination(walk, huge, False, dl)
    # on the terminating counter: x < 255 is not closed under x++ (255 leaves it)
    counter = _counter(tmp_path)
    (h,) = analyze_loops(counter).loops
    body = [e for e in counter.edges if e.src == h and e.dst != counter.exit]
    loop = body + [e for e in counter.edges if e.src == body[0].dst and e.dst == h]
    stem = [e for e in counter.edges if e.src == counter.init]
    cx = counter.var("x")
    fake = NonTermination(h, stem, {}, [0], loop, [], lt(cx, c(255)))
    assert "not always enabled" in check_nontermination(counter, fake, False, dl)
    # a cycle that needs signed overflow: `while (x > 0) x++` with R = x > 0
    ovf = load(tmp_path, "int main(void){ int x = 1; while (x > 0) x++; return 0; }", "ovf.c")
    (h,) = analyze_loops(ovf).loops
    stem = [e for e in ovf.edges if e.src == ovf.init]
    body = [e for e in ovf.edges if e.src == h and e.dst != ovf.exit]
    loop = body + [e for e in ovf.edges if e.src == body[0].dst and e.dst == h]
    fake = NonTermination(h, stem, {}, [], loop, [], gt(ovf.var("x"), c(0)))
    assert "not always enabled" in check_nontermination(ovf, fake, False, dl)


def test_vet_wants_the_evidence_the_property_needs(tmp_path):
    prog = load(tmp_path, NONTERMINATING["keeps_state"])
    w = term(prog).evidence
    ok = Verdict(Status.FALSE, "termination", "lasso", w)
    assert vet(ok, TERMINATION).status == Status.FALSE
    assert vet(ok, Task()).status == Status.UNKNOWN                 # not evidence of a reachable error
    assert vet(ok).status == Status.UNKNOWN
    unchecked = dataclasses.replace(ok, evidence=dataclasses.replace(w, validated=False))
    assert vet(unchecked, TERMINATION).status == Status.UNKNOWN
    cex = Counterexample([], [], validated=True)                     # reaching reach_error ends an execution
    assert vet(dataclasses.replace(ok, evidence=cex), TERMINATION).status == Status.UNKNOWN


# ------------------------------------------------------------------------------------------ random loops
class _RandomInputs(Oracle):
    def __init__(self, rng: random.Random):
        self.rng = rng

    def __call__(self, v):
        return v.type.wrap(self.rng.randint(-8, 12)) if hasattr(v.type, "wrap") else self.rng.random() < 0.5


def random_program(seed: int):
    """A random loop program over x, y, z with inputs in [-20, 20]: a loop of a random shape -- counting up to
    or down to a bound, two variables ranked lexicographically, an outer counter around one of these, or an
    arbitrary body -- with random steps, bounds and noise on the other variables. Most terminate, some not."""
    r = random.Random(seed)
    p = Prog(f"r{seed}")
    x, y, z = (p.var(n, I32) for n in "xyz")
    inp = p.var("in", I32, "nondet")
    for v in (x, y, z):
        p.havoc(inp)
        p.assign(v, inp)
        p.assume(and_(ge(v, c(-20)), le(v, c(20))))

    def noise(v):
        k = r.random()
        if k < 0.3:
            p.assign(v, add(v, c(r.choice([1, -1, 3]))))
        elif k < 0.6:
            p.havoc(inp)
            p.assume(and_(ge(inp, c(-5)), le(inp, c(5))))
            p.assign(v, inp)
        elif k < 0.8:
            with p.if_(gt(v, c(0))) as els:
                p.assign(v, sub(v, c(1)))
                els()
                p.assign(v, add(v, c(2)))

    def loop(vs, depth):
        a, b, o = vs
        shape = r.choice(["up", "down", "lex", "nested" if depth == 1 else "up", "any"])
        if shape == "up":
            with p.while_(lt(a, add(b, c(r.randint(-2, 4))))):
                noise(o)
                p.assign(a, add(a, c(r.choice([1, 2, r.randint(-1, 2)]))))
        elif shape == "down":
            with p.while_(gt(a, c(r.randint(-3, 3)))):
                p.assign(a, sub(a, c(r.choice([1, 3, r.randint(-1, 2)]))))
                noise(r.choice([b, o]))
        elif shape == "lex":
            with p.while_(and_(gt(a, c(0)), gt(b, c(0)))):
                with p.if_(None) as els:
                    p.assign(a, sub(a, c(1)))
                    p.havoc(inp)
                    p.assume(and_(ge(inp, c(0)), le(inp, c(r.choice([3, 30])))))
                    p.assign(b, inp)
                    els()
                    p.assign(b, sub(b, c(r.choice([1, 1, 0]))))
        elif shape == "nested":
            with p.while_(lt(o, c(r.randint(0, 6)))):
                p.assign(a, c(r.randint(-2, 2)))
                loop((a, b, z if o is not z else x), depth + 1)
                p.assign(o, add(o, c(1)))
        else:
            with p.while_(r.choice([ne(a, b), gt(a, b), lt(a, c(5))])):
                p.assign(a, add(a, r.choice([b, c(1), o])))
                noise(b)

    vs = [x, y, z]
    r.shuffle(vs)
    loop(tuple(vs), 1)
    if r.random() < 0.3:
        r.shuffle(vs)
        loop(tuple(vs), 2)
    return p.build()


def concrete_runs(program, seed: int, runs: int = 25, steps: int = 600):
    """Random runs of the interpreter: per run, the (location, state) sequence."""
    rng = random.Random(seed)
    out = []
    for _ in range(runs):
        ev = Evaluator("math")
        oracle = _RandomInputs(rng)
        state = {n: 0 for n in program.variables}
        loc, trace = program.init, []
        try:
            for _ in range(steps):
                trace.append((loc, dict(state)))
                if loc == program.exit:
                    break
                edges = list(program.out_edges(loc))
                rng.shuffle(edges)
                for e in edges:
                    res = try_edge(ev, e, state, oracle)
                    if res.blocked is None and res.violated is None:
                        state, loc = commit(res), e.dst
                        break
                else:
                    break
        except UndefinedBehavior:
            pass
        out.append(trace)
    return out


def holds(arg: LoopArgument, s0: dict, s1: dict) -> bool:
    """The argument's condition on one concrete step s0 -> s1 (which is followed by another step)."""
    def down(u: LinearTerm) -> bool:
        return u.value(s0) > u.value(s1) and u.value(s0) >= 0

    t = arg.terms
    if arg.kind == NONE:
        return False
    if arg.kind in (STRICT, RANKING):
        return down(t[0])
    if arg.kind == LEX:
        return any(all(u.value(s0) >= u.value(s1) for u in t[:i]) and down(ti) for i, ti in enumerate(t))
    return any(down(u) for u in t)


def iteration_chains(trace, loop):
    """Maximal sequences of consecutive visits of the loop's head with only the loop's body in between."""
    chains, cur = [], []
    for loc, st in trace:
        if loc == loop.header:
            cur.append(st)
        elif loc not in loop.body:
            if len(cur) > 1:
                chains.append(cur)
            cur = []
    if len(cur) > 1:
        chains.append(cur)
    return chains


def test_arguments_hold_on_random_concrete_runs():
    """Property-based soundness: for random loop programs, every argument of a TRUE decreases and stays bounded
    (its kind's condition) on every step of concrete runs that is followed by another step of the same loop;
    a disjunctive one between any two iterations. For a FALSE, the witness's cycle keeps running."""
    answered = {Status.TRUE: 0, Status.FALSE: 0}
    checked_steps = 0
    for seed in range(12):
        prog = random_program(seed)
        v = term(prog, timeout=3)
        if v.status == Status.UNKNOWN:
            continue
        answered[v.status] += 1
        if v.status == Status.FALSE:
            assert_cycle_runs(prog, v.evidence, rounds=40)
            continue
        forest = analyze_loops(prog)
        args = {a.header: a for a in v.evidence.loops}
        assert set(args) == set(forest.loops)
        for trace in concrete_runs(prog, seed):
            for h, arg in args.items():
                for chain in iteration_chains(trace, forest.loops[h]):
                    for i in range(len(chain) - 2):            # T2: the step i -> i+1 is followed by another
                        checked_steps += 1
                        assert holds(arg, chain[i], chain[i + 1]), (seed, arg, chain[i], chain[i + 1])
                    if arg.kind == DISJUNCTIVE:
                        for i in range(len(chain) - 1):
                            for j in range(i + 1, len(chain) - 1):
                                assert holds(arg, chain[i], chain[j]), (seed, arg)
    assert answered[Status.TRUE] >= 4 and answered[Status.FALSE] >= 1, answered
    assert checked_steps > 100
