"""Helpers shared by the tests (importable as `helpers.*`: pyproject.toml puts tests/ on the path).

  * progdsl       -- a tiny structured-program builder for IR test programs
  * enginecases   -- IR programs with known verdicts, shared by the engine tests
  * randprog      -- random small loop programs with a decidable ground truth (LABMC differential tests)
  * c_harness     -- cross-checking the C front-end against gcc
  * tpa_systems   -- hand-built transition systems for the TPA core tests
  * tpa_chc       -- single-predicate CHC files as transition systems, for the TPA core tests
  * domain_sites  -- transition-system sites (x, x', sampled steps) for the domain tests
  * deep_counter  -- the unsigned deep-counter C program and a loader for C text (TPA tests)
  * fake_engines  -- fixtures: instant fake engines and a small CHC file (CLI, deadline, portfolio tests)
  * programs/     -- C programs shared by the transform and engine tests, and sv.h, the one SV-COMP header
"""
