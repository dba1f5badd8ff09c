"""Under-approximating acceleration (`transforms/accelerate.py`, `transforms/expand.py`), without an engine.

The direction of the guarantee is tested as a property: random runs of the accelerated program, mapped back
step by step (each accelerated step expanded to its iterations), must be runs of the original program that
reach the same location with the same values. The rest pins down what gets an accelerated branch and why
not, the closed forms and guards, and the C the transform prints. The `accel` engine end to end:
tests/engines/test_accel.py.
"""
from __future__ import annotations

import random
import subprocess
from fractions import Fraction

import pytest

from looprover.linalg import solve_exact
from looprover.program import interp
from looprover.program.cfa import Assume, Program
from looprover.program.expr import I32, U8, U32, ArrayType, BoolType, Var, binary, cast, cmp, const
from looprover.program.interp import ArrayValue, Evaluator, Oracle, UndefinedBehavior, commit, try_edge
from looprover.transforms.accelerate import AccelOptions, AccelerateTransform, accelerate, wide_type
from looprover.transforms.closed_forms import (
    MathForm, check_inductive, fit, syntactic_form, template,
)
from looprover.transforms.expand import ExpandAccelerated
from looprover.verdict import TraceStep
from looprover.evidence.replay import ModelCounterexample

from helpers.progdsl import Prog, add, c, eq, ge, le, lt, mul, ne, sel, sub
from helpers.randprog import random_program

W = wide_type(32)
FAST = AccelOptions(query_timeout=0.3)      # random programs: a solver query that needs longer is a lost path


# ------------------------------------------------------------------------------------ the guarantee
class RandomOracle(Oracle):
    """Random havoc values, kept in the order the run keeps them: small iteration counts for the accelerated
    branches (so that their guards can hold), small values elsewhere."""

    def __init__(self, rng: random.Random, counts: set[str]):
        self.rng, self.counts, self.values = rng, counts, ()

    def __call__(self, v: Var):
        if v.name in self.counts:
            x = self.rng.randint(1, 4)
        elif isinstance(v.type, ArrayType):
            x = ArrayValue(0)
        elif isinstance(v.type, BoolType):
            x = self.rng.random() < 0.5
        else:
            x = v.type.wrap(self.rng.randint(-3, 5))
        self.values += (x,)
        return x

    def snapshot(self):
        return self.values

    def restore(self, snap) -> None:
        self.values = snap


def check_runs_map_back(original: Program, runs: int, seed: int) -> int:
    """Random runs of the accelerated program; after each of its steps, the step's expansion must have run on
    `original` (every edge enabled) to the same location and values. Returns the accelerated steps taken."""
    t = AccelerateTransform().apply(original, FAST)
    back: ExpandAccelerated = t.back
    counts = {acc.edge.stmts[0].vars[0].name for acc in back.accels.values()}
    rng = random.Random(seed)
    taken = 0
    for _ in range(runs):
        oracle = RandomOracle(rng, counts)

        def choose(es):
            accs = [e for e in es if e in back.accels]
            return rng.choice(accs) if accs and rng.random() < 0.8 else rng.choice(es)

        res = interp.run(t.program, oracle, choose=choose, max_steps=300)
        cex = ModelCounterexample([TraceStep(e, None, {}) for e in res.edges], [], {}, havocs=list(oracle.values))
        ev, tev = Evaluator("math"), Evaluator("math")
        state, tstate = interp.initial_state(original), interp.initial_state(t.program)
        tfeed = interp.InputOracle(t.program, havocs=list(oracle.values), strict=True)
        loc = original.init
        for edge, vals in back.steps(cex):
            taken += edge in back.accels
            violated = False
            for e, v in back.edges(edge, vals):
                assert e.src == loc and e in original.out_edges(loc), f"not an edge of the original at L{loc}"
                r = try_edge(ev, e, state, interp.InputOracle(original, havocs=v, strict=True))
                assert r.blocked is None, f"the expansion of {edge} is blocked on the original: {r.blocked}"
                state, loc, violated = commit(r), e.dst, r.violated is not None
                if violated:
                    break
            rt = try_edge(tev, edge, tstate, tfeed)
            tstate = commit(rt)
            assert violated == (rt.violated is not None)
            if violated:
                break
            assert loc == edge.dst
            for name in original.variables:
                assert state[name] == tstate[name], f"{name}: original {state[name]}, accelerated {tstate[name]}"
    return taken


