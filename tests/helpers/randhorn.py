"""Random Horn systems for the property test of the CHC front-end and its back-translation
(`tests/witness/test_chc_witness.py`), and a fuzzer that runs many of them:

    PYTHONPATH=src:tests python -m helpers.randhorn FIRST_SEED COUNT ENGINE[,ENGINE...]

prints every answer that differs from z3 Spacer's on the original file (WRONG), every definite answer without a
model or derivation (NOWIT) or with one the check rejects (BADWIT), then the counts per engine and answer."""
from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

import z3


def random_system(rng: random.Random) -> str:
    """A small linear Horn system: 1-3 predicates of 1-3 arguments (Int, some Bool), a fact, 1-5 rules (loops
    and edges between predicates) with shifted, summed, scaled, `mod`/`div`-ed, `ite` and fresh arguments, guards
    with disjunctions, and 1-2 queries."""
    n = rng.randint(1, 3)
    sig = [[rng.choice(["Int", "Int", "Int", "Bool"]) for _ in range(rng.randint(1, 3))] for _ in range(n)]
    for s in sig:
        if "Int" not in s:
            s[0] = "Int"
    preds = [f"p{i}" for i in range(n)]
    lines = ["(set-logic HORN)"] + [f"(declare-fun {p} ({' '.join(s)}) Bool)" for p, s in zip(preds, sig)]

    def term(xs: list[str]) -> str:
        if not xs:
            return str(rng.randint(-2, 3))
        a, k = rng.choice(xs), rng.random()
        forms = [(0.4, f"(+ {a} {rng.randint(-2, 3)})"), (0.55, f"(+ {a} {rng.choice(xs)})"),
                 (0.65, f"(mod {a} {rng.randint(2, 3)})"), (0.72, f"(div {a} {rng.randint(2, 3)})"),
                 (0.8, f"(* {rng.randint(-2, 3)} {a})"), (0.9, f"(- {a} {rng.choice(xs)})"), (1.0, a)]
        return next(f for bound, f in forms if k < bound)

    def atom(ints: list[str], bools: list[str]) -> str:
        k = rng.random()
        if bools and k < 0.2:
            b = rng.choice(bools)
            return b if rng.random() < 0.5 else f"(not {b})"
        c = f"({rng.choice(['<=', '>=', '<', '=', '>'])} {term(ints)} {rng.randint(-3, 12)})"
        if k > 0.85:
            other = rng.choice(ints) if ints else "0"
            c = f"(or {c} ({rng.choice(['<=', '>='])} {other} {rng.randint(-3, 12)}))"
        return c

    def clause(src: int | None, dst: int | None) -> str:
        xs = [(f"x{k}", t) for k, t in enumerate(sig[src])] if src is not None else []
        ys = [(f"y{k}", t) for k, t in enumerate(sig[dst])] if dst is not None else []
        ints = [v for v, t in xs if t == "Int"]
        bools = [v for v, t in xs if t == "Bool"]
        body = [f"({preds[src]} {' '.join(v for v, _ in xs)})"] if src is not None else []
        cons = []
        for y, t in ys:
            r = rng.random()
            if t == "Bool":
                if r >= 0.3:
                    cons.append(f"(= {y} {atom(ints, bools)})" if ints else f"(= {y} {rng.choice(['true', 'false'])})")
            elif r < 0.12:
                continue                                    # a fresh value
            elif r < 0.25 and ints:
                cons.append(f"(= {y} (ite {atom(ints, bools)} {term(ints)} {term(ints)}))")
            elif r < 0.35:
                cons.append(atom([y], []))
            else:
                cons.append(f"(= {y} {term(ints)})")
        if ints and rng.random() < 0.7:
            cons.append(atom(ints, bools))
        decl = " ".join(f"({v} {t})" for v, t in xs + ys) or "(z Int)"
        head = f"({preds[dst]} {' '.join(v for v, _ in ys)})" if dst is not None else "false"
        return f"(assert (forall ({decl}) (=> (and {' '.join(body + cons) or 'true'} true) {head})))"

    lines.append(clause(None, 0))
    for _ in range(rng.randint(1, 5)):
        src = rng.randrange(n)
        lines.append(clause(src, rng.randrange(n) if rng.random() < 0.6 else src))
    if n > 1 and rng.random() < 0.5:
        lines.append(clause(None, rng.randrange(n)))
    for _ in range(rng.randint(1, 2)):
        lines.append(clause(rng.randrange(n), None))
    return "\n".join(lines) + "\n(check-sat)\n"


def spacer_answer(text: str) -> str:
    """z3 Spacer on the file as written: sat, unsat or unknown."""
    s = z3.SolverFor("HORN")
    s.set("timeout", 10000)
    s.from_string(text)
    return str(s.check())


def main(argv: list[str]) -> int:
    from looprover.deadline import Deadline
    from looprover.engines import verify
    from looprover.frontend.chc import load_chc_program
    from looprover.verdict import Status
    from looprover.witness.chc import check_witness, chc_witness
    first, count, engines = int(argv[0]), int(argv[1]), argv[2].split(",")
    d = Path(tempfile.mkdtemp())
    stats: dict[tuple, int] = {}
    for i in range(first, first + count):
        text = random_system(random.Random(i))
        expected = spacer_answer(text)
        if expected == "unknown":
            continue
        path = d / f"r{i}.smt2"
        path.write_text(text)
        program = load_chc_program(path)
        for e in engines:
            v = verify(e, program, timeout=3.0)
            stats[(e, expected, v.status.name)] = stats.get((e, expected, v.status.name), 0) + 1
            if v.status == Status.UNKNOWN:
                continue
            if (v.status == Status.TRUE) != (expected == "sat"):
                print("WRONG", e, expected, v.status.name, path, flush=True)
                continue
            w = chc_witness(v, program, Deadline.after(10))
            if w.text is None:
                print("NOWIT", e, path, w.note[:200], flush=True)
            elif check_witness(w.text, path, Deadline.after(10)).status != "confirmed":
                print("BADWIT", e, path, flush=True)
    for k in sorted(stats):
        print(*k, stats[k])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
