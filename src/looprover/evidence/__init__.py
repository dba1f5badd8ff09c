"""Evidence behind verdicts, in the form the engines, the portfolio and the job use and check: proofs of TRUE
(`proofs`, certified from candidate invariants by `certify`) and their re-check (`recheck`), counterexamples
replayed on the program (`replay`, `confirm`), deep ones run compiled (`deep`, `native`), non-termination's
recurrent sets (`nontermination`), candidate invariants for the witness writer (`hints`).

Why a package apart from `witness`: that one writes and reads the formats others check (SV-COMP witnesses,
C expressions, test harnesses) on top of this layer; engines need only this one.
"""
