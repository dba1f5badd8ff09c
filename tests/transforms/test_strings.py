"""String terminators as ghost variables (`transforms/strings.py`): the direction of the instrumentation on
concrete runs (every run of the program, its ghosts holding the true first zero of each string, is a run of the
result, a violation included), and the size-independent proofs it enables (spacer on its cell abstraction)."""
from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.engines.spacer import SpacerSettings
from looprover.evidence.proofs import TransformedProof
from looprover.program.expr import I8, U8, ArrayType, binary, cmp, const, ite
from looprover.program.interp import ArrayValue
from looprover.transforms.strings import StringTerminators, tracked
from looprover.verdict import Status

from helpers.progdsl import Prog, sel
from helpers.svcomp_c import load_main
from transforms.test_cells import _run, _step_possible

# char programs with small bounds: scans to a terminator, copies, writes of zero and non-zero cells at and
# around the first zero, string literals, whole-array copies; most are unsafe for some inputs
PROGRAMS = [
    "char s[6]; int i = 0; s[5] = 0; while (s[i] != 0) i++; __VERIFIER_assert(i < 4);",
    "char s[6], d[6]; int i = 0; s[4] = 0; while (s[i] != 0 && i < 5) { d[i] = s[i]; i++; } d[i] = 0;"
    " int j = 0; while (d[j]) j++; __VERIFIER_assert(j == i && j < 3);",
    "char s[6]; int k = __VERIFIER_nondet_int(); __VERIFIER_assume(k >= 0 && k < 6);"
    " s[k] = __VERIFIER_nondet_int(); s[k / 2] = 0; int i = 0; while (s[i] != 0) i++; __VERIFIER_assert(i != 2);",
    "char n[3] = \"ab\"; char t[4] = \"xy\"; int i = 0; while (n[i]) i++; int j = 0; while (t[j]) j++;"
    " t[j] = 'z'; t[j + 1] = 0; __VERIFIER_assert(i + j < 4);",
    "char s[5]; for (int i = 0; i < 5; i++) { int x = __VERIFIER_nondet_int(); s[i] = x > 4 ? 0 : x; }"
    " int i = 0; while (i < 5 && s[i] != 0) i++; if (i < 5) { s[i] = 1; }"
    " int m = 0; while (m < 5 && s[m]) m++; __VERIFIER_assert(m < 4);",
]


def _first_zero(a: ArrayValue, t: ArrayType) -> tuple[int, bool]:
    """The truth the ghosts stand for: the first index >= 0 of a zero cell, and whether there is one."""
    keys = sorted(k for k in a.cells if k >= 0)
    zeros = [k for k in keys if a.cells[k] == 0]
    if a.default == 0:
        i = 0
        while i in a.cells and a.cells[i] != 0:
            i += 1
        zeros.append(i)
    zeros = [k for k in zeros if t.index.contains(k)]          # the cells of the index type only
    return (min(zeros), True) if zeros else (0, False)


def _with_ghosts(p, state: dict, after: bool = False) -> dict:
    """`state` with the true ghosts; without a zero, `@len` means nothing: 0 before a step, any value after."""
    out = dict(state)
    for n, info in p.variables.items():
        if tracked(info.var):
            out[f"{n}@len"], out[f"{n}@zero"] = _first_zero(state[n], info.var.type)
            if after and not out[f"{n}@zero"]:
                del out[f"{n}@len"]
    return out


@pytest.mark.parametrize("index", range(len(PROGRAMS)))
def test_every_run_with_true_ghosts_is_a_run_of_the_result(index, tmp_path):
    pytest.importorskip("looprover.frontend.c")
    p = load_main(tmp_path, "p", PROGRAMS[index])
    t = StringTerminators().apply(p)
    a = t.program
    assert t.guarantee.keeps_true and any(n.endswith("@len") for n in a.variables)
    twin = dict(zip(p.edges, a.edges[1:]))          # the result keeps the edges in order after its entry
    rng = random.Random(index)
    steps = violations = 0
    for _ in range(60):
        for e, pre, post in _run(p, rng):
            ok = _step_possible(a, twin[e], _with_ghosts(p, pre), _with_ghosts(p, post, after=True) if post is not None else None)
            assert ok, f"the instrumented program cannot follow {e}"
            steps += 1
            violations += post is None
    assert steps > 100 and violations > 0


def test_a_read_past_the_index_type_says_nothing():
    """Integer mode keeps an index expression's mathematical value, and the instrumentation reads eagerly: at
    i = 127 (8-bit index) `i < 127 ? a[i + 1] == 0 : true` reads a[128], a cell no C array has. With no zero
    among the cells 0..127 (a@zero false) the program takes the step; so must the instrumented program."""
    p = Prog("past")
    a, i = p.var("a", ArrayType(I8, U8, 128)), p.var("i", I8)
    one = const(1, I8)
    p.assume(ite(cmp("<", i, const(127, I8)), cmp("==", sel(a, binary("+", i, one)), const(0, U8)),
                 cmp("==", i, i)))
    prog = p.build()
    t = StringTerminators().apply(prog).program
    step = dict(zip(prog.edges, t.edges[1:]))[prog.edges[0]]
    pre = {"a": ArrayValue(0, {k: 1 for k in range(128)}), "i": 127}
    assert _step_possible(t, step, _with_ghosts(prog, pre), _with_ghosts(prog, pre, after=True))


