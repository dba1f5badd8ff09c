"""TPA's settings, shared by the single-system engine, the multi-loop network and the CLI (`--option tpa.*`).

A module of its own so that the engines and `looprover engines` can name the settings without importing the
algorithm.
"""
from __future__ import annotations

from dataclasses import dataclass, field


_VARIANT = {"help": "basic (one hierarchy ATr[n] ⊇ Tr^{≤2^n}, tpa/core.py) or split (E[n] ⊇ Tr^{=2^n} and "
                    "L[n] ⊇ Tr^{<2^n}, tpa/split.py)"}


@dataclass
class TPAOptions:
    """TPA's settings; the fields with a `help` entry are user options (`--option tpa.FIELD=VALUE`)."""
    variant: str = field(default="basic", metadata=_VARIANT)
    incremental: bool = field(default=True, metadata={
        "help": "one push/pop solver per level (faster on tests/tpa) instead of a fresh one per query"})
    rebuild_after: int = 100        # pushes before a level solver is rebuilt from its formulas
    exact_powers: bool = field(default=True, metadata={
        "help": "confirm reachable nodes with exact QE powers when they stay small (powers.py)"})
    max_level: int = 62             # 2^63 steps: far beyond anything a deadline allows
    replay_limit: int = field(default=2000, metadata={
        "help": "counterexamples up to this depth are replayed by one BMC query (deeper ones by running the "
                "program)"})
    itp_timeout: float = field(default=30.0, metadata={
        "help": "seconds per interpolation call (also bounded by the deadline)"})
    itp_methods: tuple[str, ...] = field(default=("farkas", "spacer", "mbp", "qe"), metadata={
        "help": "interpolation methods in order, joined by '+' (farkas, spacer, mbp, qe; smt/interpolate.py)"})
    itp_caps: tuple[float, ...] = (2.0, 5.0, 3.0, 3.0)                  # first round, per method (seconds)
    houdini_cap: int = 128          # candidates per Houdini run (more are conjoined pairwise)
    state_invariant: bool = field(default=True, metadata={
        "help": "derive (and check) the state invariant by QE when cheap"})
    itp_core: bool = field(default=True, metadata={
        "help": "interpolate against the unsat core of the level's conjuncts only"})
    seeds: bool = field(default=True, metadata={
        "help": "conjoin checked reflexive-transitive template facts to every level (seeds.py)"})
    lemma_clauses: int = field(default=0, metadata={
        "help": "split a learned disjunctive lemma into at most this many clauses (0: keep it whole)"})
    divmod: bool = field(default=True, metadata={
        "help": "division and remainder by constants in Tr as auxiliary quotient and remainder (smt/divmod.py)"})
    qe_timeout: float = 2.0
    loops: str = field(default="auto", metadata={
        "help": "the tpa engine on a program of several loops: auto (as Golem's TPA engine: loops in sequence, none "
                "nested, by the network of per-loop TPAs that the multiloop engine runs; other shapes as one "
                "pc-encoded system) or single (always one pc-encoded system)"})

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"tpa.variant: expected one of {', '.join(VARIANTS)}, got {self.variant!r}")
        if self.loops not in LOOPS:
            raise ValueError(f"tpa.loops: expected one of {', '.join(LOOPS)}, got {self.loops!r}")


VARIANTS = ("basic", "split")
LOOPS = ("auto", "single")
