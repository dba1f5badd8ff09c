"""`tpa/network.py` on hand-built networks: the B4 search, and the proof re-check rejecting broken proofs."""
from __future__ import annotations


import pytest
import z3

from looprover.deadline import Deadline
from looprover.errors import GiveUp
from looprover.tpa import TPAStatus
from looprover.smt.systems import Bridge, Network
from looprover.tpa.network import NetworkTPA, check_proof

ERR = "err"


def counters(bad: z3.BoolRef | None = None, unused: bool = False) -> Network:
    """entry -> A: x := 0; A: while (x < 10) x++; A -> B (x >= 10): y := 0; B: while (y < x) y++;
    B -> err when `bad` (default y != 10, unreachable), B -> exit otherwise. With `unused`, a variable z that
    no node reads (it is not in any vocabulary)."""
    x, y, x1, y1 = z3.Ints("x y x' y'")
    state, nxt = [x, y], [x1, y1]
    if unused:
        z, z1 = z3.Ints("z z'")
        state, nxt = state + [z], nxt + [z1]
    bad = y != 10 if bad is None else bad

    def frame(*written):
        return [b == a for a, b in zip(state, nxt) if all(not b.eq(w) for w in written)]

    loops = {"A": z3.And(x < 10, x1 == x + 1, *frame(x1)), "B": z3.And(y < x, y1 == y + 1, *frame(y1))}
    bridges = [Bridge("entry", "A", z3.And(x1 == 0, *frame(x1))),
               Bridge("A", "B", z3.And(x >= 10, y1 == 0, *frame(y1))),
               Bridge("B", ERR, z3.And(y >= x, bad)),
               Bridge("B", "exit", z3.And(y >= x, z3.Not(bad), *frame()))]
    live = {"entry": [], "A": [x], "B": [x, y], "exit": []}
    return Network(state, nxt, "entry", z3.BoolVal(True), ["entry", "A", "B", "exit", ERR], loops, bridges, ERR,
                   live=live)


def solve(net: Network, timeout: float = 30):
    return NetworkTPA(net).solve(Deadline.after(timeout))


def test_safe_network_and_its_proof():
    net = counters()
    res = solve(net)
    assert res.status == TPAStatus.SAFE, res.reason
    why, how = check_proof(net, res.pre, res.post, Deadline.after(30))
    assert why is None and set(how) == {"A", "B"}
    # the safe sets only mention the variables live at their node
    assert "y" not in str(res.pre["A"]) and str(res.pre["exit"]) == "True"


def test_only_search_dead_ends_are_results_other_errors_reach_the_engine_runner(monkeypatch):
    """The deadline and GiveUp end the search with UNKNOWN; a MemoryError is not the search's to judge: it
    propagates to `engines.base.run_engine`, which answers UNKNOWN("out of memory") (tests/engines)."""
    def boom(self):
        raise MemoryError()
    monkeypatch.setattr(NetworkTPA, "_search", boom)
    with pytest.raises(MemoryError):
        solve(counters())

    def give_up(self):
        raise GiveUp("safe set grew to 9999 terms")
    monkeypatch.setattr(NetworkTPA, "_search", give_up)
    res = solve(counters())
    assert res.status == TPAStatus.UNKNOWN and res.reason == "safe set grew to 9999 terms"


def test_unsafe_network_path_counts_iterations():
    x, y = z3.Ints("x y")
    res = solve(counters(bad=y == 10))
    assert res.status == TPAStatus.UNSAFE, res.reason
    assert res.path == [("entry", 0), ("A", 10), ("B", 10), (ERR, 0)]


