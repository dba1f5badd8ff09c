"""Abstract domains as plug-ins: the candidate invariants (state atoms) and loop relations (over x, x') that the
invariant searches try, one template family per module.

Why: k-induction's Houdini candidates and TPA's seed lemmas were two template generators over the same families
(bounds, differences, congruences, linear relations, Booleans); loop summarization needs them too. Each family
now lives once, behind `base.Domain`; a driver asks the domains in a fixed order, so the candidate lists (and
with them the verdicts) are what the two generators produced before.

base.py       Domain, Site (a cutpoint: variables, constants, sampled states), StepSite (a loop body: x, x',
              sampled steps, comparison atoms), program_constants
samples.py    states seen in random concrete runs (the samples of a Site)
state.py      Candidate and `candidates()`: the state atoms of every cutpoint (k-induction); `atoms_at()` those
              of one location (loop summaries)
transition.py `transition_candidates()`: the relations over (x, x') of a loop body (TPA seed lemmas)
ranges.py intervals.py zones.py equalities.py congruence.py linear.py booleans.py strings.py octagon.py
deltas.py contents.py cells.py guards.py   the domains
"""
from looprover.domains.base import Domain, Site, StepSite, program_constants
from looprover.domains.samples import sample_states
from looprover.domains.state import STATE_DOMAINS, SUMMARY_DOMAINS, Candidate, atoms_at, candidates
from looprover.domains.transition import TRANSITION_DOMAINS, transition_candidates

__all__ = ["Domain", "Site", "StepSite", "program_constants", "sample_states", "Candidate", "candidates",
           "STATE_DOMAINS", "SUMMARY_DOMAINS", "atoms_at", "TRANSITION_DOMAINS", "transition_candidates"]