@pytest.mark.parametrize("seed", range(40))
def test_runs_of_the_accelerated_program_are_runs_of_the_original(seed):
    check_runs_map_back(random_program(seed), 40, seed)


def test_random_programs_get_accelerated_branches_and_runs_take_them():
    """The property above is not vacuous: the random programs get branches, and random runs take them."""
    programs = total = 0
    for seed in range(12):
        p = random_program(seed)
        if accelerate(p, FAST).accelerators:
            programs += 1
            total += check_runs_map_back(p, 10, 100 + seed)
    assert programs >= 4 and total >= 20, (programs, total)


def phases_program(bound: int = 40):
    """x counts to `bound`, by 1 below 10 and by 3 from there; y counts the big steps."""
    p = Prog("phases")
    x, y = p.var("x", I32), p.var("y", I32)
    p.assign(x, c(0))
    p.assign(y, c(0))
    with p.while_(lt(x, c(bound))):
        with p.if_(lt(x, c(10))) as els:
            p.assign(x, add(x, c(1)))
            els()
            p.assign(x, add(x, c(3)))
            p.assign(y, add(y, c(1)))
    p.assert_(ne(y, c(100)))
    return p.build()


def test_phases_map_back_with_accelerated_steps():
    assert check_runs_map_back(phases_program(), 30, 7) >= 10


# ------------------------------------------------------------------------------------ what gets a branch
def notes_of(p: Program) -> str:
    return "\n".join(accelerate(p).notes)


def test_counter_gets_offset_forms_and_endpoint_guards():
    p = Prog("count")
    x, y = p.var("x", U32), p.var("y", U32)
    p.assign(x, c(0, U32))
    p.assign(y, c(0, U32))
    with p.while_(lt(x, c(1000, U32))):
        p.assign(x, add(x, c(1, U32)))
        p.assign(y, add(y, c(2, U32)))
    p.assert_(ne(y, c(2000, U32)))
    res = accelerate(p.build())
    assert len(res.accelerators) == 1
    (acc,), = [list(res.accelerators.values())]
    assert "x: offset" in acc.describe and "y: offset" in acc.describe
    assert "quantified" not in acc.describe and "affine" in acc.describe
    assert acc.edge.src == acc.edge.dst          # a branch at the header, back to it


def test_each_phase_gets_a_branch():
    res = accelerate(phases_program())
    assert len(res.accelerators) == 2, res.notes


def test_a_path_only_one_iteration_takes_gets_no_branch():
    """`if (x == 5) y++` cannot be taken twice in a row: that path is no phase."""
    p = Prog("once")
    x, y = p.var("x", I32), p.var("y", I32)
    p.assign(x, c(0))
    p.assign(y, c(0))
    with p.while_(lt(x, c(100))):
        with p.if_(cmp("==", x, c(5))):
            p.assign(y, add(y, c(1)))
        p.assign(x, add(x, c(1)))
    p.assert_(ne(y, c(2)))
    res = accelerate(p.build())
    assert len(res.accelerators) == 1
    acc, = res.accelerators.values()
    assert "y" not in acc.describe.split(";")[0]      # the accelerated path does not touch y


def test_no_closed_form_means_no_branch():
    """x = 2x has no polynomial closed form: the path is refused, x is never left unchanged."""
    p = Prog("double")
    x, i = p.var("x", I32), p.var("i", I32)
    p.assign(x, c(1))
    p.assign(i, c(0))
    with p.while_(lt(i, c(20))):
        p.assign(x, mul(x, c(2)))
        p.assign(i, add(i, c(1)))
    p.assert_(ne(x, c(0)))
    res = accelerate(p.build())
    assert not res.accelerators and "no closed form for x" in "\n".join(res.notes)


def test_triangular_sum_is_fitted():
    p = Prog("tri")
    s, i = p.var("s", I32), p.var("i", I32)
    p.assign(s, c(0))
    p.assign(i, c(0))
    with p.while_(lt(i, c(1000))):
        p.assign(s, add(s, i))
        p.assign(i, add(i, c(1)))
    p.assert_(ne(s, c(3)))
    res = accelerate(p.build())
    acc, = res.accelerators.values()
    assert "s: polynomial" in acc.describe and "i: offset" in acc.describe