def test_proof_check_takes_the_searchs_certificates_only_when_they_pass_the_check(monkeypatch):
    """The search keeps each loop's SAFE certificates; the proof check tries them, on the final safe sets, before
    a fresh TPA. Here pre[A] is narrowed to the arrival state x = 0, so it is no longer inductive and A needs a
    certificate: A's own passes the check (no fresh TPA runs), B's says nothing of A's body and is skipped, and
    the fresh TPA proves A as without candidates."""
    import looprover.tpa.network as network
    net = counters()
    res = solve(net)
    assert res.status == TPAStatus.SAFE and set(res.certificates) == {"A", "B"}
    pre = dict(res.pre)
    pre["A"] = z3.Int("x") == 0
    with monkeypatch.context() as m:
        m.setattr(network.LoopSolver, "solve", lambda *a, **k: pytest.fail("a fresh TPA ran"))
        found: dict = {}
        why, how = check_proof(net, pre, res.post, Deadline.after(30), found=found, candidates=res.certificates)
        assert why is None and how["A"] == "certificate of the search, checked"
        assert found["A"] in res.certificates["A"]
        with pytest.raises(pytest.fail.Exception, match="a fresh TPA ran"):
            check_proof(net, pre, res.post, Deadline.after(30), candidates={"A": res.certificates["B"]})
    found = {}
    why, how = check_proof(net, pre, res.post, Deadline.after(30), found=found, candidates={"A": res.certificates["B"]})
    assert why is None and how["A"].startswith("fresh TPA") and found["A"] not in res.certificates["B"]


@pytest.mark.parametrize("break_it,message", [
    ("post B", "bridge B -> err"),          # B may be left anywhere: the error bridge is no longer blocked
    ("pre A", "loop at node A"),            # any x arrives safely at A: the fresh TPA leaves post[A] at once
    ("pre entry", "Init"),
    ("no-loop pre", "no loop but pre"),     # a node without a loop must have pre = post
])
def test_proof_check_rejects_broken_proofs(break_it, message):
    net = counters()
    res = solve(net)
    assert res.status == TPAStatus.SAFE
    pre, post = dict(res.pre), dict(res.post)
    true, false = z3.BoolVal(True), z3.BoolVal(False)
    if break_it == "post B":
        post["B"] = true
    elif break_it == "pre A":
        pre["A"] = true
    elif break_it == "pre entry":
        pre["entry"] = post["entry"] = false
    else:
        pre["entry"], post["entry"] = true, false
    why, _ = check_proof(net, pre, post, Deadline.after(30))
    assert why is not None and message in why, why
    # the search's own certificates, offered as candidates, do not make a broken proof pass
    why, _ = check_proof(net, pre, post, Deadline.after(30), candidates=res.certificates)
    assert why is not None and message in why, why


def test_cycle_detection_ignores_self_loops():
    assert counters().cycle() is None
    net = counters()
    net.bridges.append(Bridge("B", "A", z3.BoolVal(True)))
    assert net.cycle() in (["A", "B", "A"], ["B", "A", "B"])


def test_unused_variable_is_abstracted_away():
    net = counters(unused=True)
    assert [str(v) for v in net.loop_system("B", z3.BoolVal(True), z3.BoolVal(False)).state] == ["x", "y"]
    res = solve(net)
    assert res.status == TPAStatus.SAFE
    assert check_proof(net, res.pre, res.post, Deadline.after(30))[0] is None


@pytest.mark.parametrize("exit_value,want", [(7, TPAStatus.SAFE), (8, TPAStatus.UNSAFE)])
def test_entry_node_with_a_loop(exit_value, want):
    """The entry is itself a loop head (Init at the loop): x counts from 0 to 7, and leaving with x other
    than `exit_value` is an error. Its iterations count on the path too."""
    x, x1 = z3.Ints("x x'")
    net = Network([x], [x1], "A", x == 0, ["A", "exit", ERR], {"A": z3.And(x < 7, x1 == x + 1)},
                  [Bridge("A", ERR, z3.And(x >= 7, x != exit_value)),
                   Bridge("A", "exit", z3.And(x >= 7, x == exit_value, x1 == x))], ERR)
    res = solve(net)
    assert res.status == want, res.reason
    if want == TPAStatus.SAFE:
        assert check_proof(net, res.pre, res.post, Deadline.after(30))[0] is None
    else:
        assert res.path == [("A", 7), (ERR, 0)]
