"""Split TPA (`tpa/split.py`): verdicts on safe and unsafe systems, exact depths around powers of two (where a
level mistake between "exactly 2^n" and "fewer than 2^n" steps would show), and the split certificate's
independent check, which must reject tampered chains, transitivity claims and restrictions."""
from __future__ import annotations

from dataclasses import replace

import pytest
import z3

from looprover.deadline import Deadline
from looprover.tpa import SafeCertificate, TPAOptions, TPAStatus, check_safe_certificate, solve_tpa
from looprover.tpa.result import is_state
from looprover.tpa.split import SplitTPA
from helpers.tpa_systems import counter, down_up, flag_counter, nondet_step, token_ring, two_speeds

SPLIT = TPAOptions(variant="split")
NO_SEEDS = TPAOptions(variant="split", seeds=False)
PLAIN = TPAOptions(variant="split", seeds=False, exact_powers=False)


def _dl(seconds: float = 30.0) -> Deadline:
    return Deadline.after(seconds)


def _safe(ts, r) -> SafeCertificate:
    assert r.status == TPAStatus.SAFE, r.reason
    assert r.certificate.checked and check_safe_certificate(ts, r.certificate, _dl()) is None
    return r.certificate


def _unsafe_at(ts, r, depth: int) -> None:
    """UNSAFE at exactly `depth`, and the path checked step by step by a fresh solver."""
    assert r.status == TPAStatus.UNSAFE, r.reason
    w = r.witness
    assert w.depth == depth and w.path is not None and len(w.path) == depth + 1
    ys = [[z3.Const(f"{v}@{t}", v.sort()) for v in ts.state] for t in range(depth + 1)]
    s = z3.Solver()
    s.add(*[is_state(ys[t], w.path[t]) for t in range(depth + 1)])
    s.add(z3.substitute(ts.init, *zip(ts.state, ys[0])), z3.substitute(ts.bad, *zip(ts.state, ys[-1])))
    s.add(*[z3.substitute(ts.trans, *zip(ts.state + ts.next, ys[t] + ys[t + 1])) for t in range(depth)])
    assert s.check() == z3.sat


@pytest.mark.parametrize("make", [lambda: counter(10), lambda: nondet_step(10, False), two_speeds, token_ring,
                                  lambda: flag_counter(False), lambda: down_up(50)])
def test_safe_systems(make):
    ts = make()
    _safe(ts, solve_tpa(ts, timeout=30, options=SPLIT))


@pytest.mark.parametrize("N", [15, 16, 17, 31, 32, 33])
def test_unsafe_counter_exact_depth_around_powers_of_two(N):
    """2^k - 1 steps is the longest ReachLT run of level k-1, 2^k the ReachEQ run, 2^k + 1 the first one that
    needs the next level: the plain recursion (no exact-power shortcut, no seeds) must find each at its depth."""
    ts = counter(N, unsafe=True)
    r = solve_tpa(ts, timeout=60, options=PLAIN)
    _unsafe_at(ts, r, N)
    assert r.stats["power_queries"] == 0
    assert r.stats["level"] == (N - 1).bit_length() - 1        # the first level n with N ≤ 2^{n+1}


@pytest.mark.slow
@pytest.mark.parametrize("N", [1023, 1024, 1025])
def test_deep_unsafe_counter_exact_depth(N):
    ts = counter(N, unsafe=True)
    _unsafe_at(ts, solve_tpa(ts, timeout=60, options=SPLIT), N)


def test_unsafe_nondeterministic_and_boolean_systems():
    for ts, depth in ((nondet_step(10, True), None), (flag_counter(True), 7)):
        r = solve_tpa(ts, timeout=30, options=PLAIN)
        assert r.status == TPAStatus.UNSAFE, r.reason
        if depth is not None:
            _unsafe_at(ts, r, depth)


@pytest.mark.slow
def test_converges_without_seeds_where_the_exact_power_is_transitive():
    """The safe deep counter without seed lemmas: E[i] = "exactly 2^i steps" becomes transitive from the
    reachable states (the split certificate), where basic TPA's ATr[i] creeps up one distance bound per level."""
    ts = counter(1000)
    cert = _safe(ts, solve_tpa(ts, timeout=180, options=NO_SEEDS))   # beside a benchmark it took over 60 s
    assert cert.kind.startswith("split-") and len(cert.chain) == cert.level


@pytest.fixture(scope="module")
def split_cert():
    ts = counter(10)
    r = solve_tpa(ts, timeout=60, options=NO_SEEDS)
    cert = _safe(ts, r)
    assert cert.kind == "split-right" and cert.restricted
    return ts, cert


def test_tampered_split_certificates_are_rejected(split_cert):
    ts, cert = split_cert
    x, y = ts.state
    x1, y1 = ts.next
    e, lt = cert.chain[-1]
    tampered = [
        # the top exact level claims fewer behaviours than Tr^{2^i}: x' = x + 1 is not 2^i steps
        replace(cert, ti=x1 == x + 1, chain=cert.chain[:-1] + ((x1 == x + 1, lt),)),
        # L_1 misses Tr (it keeps only the identity)
        replace(cert, chain=((cert.chain[0][0], z3.And(x1 == x, y1 == y)),) + cert.chain[1:]),
        # a level left out of the chain
        replace(cert, chain=cert.chain[1:]),
        # an exact level that is not transitive claimed without the restriction it needs
        replace(cert, restricted=False),
        # nothing at all: true levels are transitive but not safe
        replace(cert, ti=z3.BoolVal(True), chain=tuple((z3.BoolVal(True), z3.BoolVal(True)) for _ in cert.chain)),
        # a level with an auxiliary symbol
        replace(cert, chain=cert.chain[:-1] + ((z3.And(e, z3.Int("aux") == x), lt),)),
    ]
    for bad in tampered:
        assert check_safe_certificate(ts, bad, _dl()) is not None


