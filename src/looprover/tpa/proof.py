"""TPA's TRUE as a proof another process can check (`evidence/proofs.py`): the safe transition invariant and
the transition system it holds for, as SMT-LIB text.

Why the system travels too: the engine's system is not a pure function of the program. The one-loop system's
Init and Bad come from quantifier elimination under a time budget (`program_ts.single_loop_system`), and the
wrap-free relation from another one (`smt/nowrap.split_wraps`); a checker that rebuilt them might fail where the
engine succeeded. So the checker takes them from the proof and checks, with fresh solvers, that they are sound
for the program it rebuilt itself:
  * one-loop system: the program still has that shape; every state after the entry step is in Init_L, every
    state from which the loop's fragment fails an assertion is in Bad_L, no assertion fails before the loop;
    Tr_L is the loop's own edge, rebuilt;
  * pc-encoded system after the entry step (`program_ts.EntrySystem`): no Init state is bad, and every state
    after the entry step is in the proof's Init';
  * wrap-free relation: every exact step from a state outside Wrap is a step of it (then Bad ∨ Wrap unreachable
    under it means Bad unreachable under the exact relation: a path to Bad has a first state in Wrap ∨ Bad, and
    the path before it is wrap-free);
  * then the certificate conditions of `tpa.certify.check_safe_certificate` on that system.

The multi-loop engine's TRUE (`NetworkProof`) is safe sets per node of the network of loops and, for each loop
whose pre-set is not simply inductive, the TPA certificate that its body cannot leave the post-set; the check is
`tpa.network.check_proof` on the rebuilt network with those certificates instead of fresh TPA runs. With nested
loops the proof also carries each inner loop's summary; the checker re-checks them and contracts the rebuilt
network with them (`tpa.nested.contract`) before checking the safe sets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import z3

from looprover.deadline import Deadline
from looprover.program.cfa import Program
from looprover.program.cpg import ERROR, build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.systems import loop_system, program_state
from looprover.smt.text import from_text, to_text
from looprover.smt.ts import TransitionSystem
from looprover.smt.solver import unsat
from looprover.tpa.certify import check_safe_certificate
from looprover.tpa.program_ts import one_loop
from looprover.tpa.result import SafeCertificate
from looprover.evidence.proofs import Proof


@dataclass(frozen=True)
class CertificateText:
    """A TPA safe certificate as text, with the wrap-free relation it was found on (if any)."""
    ti: str                          # the safe transition invariant over (x, x')
    side: str                        # "left" or "right" (SafeCertificate.kind)
    level: int
    free_trans: str | None = None    # the wrap-free relation and the wrap states, when TPA ran on them
    wrap: str | None = None
    restricted: bool = False         # split kinds: E_i transitive only from Init∘L_i / towards L_i∘Bad
    chain: tuple[tuple[str, str], ...] = ()      # split kinds: (E_k, L_k) for k = 1..level

    @staticmethod
    def of(cert: SafeCertificate, wrap_split: tuple | None) -> "CertificateText":
        return CertificateText(to_text(cert.ti), cert.kind, cert.level,
                               None if wrap_split is None else to_text(wrap_split[0]),
                               None if wrap_split is None else to_text(wrap_split[1]),
                               cert.restricted, tuple((to_text(e), to_text(lt)) for e, lt in cert.chain))

    def _system(self, ts: TransitionSystem) -> TransitionSystem:
        """`ts`, or its wrap-free version (Bad ∨ Wrap unreachable under the wrap-free relation) when TPA ran on that."""
        if self.free_trans is None:
            return ts
        return ts.with_trans(from_text(self.free_trans)).with_query(ts.init, z3.Or(ts.bad, from_text(self.wrap or "")))

    def _safe(self) -> SafeCertificate:
        chain = tuple((from_text(e), from_text(lt)) for e, lt in self.chain)
        return SafeCertificate(self.side, from_text(self.ti), self.level, self.restricted, chain=chain)

    def state_invariant(self, ts: TransitionSystem, deadline: Deadline) -> z3.BoolRef | None:
        """An inductive state invariant of `ts` excluding its Bad, derived from the (checked) certificate by QE when
        that is cheap (`certify.state_invariant`), else None. On the wrap-free relation it excludes the wrap
        states too, so the exact relation preserves it as well."""
        from looprover.tpa.certify import state_invariant
        return state_invariant(self._system(ts), self._safe(), deadline)

    def check_on(self, ts: TransitionSystem, deadline: Deadline) -> str | None:
        """None if the certificate proves Bad unreachable in `ts` (through the wrap-free relation, which must
        then contain every exact step from outside Wrap), else what failed."""
        if self.free_trans is not None:
            free, wrap = from_text(self.free_trans), from_text(self.wrap or "")
            if not unsat(deadline, ts.trans, z3.Not(wrap), z3.Not(free)):
                return "the wrap-free relation misses an exact step from outside the wrap states"
        return check_safe_certificate(self._system(ts), self._safe(), deadline)


def system_label(head: int | None, entry: bool) -> str:
    """Which transition system TPA ran on, as `--json` names it (engine statistics and proof alike)."""
    if head is not None:
        return f"loop at L{head}"
    return "pc-encoded cutpoint graph" + (" after the entry step" if entry else "")


@dataclass(frozen=True)
class TransitionInvariantProof(Proof):
    certificate: CertificateText
    head: int | None = None          # the loop head of a one-loop system; None: the pc-encoded cutpoint graph
    init: str | None = None          # the one-loop system's Init_L and Bad_L (over the program variables), or
    bad: str | None = None           # the pc-encoded system's states after the entry step (`EntrySystem`)
    state_invariant: str | None = None   # shown, not part of the proof (the engine derived and checked it)
    state_invariant_text: str | None = None   # the same as SMT-LIB text (for SV-COMP correctness witnesses)
    kind: ClassVar[str] = "transition-invariant"

    @staticmethod
    def of(ts: TransitionSystem, cert: SafeCertificate, head: int | None, wrap_split: tuple | None,
           entry: bool = False) -> "TransitionInvariantProof":
        """The proof for certificate `cert` of system `ts` (a one-loop system at `head`, or the pc-encoded one,
        started after its entry step when `entry`), found on the wrap-free relation when `wrap_split` = (Tr_nw,
        Wrap) is given."""
        return TransitionInvariantProof(
            CertificateText.of(cert, wrap_split), head,
            to_text(ts.init) if head is not None or entry else None, None if head is None else to_text(ts.bad),
            None if cert.state_invariant is None else str(cert.state_invariant),
            None if cert.state_invariant is None else to_text(cert.state_invariant))

    def check(self, program: Program, bitvector: bool, deadline: Deadline) -> str | None:
        sys = CPGSystem(build_cpg(program), bitvector, deadline)
        if self.head is None:
            ts = sys.ts if self.init is None else self._entry_system(sys.ts, deadline)
            if isinstance(ts, str):
                return ts
        else:
            ts_or_why = self._loop_system(sys, deadline)
            if isinstance(ts_or_why, str):
                return ts_or_why
            ts = ts_or_why
        return self.certificate.check_on(ts, deadline)

    def _entry_system(self, ts: TransitionSystem, deadline: Deadline) -> TransitionSystem | str:
        """`ts` from the proof's Init' on: sound when every state after the entry step is in Init' and no Init
        state is bad (a path to Bad then has a second state, in Init')."""
        init = from_text(self.init or "")
        if not unsat(deadline, ts.init, ts.bad):
            return "an assertion can fail at the entry"
        if not unsat(deadline, ts.init, ts.trans, z3.Not(z3.substitute(init, *zip(ts.state, ts.next)))):
            return "Init' misses a state after the entry step"
        return ts.with_query(init, ts.bad)

    def _loop_system(self, sys: CPGSystem, deadline: Deadline) -> TransitionSystem | str:
        shape = one_loop(sys.cpg)
        if shape is None or shape[0] != self.head:
            return f"the program is not one loop at L{self.head}"
        head, by_pair = shape
        cpg = sys.cpg
        cur, nxt, _ = program_state(sys)
        init0 = z3.And(sys.range_constraints(sys.cur))
        init_l, bad_l = from_text(self.init or ""), from_text(self.bad or "")
        start = by_pair.get((cpg.init, ERROR))
        if start is not None and not unsat(deadline, init0, sys.edge_formula(start)):
            return "an assertion can fail before the loop"
        entered = z3.substitute(init_l, *zip(cur, nxt)) if cur else init_l
        if not unsat(deadline, init0, sys.edge_formula(by_pair[(cpg.init, head)]), z3.Not(entered)):
            return "Init_L misses a state after the entry step"
        fail = by_pair.get((head, ERROR))
        if fail is not None and not unsat(deadline, sys.edge_formula(fail), z3.Not(bad_l)):
            return "Bad_L misses a state from which the loop fails an assertion"
        return loop_system(sys, head, init_l, bad_l)

    def to_json(self) -> dict[str, Any]:
        c = self.certificate
        return {"kind": self.kind, "side": c.side, "level": c.level,
                "system": system_label(self.head, self.init is not None),
                "transition_invariant": _last_assertion(c.ti) if not c.chain else
                "L ∨ L∘E" if c.side == "split-right" else "L ∨ E∘L",
                **({"exact_power": _last_assertion(c.chain[-1][0]), "less_than_power": _last_assertion(c.chain[-1][1]),
                    "restricted": c.restricted} if c.chain else {}),
                "wrap_free": c.free_trans is not None,
                "state_invariant": self.state_invariant}


def _last_assertion(text: str) -> str:
    """The formula of a `to_text` string, printed by z3 (readable, without the declarations)."""
    try:
        return str(from_text(text))
    except z3.Z3Exception:
        return text


@dataclass(frozen=True)
class NetworkProof(Proof):
    pre: tuple[tuple[int, str], ...]                  # (node, safe set on arrival) as text
    post: tuple[tuple[int, str], ...]                 # (node, safe set on leaving)
    certificates: tuple[tuple[int, CertificateText], ...] = ()
    labels: tuple[tuple[int, str], ...] = ()          # (node, `Program.loc_label`) for --json
    summaries: tuple[tuple[int, str], ...] = ()       # (nested loop head, S ⊇ Body*), in contraction order
    kind: ClassVar[str] = "loop-network"

    @staticmethod
    def of(program: Program, pre, post, certificates, summaries=()) -> "NetworkProof":
        nodes = sorted(pre)
        return NetworkProof(tuple((v, to_text(pre[v])) for v in nodes), tuple((v, to_text(post[v])) for v in nodes),
                            tuple(sorted(certificates.items())),
                            tuple((v, program.loc_label(v)) for v in nodes + [h for h, _ in summaries]),
                            tuple((h, to_text(s)) for h, s in summaries))

    def check(self, program: Program, bitvector: bool, deadline: Deadline) -> str | None:
        from looprover.tpa.network import check_proof
        from looprover.program.liveness import liveness
        from looprover.smt.systems import cpg_network
        from looprover.tpa.nested import contract, nested_heads
        cpg = build_cpg(program)
        net = cpg_network(CPGSystem(cpg, bitvector, deadline), liveness(program))
        heads = nested_heads(cpg)
        if heads or self.summaries:
            net = contract(net, heads, [(h, from_text(t)) for h, t in self.summaries], deadline)
            if isinstance(net, str):
                return net
        pre = {v: from_text(t) for v, t in self.pre}
        post = {v: from_text(t) for v, t in self.post}
        missing = [v for v in net.nodes if v != net.error and (v not in pre or v not in post)]
        if missing:
            return f"no safe sets for node(s) {missing}"
        why, _ = check_proof(net, pre, post, deadline, certificates=dict(self.certificates))
        return why

    def to_json(self) -> dict[str, Any]:
        label = dict(self.labels)
        post = dict(self.post)
        return {"kind": self.kind, "nodes": {label.get(v, f"L{v}"): {"preSafe": _last_assertion(t),
                                                                      "postSafe": _last_assertion(post[v])}
                                             for v, t in self.pre},
                "certified_loops": [label.get(v, f"L{v}") for v, _ in self.certificates],
                **({"nested_loop_summaries": {label.get(h, f"L{h}"): _last_assertion(t) for h, t in self.summaries}}
                   if self.summaries else {})}
