"""Witnesses: verdicts in the formats others check, written and read. SV-COMP witnesses 2.0/2.1 (`svcomp`,
`termination_witness`), their validator (`validate`, `validate_termination`), invariants as C expressions
(`cexpr`, located in the source by `csource`), loop invariants read off a closed program's run (`closed_run`),
and test harnesses that replay a counterexample compiled (`harness`). Built on `looprover.evidence`.
"""