def test_arrays_written_twice_or_read_are_refused_and_a_single_write_is_a_fill():
    def program(kind: str):
        p = Prog(kind)
        a = p.var("a", ArrayType(I32, I32, 100))
        i = p.var("i", I32)
        p.assign(i, c(0))
        with p.while_(lt(i, c(50))):
            p.store(a, i, cast(I32, c(7)) if kind != "read" else add(sel(a, i), c(1)))
            if kind == "twice":
                p.store(a, add(i, c(1)), c(8))
            if kind == "square":
                p.store(a, mul(i, i), c(8))
            p.assign(i, add(i, c(1)))
        p.assert_(ne(sel(a, c(3)), c(9)))
        return p.build()
    res = accelerate(program("fill"))
    acc, = res.accelerators.values()
    assert "fill, stride 1" in acc.describe
    assert "not written exactly once" in notes_of(program("twice"))
    assert "reads array(s) it writes" in notes_of(program("read"))
    assert not accelerate(program("square")).accelerators


def test_read_only_array_guard_moves_the_quantifier_to_the_cells():
    p = Prog("scan")
    a = p.var("a", ArrayType(I32, U8, 100))
    i = p.var("i", I32)
    p.assign(i, c(0))
    with p.while_(ne(sel(a, i), c(0, U8))):
        p.assign(i, add(i, c(1)))
    p.assert_(ne(i, c(50)))
    acc, = accelerate(p.build()).accelerators.values()
    assert "array cells" in acc.describe


def test_non_monotone_guard_is_eliminated_by_z3():
    """`i != 5` over the iterations is no monotone predicate; z3's QE gives `i > 5 || i + n <= 5`."""
    p = Prog("skip5")
    i, j = p.var("i", I32), p.var("j", I32)
    p.assign(i, c(0))
    p.havoc(j)
    with p.while_(lt(j, c(100))):
        p.assume(ne(i, c(5)))
        p.assign(i, add(i, c(1)))
        p.assign(j, add(j, c(1)))
    p.assert_(ne(i, c(4)))
    acc, = accelerate(p.build()).accelerators.values()
    assert "z3 qe" in acc.describe


def test_inner_loop_first_and_outer_path_through_its_branch():
    p = Prog("nest")
    x, y = p.var("x", U32), p.var("y", U32)
    p.assign(x, c(0, U32))
    with p.while_(lt(x, c(100000, U32))):
        p.assign(y, c(0, U32))
        with p.while_(lt(y, c(10, U32))):
            p.assign(y, add(y, c(1, U32)))
        p.assign(x, add(x, c(1, U32)))
    p.assert_(ne(x, c(100000, U32)))
    prog = p.build()
    res = accelerate(prog)
    assert len(res.accelerators) == 2, res.notes
    inner, outer = res.accelerators.values()
    assert any(e in res.accelerators for e in outer.path)          # the outer path takes the inner branch
    assert check_runs_map_back(prog, 5, 3) > 0


def test_signed_overflow_is_outside_every_branch():
    """An accelerated step never overflows: from x = INT_MAX - 3, at most 3 increments fit."""
    p = Prog("ovf")
    x = p.var("x", I32)
    p.havoc(x)
    with p.while_(None):
        p.assign(x, add(x, c(1)))
    acc, = accelerate(p.build()).accelerators.values()
    ev = Evaluator("math")
    count = acc.edge.stmts[0].vars[0]
    assumes = [s.cond for s in acc.edge.stmts if isinstance(s, Assume)]
    for n, ok in ((3, True), (4, False)):
        state = {"x": 2**31 - 1 - 3, count.name: n}
        assert all(ev.eval(a, state) for a in assumes) == ok


