"""Transition Power Abstraction (TPA) on transition systems: `solve_tpa(ts, deadline)`.

core.py     the algorithm (levels, Reach, fixed points); powers.py exact QE powers for deep counterexamples;
certify.py  independent checks every SAFE/UNSAFE passes; result.py result types and the variable vocabulary.
"""
from looprover.tpa.certify import (
    check_safe_certificate, check_state_invariant, replay_counterexample, state_invariant,
)
from looprover.tpa.core import TPA, solve_tpa
from looprover.tpa.options import TPAOptions
from looprover.tpa.result import SafeCertificate, TPAResult, TPAStatus, UnsafeWitness

__all__ = [
    "TPA", "TPAOptions", "solve_tpa", "TPAResult", "TPAStatus", "SafeCertificate", "UnsafeWitness",
    "check_safe_certificate", "check_state_invariant", "replay_counterexample", "state_invariant",
]