def test_the_certificate_of_the_safe_counter_does_not_prove_the_unsafe_one(split_cert):
    ts, cert = split_cert
    assert check_safe_certificate(counter(10, unsafe=True), cert, _dl()) is not None


def test_a_hand_written_left_certificate_passes():
    """x = 0; loop { x += 2 } with Bad = (x = 7): E_1 = "even distance ≥ 4" ⊇ Tr², L_1 = "even distance ≥ 0"
    ⊇ Id ∨ Tr, E_1 transitive, no even distance from 0 to 7. Without the parity E_1 still passes the chain and
    transitivity but not safety."""
    x, x1 = z3.Int("x"), z3.Int("x'")
    from looprover.smt.ts import TransitionSystem
    ts = TransitionSystem([x], [x1], x == 0, x1 == x + 2, x == 7)
    e = z3.And((x1 - x) % 2 == 0, x1 - x >= 4)
    lt = z3.And((x1 - x) % 2 == 0, x1 >= x)
    good = SafeCertificate("split-left", e, 1, restricted=True, chain=((e, lt),))
    assert check_safe_certificate(ts, good, _dl()) is None
    assert check_safe_certificate(ts, replace(good, chain=((x1 - x >= 4, lt),), ti=x1 - x >= 4), _dl()) is not None


def test_levels_survive_a_new_query():
    ts = counter(100, unsafe=True)
    tpa = SplitTPA(ts, SPLIT)
    assert tpa.solve(_dl()).status == TPAStatus.UNSAFE
    x, y = ts.state
    tpa.reset_query(ts.init, z3.And(x >= 100, y != 200))
    r = tpa.solve(_dl())
    assert r.status == TPAStatus.SAFE and check_safe_certificate(ts.with_query(ts.init, tpa.bad), r.certificate,
                                                                 _dl()) is None


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="variant"):
        TPAOptions(variant="golem")


def _random_system(rng):
    """x = 0, y = c; while (x < K) { (x, y) += (a1, b1) or (a2, b2) }; Bad: y = t. Finite: x grows every step."""
    from looprover.smt.ts import TransitionSystem
    K, c, t = rng.randint(3, 24), rng.randint(-3, 3), rng.randint(-5, 40)
    (a1, b1), (a2, b2) = [(rng.randint(1, 3), rng.randint(-2, 3)) for _ in range(2)]
    x, y, x1, y1 = z3.Int("x"), z3.Int("y"), z3.Int("x'"), z3.Int("y'")
    ch = z3.Bool("ch")
    tr = z3.And(x < K, z3.If(ch, z3.And(x1 == x + a1, y1 == y + b1), z3.And(x1 == x + a2, y1 == y + b2)))
    ts = TransitionSystem([x, y], [x1, y1], z3.And(x == 0, y == c), tr, y == t)
    layers, cur = [], {(0, c)}
    while cur:                                              # explicit states, layer by layer
        layers.append(cur)
        cur = {(px + a, py + b) for px, py in cur if px < K for a, b in ((a1, b1), (a2, b2))}
    depths = {d for d, layer in enumerate(layers) if any(py == t for _, py in layer)}
    return ts, depths


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_random_systems_agree_with_explicit_states(seed):
    """Split TPA against explicit-state exploration: SAFE exactly when no layer meets Bad, an UNSAFE depth is a
    layer that does; with and without seeds, so both the closure and the exact fixed point are exercised."""
    import random
    ts, depths = _random_system(random.Random(seed))
    for opts in (SPLIT, PLAIN):
        r = solve_tpa(ts, timeout=30, options=opts)
        assert r.status != TPAStatus.UNKNOWN, r.reason
        if depths:
            assert r.status == TPAStatus.UNSAFE and r.witness.depth in depths
        else:
            _safe(ts, r)


@pytest.mark.parametrize("variant", ["basic", "split"])
def test_unsatisfiable_bad_is_safe_without_seeds(variant):
    """Bad is empty (as in some CHC files whose query is unsatisfiable): no interpolant has anything to say, so
    every level stays `true`; that empty level is itself the certificate (checked: Init ∧ true ∧ Bad' unsat)."""
    ts = counter(10)
    x, y = ts.state
    ts = ts.with_query(ts.init, z3.And(x == 0, x != 0))
    _safe(ts, solve_tpa(ts, timeout=30, options=TPAOptions(variant=variant, seeds=False)))


@pytest.mark.parametrize("variant", ["basic", "split"])
def test_an_undecided_fixed_point_check_does_not_end_the_run(monkeypatch, variant):
    """z3 may answer `unknown` in a fixed-point check (seen: its incomplete difference-logic solver on an
    hcai file); that level is then not a fixed point, and the search goes on to a checked answer."""
    from looprover.errors import GiveUp
    from looprover.tpa.core import TPA
    orig, calls = TPA._closure, []

    def flaky(self, i, side):
        calls.append(i)
        if len(calls) == 1:
            raise GiveUp("solver returned unknown (test)")
        return orig(self, i, side)
    monkeypatch.setattr(TPA, "_closure", flaky)
    ts = counter(10)
    r = solve_tpa(ts, timeout=30, options=TPAOptions(variant=variant))
    _safe(ts, r)
    assert len(calls) >= 2