def test_cli_prints_the_accelerated_program_and_gcc_compiles_it(gcc, tmp_path, capsys):
    from looprover import cli
    src = tmp_path / "cnt.c"
    src.write_text("extern void __assert_fail(const char *, const char *, unsigned int, const char *);\n"
                   "void reach_error(void) { __assert_fail(\"0\", \"f\", 0, \"r\"); }\n"
                   "int main(void) { unsigned x = 0, y = 0; while (x < 1000u) { x++; y += 2; }\n"
                   "  if (y == 2000u) reach_error(); return 0; }\n")
    assert cli.main(["transform", "--technique", "accelerate", str(src)]) == 0
    out = capsys.readouterr().out
    assert "acc" in out and "__int128" in out
    (tmp_path / "acc.c").write_text(out)
    r = subprocess.run([gcc, "-std=gnu11", "-c", "-o", str(tmp_path / "acc.o"), str(tmp_path / "acc.c")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_printed_fill_and_quantifier_run_like_the_interpreter():
    """The C printed for an accelerated program with an array fill and a quantified guard, compiled and run
    (`evidence.native`), reaches the violation exactly when the interpreter does, on the same havoc values."""
    from looprover.evidence import native
    p = Prog("fillq")
    a = p.var("a", ArrayType(I32, I32, 64))
    i, j = p.var("i", I32), p.var("j", I32)
    p.assign(i, c(0))
    p.havoc(j)
    with p.while_(lt(i, c(40))):
        p.assume(ne(i, j))
        p.store(a, i, mul(i, c(3)))
        p.assign(i, add(i, c(1)))
    p.assert_(ne(sel(a, c(30)), c(90)))
    res = accelerate(p.build())
    acc, = res.accelerators.values()
    assert "fill" in acc.describe and "z3 qe" in acc.describe
    prog = res.program
    if native.why_not(prog) is not None:
        pytest.skip(native.why_not(prog))
    # C's choice at the header reads an input (0: not the plain iteration), then the branch reads its count;
    # later choices read 1 (take the enabled edge). (j, n): the fill alone writes a[30] = 90; the quantified
    # guard blocks (j met); concrete iterations after 10 accelerated ones write it.
    for j_val, n, bad in ((-1, 40, True), (30, 40, False), (45, 10, True)):
        compiled = native.run(prog, {}, [j_val, 0, n] + [1] * 60, 20) is None
        r = interp.run(prog, interp.InputOracle(prog, havocs=[j_val, n]), max_steps=100,
                       choose=lambda es: next(e for e in es if e in res.accelerators))
        assert compiled == bad == (r.outcome == "violation"), (j_val, n, r.outcome)


# ------------------------------------------------------------------------------------ closed forms
def test_solve_exact_finds_rational_solutions_and_detects_inconsistency():
    rows = [[Fraction(1), Fraction(0)], [Fraction(1), Fraction(1)], [Fraction(1), Fraction(2)]]
    assert solve_exact(rows, [Fraction(1), Fraction(3, 2), Fraction(2)]) == [1, Fraction(1, 2)]
    assert solve_exact(rows, [Fraction(1), Fraction(2), Fraction(4)]) is None


def test_fit_and_inductive_check():
    i, s = Var("i", I32), Var("s", I32)
    n = Var("n", W)
    # s(n) = s0 + i0*n + n(n-1)/2 for `s += i; i++`
    samples = []
    for s0, i0 in ((0, 0), (3, 1), (-2, 5), (7, 2)):
        ss, ii = s0, i0
        for k in range(4):
            samples.append(({i: i0, s: s0}, k, ss))
            ss, ii = ss + ii, ii + 1
    form = fit(s, template([i, s]), samples, n, W)
    assert form is not None and form.denominator == 2
    upd_s = binary("+", cast(W, s), cast(W, i))
    upd_i = binary("+", cast(W, i), const(1, W))
    fi = syntactic_form(i, upd_i, n, lambda e: True)
    assert fi.kind == "offset"
    assert check_inductive([form, fi], {s: upd_s, i: upd_i}, [], n, 5000) == []
    wrong = MathForm(s, binary("+", cast(W, s), binary("*", cast(W, i), n)), 1, "polynomial")
    assert check_inductive([wrong, fi], {s: upd_s, i: upd_i}, [], n, 5000) == [s]


def test_alternating_form():
    x = Var("x", I32)
    n = Var("n", W)
    f = syntactic_form(x, binary("-", const(10, W), cast(W, x)), n, lambda e: True)
    assert f.kind == "alternating"
    ev = Evaluator("math")
    for k, want in ((0, 3), (1, 7), (2, 3), (5, 7)):
        assert ev.eval(f.at(n, const(k, W)), {"x": 3}) == want


def test_array_fill_interpreter_and_range():
    from looprover.program.expr import ArrayFill
    k = Var("__lr_k", W)
    a = Var("a", ArrayType(I32, I32, 10))
    f = ArrayFill(a, const(8, W), -2, Var("n", W), k, cast(I32, k), a.type)
    ev = Evaluator("math")
    out = ev.eval(f, {"a": ArrayValue(5), "n": 3})
    assert out.cells == {8: 0, 6: 1, 4: 2}
    with pytest.raises(UndefinedBehavior):
        ev.eval(ArrayFill(a, const(2**31 - 1, W), 1, Var("n", W), k, const(0, I32), a.type), {"a": ArrayValue(0), "n": 2})



def pointer_copy_program(bound: int = 30, self_read: bool = False, step_pointer: bool = False):
    """A copy through a pointer that may designate either of two arrays: as the front-end writes it, each write
    is a write of both, `a[i] = id == 1 ? v : a[i]`; `id` (which object) is the same in every iteration.
    `step_pointer`: the body also assigns `id = id`, as the front-end writes `p++` (object kept, offset stepped)."""
    from looprover.program.expr import ite
    p = Prog("ptrcopy")
    a = p.var("a", ArrayType(I32, I32, 100))
    b = p.var("b", ArrayType(I32, I32, 100))
    src = p.var("src", ArrayType(I32, I32, 100))
    i = p.var("i", I32)
    pid = p.var("id", I32, kind="nondet")
    p.havoc(pid)
    p.assume(ge(pid, c(1)))
    p.assume(le(pid, c(3)))
    p.assign(i, c(0))
    with p.while_(lt(i, c(bound))):
        v = sel(a, sub(i, c(1))) if self_read else add(sel(src, i), c(5))
        p.store(a, i, ite(eq(pid, c(1)), v, sel(a, i)))
        p.store(b, i, ite(eq(pid, c(2)), v, sel(b, i)))
        if step_pointer:
            p.assign(pid, pid)
        p.assign(i, add(i, c(1)))
    p.assert_(ne(sel(b, c(20)), c(9)))
    return p.build()


def test_a_write_through_a_pointer_to_one_of_several_arrays_is_split_on_which_one():
    """The path reads the arrays it writes (`a[i] = id == 1 ? v : a[i]`) until it is split on `id == 1` and
    `id == 2`, which no iteration changes: each variant writes at most one array, as a fill."""
    notes = notes_of(pointer_copy_program())
    assert "assuming (!(id == 1)), (!(id == 2))" in notes and "assuming (id == 1), (!(id == 2))" in notes, notes
    assert notes.count("fill, stride 1") >= 2, notes
    # a variant whose write reads the array it writes stays refused; the others are still accelerated
    notes = notes_of(pointer_copy_program(self_read=True))
    assert "reads array(s) it writes: a" in notes and "assuming (id == 1)" not in notes.split("reads")[0], notes
    assert "b: fill, stride 1" in notes, notes


def test_a_pointer_assigned_to_itself_still_designates_the_same_object():
    """`id = id` (the front-end's `p++`) changes no write condition: the path is split as without it (Verisec's
    glob3 copy loop `*dc = *sc; old = dc; dc++; ...; if (*old == EOS) break;` went unaccelerated)."""
    notes = notes_of(pointer_copy_program(step_pointer=True))
    assert "assuming (id == 1), (!(id == 2))" in notes and notes.count("fill, stride 1") >= 2, notes


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("step_pointer", [False, True])
def test_runs_through_the_split_branches_are_runs_of_the_original(seed, step_pointer):
    """Each variant under-approximates the path: every run through its branch expands to a run of the original
    to the same state (the iteration counts and `id` are random; `id` == 3 writes neither array)."""
    assert check_runs_map_back(pointer_copy_program(bound=6, step_pointer=step_pointer), 30, seed) > 0


def write_loop(name: str, bound: int, body):
    """`i = 0; while (i < bound) { havoc x; a[i] = x + 1; body(p, a, i, x) }; assert(a[20] != 9)`."""
    p = Prog(name)
    a = p.var("a", ArrayType(I32, I32, 100))
    i = p.var("i", I32)
    x = p.var("x", I32, kind="nondet")
    p.assign(i, c(0))
    with p.while_(lt(i, c(bound))):
        p.havoc(x)
        p.store(a, i, add(x, c(1)))
        body(p, a, i, x)
    p.assert_(ne(sel(a, c(20)), c(9)))
    return p.build()


def read_back_program(bound: int = 30):
    """`a[i] = x + 1; assume(a[i] != 10); i++`: the path reads the cell it has just written (the value written)."""
    def body(p, a, i, x):
        p.assume(ne(sel(a, i), c(10)))
        p.assign(i, add(i, c(1)))
    return write_loop("readback", bound, body)


def test_a_read_of_the_cell_just_written_is_the_value_written():
    notes = notes_of(read_back_program())
    assert "a: fill, stride 1" in notes and "reads array" not in notes, notes


@pytest.mark.parametrize("seed", range(4))
def test_runs_through_a_read_back_branch_are_runs_of_the_original(seed):
    assert check_runs_map_back(read_back_program(bound=6), 30, seed) > 0


def pair_program(bound: int = 30, second: int = 1):
    """`a[i] = x + 1; a[i + second] = x + 2; i += 2`: two writes per iteration (a copy loop taking two
    characters a turn)."""
    def body(p, a, i, x):
        p.store(a, add(i, c(second)), add(x, c(2)))
        p.assign(i, add(i, c(2)))
    return write_loop("pair", bound, body)


def test_two_writes_per_iteration_are_two_fills_when_they_never_meet():
    """Cells i + 2k and i + 1 + 2k' never meet: one fill each. Cells i + 2k and i + 2 + 2k' do (the second
    write of one iteration is the first of the next): refused, as their order across iterations matters."""
    assert "a: fill, stride 2, 2" in notes_of(pair_program())
    assert "not written exactly once" in notes_of(pair_program(second=2))


@pytest.mark.parametrize("seed", range(4))
def test_runs_through_a_two_write_branch_are_runs_of_the_original(seed):
    assert check_runs_map_back(pair_program(bound=8), 30, seed) > 0


def test_paths_that_cannot_be_accelerated_do_not_use_up_max_paths():
    """`max_paths` counts accelerated paths: a path refused (x = 2x + 1 has no polynomial closed form) does not
    take the place of one behind it (x += 3) that a loop spends its iterations on."""
    p = Prog("refused_first")
    x, y = p.var("x", I32), p.var("y", I32)
    p.assign(x, c(0))
    p.assign(y, c(0))
    with p.while_(lt(x, c(1000))):
        with p.if_(ge(x, c(10))) as els:
            p.assign(x, add(x, c(3)))
            p.assign(y, add(y, c(1)))
            els()
            p.assign(x, add(mul(x, c(2)), c(1)))
    p.assert_(ne(y, c(300)))
    res = accelerate(p.build(), AccelOptions(max_paths=1))
    assert len(res.accelerators) == 1, res.notes
    acc, = res.accelerators.values()
    assert "y: offset" in acc.describe, res.notes


def lookahead_program(bound: int = 20):
    """`if (c != 5) { c = i; i += 1 } else i += 2`: the path's guard reads the c the previous iteration wrote
    (a scanner's lookahead character, Verisec's prescan), so iteration 0 tests the c from before the loop and
    iteration k >= 1 tests i0 + k - 1."""
    p = Prog("lookahead")
    ch, i = p.var("c", I32), p.var("i", I32)
    p.havoc(ch, i)
    with p.while_(lt(i, c(bound))):
        with p.if_(ne(ch, c(5))) as els:
            p.assign(ch, i)
            p.assign(i, add(i, c(1)))
            els()
            p.assign(i, add(i, c(2)))
    p.assert_(ne(i, c(17)))
    return p.build()


def test_a_guard_on_the_previous_iterations_value_is_taken_on_it():
    notes = notes_of(lookahead_program())
    assert "c: last iteration, i: offset" in notes and "previous iteration" not in notes, notes


@pytest.mark.parametrize("seed", range(6))
def test_runs_through_a_lookahead_branch_are_runs_of_the_original(seed):
    assert check_runs_map_back(lookahead_program(), 30, seed) > 0


def test_a_lookahead_branch_takes_exactly_the_iterations_the_original_can():
    """From c = 0, i = 3 the original takes the path 3 times (c becomes 3, 4, 5; the 4th test sees c = 5):
    the branch with n = 3 runs, with n = 4 it is blocked. Both directions, so the split guard is neither
    weaker (not an under-approximation) nor stronger (bugs behind it missed) than the n iterations."""
    t = AccelerateTransform().apply(lookahead_program(), FAST)
    edge = next(e for e, acc in t.back.accels.items() if "c: last iteration" in acc.describe)
    count = edge.stmts[0].vars[0]
    for n, runs in ((3, True), (4, False)):
        state = {**interp.initial_state(t.program), "c": 0, "i": 3}
        oracle = interp.InputOracle(t.program, havocs=[n], strict=False)
        r = try_edge(Evaluator("math"), edge, state, oracle)
        assert (r.blocked is None) == runs, (n, r.blocked)
        if runs:
            after = commit(r)
            assert (after["c"], after["i"]) == (5, 6) and count.name in after