SCAN = ("char s[N + 1]; char d[N + 1]; s[N] = 0;"
        " int i = 0; while (s[i] != 0) { d[i] = s[i]; i++; } d[i] = 0; int j = 0; while (d[j] != 0) j++;"
        " __VERIFIER_assert(j <= N);")


def test_spacer_proves_a_copy_to_the_terminator_at_any_size(tmp_path):
    """The copy of an unknown string into a buffer of its size, then a scan of the copy: spacer on the strings'
    cell abstraction proves it at 1000 cells as at 4, with a proof checked on the program; the same program with
    an assertion one cell short is never TRUE."""
    pytest.importorskip("looprover.frontend.c")
    p = load_main(tmp_path, "p4", SCAN.replace("N", "4"))
    v = verify("spacer", p, timeout=60, settings=SpacerSettings(arrays="strings"))
    assert v.status == Status.TRUE, v.reason
    assert isinstance(v.evidence, TransformedProof) and v.evidence.technique == "strings"
    assert v.evidence.check(p, False, Deadline.after(60)) is None
    # 1000 cells, spacer's default mode, in a fresh process as a user runs it: Spacer's search depends on the
    # names and order of the terms it is given, which earlier tests in this process shift (here it took 3 s
    # alone and once timed out inside the suite)
    load_main(tmp_path, "p1000", SCAN.replace("N", "1000"))
    r = subprocess.run([sys.executable, "-m", "looprover", "verify", str(tmp_path / "p1000.c"), "--engine", "spacer",
                        "--timeout", "60", "--json"], capture_output=True, text=True, timeout=120)
    out = json.loads(r.stdout)
    assert out["status"] == "TRUE" and "string terminators" in out["reason"], out["reason"]
    bad = load_main(tmp_path, "bad", SCAN.replace("j <= N", "j < N").replace("N", "1000"))
    v = verify("spacer", bad, timeout=10, settings=SpacerSettings(arrays="strings"))
    assert v.status != Status.TRUE, v.reason


# a copy behind a length check (sendmail's buildfname, Verisec): the copy writes at j while it reads at i, skips
# some characters and may start one cell in, so what bounds j is the length left when the check was made,
# `j - i + s@len <= N`, a relation of three variables
CHECKED_COPY = ("char s[N + 3]; char d[N + 1]; s[N + 2] = 0; int i = 0; if (s[0] == '*') i++;"
                " int l = 0; while (s[i + l] != 0) l++; if (l > N) return 0;"
                " int j = 0; while (s[i] != 0 && s[i] != ',') { if (s[i] != '&') { d[j] = s[i]; j++; } i++; }"
                " __VERIFIER_assert(j <= N); d[j] = 0;")


@pytest.mark.parametrize("n", [100, 1000])
def test_a_copy_behind_a_length_check_is_proved_from_the_domains_at_any_size(tmp_path, n):
    """The string-length domain offers the copy's three-variable bound; Houdini on Spacer's clauses keeps it and
    the kept invariants solve the clauses, at 1000 cells as at 100 (Spacer alone took 4 to over 30 s at 1000,
    depending on its seed). The proof is checked on the program; with the check one cell too weak (`l > N + 1`
    lets j reach N + 1) the program is never TRUE. (At 4 cells no random run passes the length check, so no
    sampled state filters the candidates at the copy loop, and Spacer proves it its own way.)"""
    pytest.importorskip("looprover.frontend.c")
    p = load_main(tmp_path, f"copy{n}", CHECKED_COPY.replace("N", str(n)))
    v = verify("spacer", p, timeout=60, settings=SpacerSettings(arrays="strings", houdini="auto"))
    assert v.status == Status.TRUE and "the domains' candidate invariants" in v.reason, v.reason
    assert v.evidence.check(p, False, Deadline.after(60)) is None
    bad = load_main(tmp_path, f"weak{n}", CHECKED_COPY.replace("l > N", "l > N + 1").replace("N", str(n)))
    v = verify("spacer", bad, timeout=10, settings=SpacerSettings(arrays="strings", houdini="auto"))
    assert v.status != Status.TRUE, v.reason


@pytest.mark.parametrize("n", [100, 1000])
def test_kinduction_proves_a_copy_behind_a_length_check_on_the_strings_abstraction(tmp_path, n):
    """k-induction starts on the string-terminator abstraction of a program with char arrays; its Houdini keeps
    the copy's three-variable bound, and the step case holds with it, at 1000 cells as at 100. Its proof is
    checked on the program; with the check one cell too weak it is never TRUE."""
    pytest.importorskip("looprover.frontend.c")
    p = load_main(tmp_path, f"copy{n}", CHECKED_COPY.replace("N", str(n)))
    v = verify("kinduction", p, timeout=60)
    assert v.status == Status.TRUE and "string terminators" in v.reason, v.reason
    assert isinstance(v.evidence, TransformedProof) and v.evidence.technique == "strings"
    assert v.evidence.check(p, False, Deadline.after(60)) is None
    bad = load_main(tmp_path, f"weak{n}", CHECKED_COPY.replace("l > N", "l > N + 1").replace("N", str(n)))
    v = verify("kinduction", bad, timeout=10)
    assert v.status != Status.TRUE, v.reason
