"""`main(int argc, char **argv)` (`frontend/c/main_args.py`): what a program may rely on (argc >= 0, argv[argc]
NULL, distinct zero-terminated argument strings) is proved, what it may not is found, and an element of argv past
the modelled strings makes the verdict UNKNOWN, never TRUE or FALSE; under every property the runs of `check`."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from looprover.deadline import Deadline
from looprover.frontend.c.main_args import ARGV_STRINGS
from looprover.jobs import Job, JobOptions, verify_job
from looprover.properties import Property, default_property
from looprover.verdict import Status

HEAD = "extern void reach_error(void);\nextern void free(void *);\n"

# name -> (program after HEAD, property, expected verdict: T, F(property kind) or U)
CASES = {
    "what_c_guarantees": ("""int main(int argc, char **argv) {
  if (argc < 0) reach_error();
  if (argc > 0 && argv[0] == 0) reach_error();
  if (argv[argc] != 0) reach_error();
  if (argc > 2 && argv[1] == argv[2]) reach_error();
  return 0;
}""", "unreach-call", "T"),
    # C11 5.1.2.2.1 allows argc == 0 (execve with an empty list; CVE-2021-4034): argv[0] is then NULL
    "argc_may_be_zero": ("int main(int argc, char **argv) { if (argc == 0) reach_error(); return 0; }",
                         "unreach-call", "F"),
    "argv0_unchecked": ("int main(int argc, char **argv) { return argv[0][0]; }", "valid-memsafety",
                        "F(valid-deref)"),
    # argc's range holds whether or not argv is named
    "argc_without_argv": ("int main(int argc, char **argv) { int x = argc + 1; return x; }", "no-overflow", "T"),
    # one string's end may be where the next starts (C11 6.5.9p6): neither answer is certain
    "adjacent_strings": ("""int main(int argc, char **argv) {
  if (argc > 2 && argv[1][0] == 0 && argv[1] + 1 == argv[2]) reach_error();
  return 0;
}""", "unreach-call", "U:layout"),
    # a run leaving the model (argc in the thousands) does not hide a violation with three arguments
    "error_behind_a_run_leaving_the_model": ("""int main(int argc, char **argv) {
  int verbose = 0;
  while (--argc > 0) { ++argv; if ((*argv)[0] == '-' && (*argv)[1] == 'v') verbose++; }
  if (verbose == 2) reach_error();
  return 0;
}""", "unreach-call", "F"),
    # the model's own conditions add no overflow checks
    "index_through_a_moved_argv": ("""extern int __VERIFIER_nondet_int(void);
int main(int argc, char **argv) {
  if (argc > 3) return 0;
  char **p = argv + 1;
  int i = __VERIFIER_nondet_int();
  if (i < 0) return 0;
  return p[i] != 0;
}""", "no-overflow", "not F"),
    # each string is an object of its own: writing one leaves the others alone
    "strings_do_not_alias": ("""int main(int argc, char *argv[]) {
  if (argc > 2) { argv[1][0] = 'a'; argv[2][0] = 'b'; if (argv[1][0] != 'a') reach_error(); }
  return 0;
}""", "unreach-call", "T"),
    # the contents are the user's: any character, in any argument the program is given
    "contents_are_input": ("""int main(int argc, char **argv) {
  if (argc == 4 && argv[3][0] == '-' && argv[2][0] == 0) reach_error();
  return 0;
}""", "unreach-call", "F"),
    "argc_is_input": ("int main(int argc, char **argv) { if (argc == 7) reach_error(); return 0; }",
                      "unreach-call", "F"),
    "no_second_argument": ("int main(int argc, char **argv) { return argv[1][0]; }", "valid-memsafety",
                           "F(valid-deref)"),
    "read_past_the_terminator": ("""int main(int argc, char **argv) {
  int n = 0;
  if (argc < 2) return 0;
  while (argv[1][n] != 0) n++;
  return argv[1][n + 1];
}""", "valid-memsafety", "F(valid-deref)"),
    "argv_past_its_end": ("int main(int argc, char **argv) { return argv[argc + 1] != 0; }", "valid-memsafety",
                          "F(valid-deref)"),
    "argument_strings_are_not_heap": ("int main(int argc, char **argv) { free(argv[0]); return 0; }",
                                      "valid-memsafety", "F(valid-free)"),
    # a loop over every argument reaches argv[4] for argc > 4: not modelled, so neither TRUE (the error needs
    # more than four arguments) nor FALSE
    "loop_over_all_arguments": ("""int main(int argc, char **argv) {
  int total = 0;
  for (int i = 1; i < argc; i++) { total += argv[i][0]; if (total < -1000) reach_error(); }
  return total;
}""", "unreach-call", "U"),
    "error_in_a_modelled_argument": ("""int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) if (argv[i][0] == 'z') reach_error();
  return 0;
}""", "unreach-call", "F"),
    "loop_over_all_arguments_memsafety": ("""int main(int argc, char **argv) {
  int total = 0;
  for (int i = 1; i < argc; i++) total += argv[i][0];
  return total;
}""", "valid-memsafety", "U"),
    # the same loop stopped before argv[ARGV_STRINGS] is decided
    "bounded_loop_over_arguments": (f"""int main(int argc, char **argv) {{
  int total = 0;
  for (int i = 1; i < argc && i < {ARGV_STRINGS}; i++) total += argv[i][0];
  return total;
}}""", "valid-memsafety", "T"),
}


def _verdict(tmp_path: Path, name: str) -> str:
    src, prop, _ = CASES[name]
    path = tmp_path / f"{name}.c"
    path.write_text(HEAD + src + "\n")
    job = Job(path, default_property() if prop == "unreach-call" else Property(prop), "ILP32")
    verdict, _ = verify_job(job, JobOptions("portfolio"), Deadline(time.monotonic() + 60))
    if verdict.status == Status.FALSE:
        return f"F({verdict.evidence.violated.prop})" if prop == "valid-memsafety" else "F"
    if verdict.status == Status.UNKNOWN and CASES[name][2].startswith("U"):
        what = "memory" if CASES[name][2] == "U:layout" else "argv"
        assert "does not model" in verdict.reason and what in verdict.reason, verdict.reason
        return CASES[name][2]
    return {Status.TRUE: "T"}.get(verdict.status, "U")


@pytest.mark.parametrize("name", sorted(CASES))
def test_main_arguments(tmp_path, name):
    want = CASES[name][2]
    got = _verdict(tmp_path, name)
    assert got != "F" if want == "not F" else got == want, (name, got)


def test_check_keeps_the_model_boundary_an_assertion(tmp_path, capsys):
    """`check` turns every other check into an assumption, but not the assertion that a run stays inside the
    model: a loop over every argument leaves each check unknown, never safe."""
    from looprover import cli
    path = tmp_path / "loop.c"
    path.write_text(CASES["loop_over_all_arguments_memsafety"][0] + "\n")
    cli.main(["check", str(path), "--json", "--timeout", "60"])
    got = json.loads(capsys.readouterr().out)
    assert got["checks"] and all(c["status"] != "safe" for c in got["checks"]), got


def test_a_counterexample_with_arguments_is_replayed_not_run_compiled(tmp_path, capsys):
    """The FALSE rests on the replay on the program; the compiled harness would start the program with other
    arguments, so it says it was not run rather than that the run missed the error."""
    from looprover import cli
    path = tmp_path / "flag.c"
    path.write_text("extern void abort(void);\nvoid reach_error(void) { abort(); }\n"
                    "int main(int argc, char **argv) {\n"
                    "  if (argc == 3 && argv[2][0] == '-' && argv[2][1] == 'v' && argv[1][0] == 0) reach_error();\n"
                    "  return 0;\n}\n")
    cli.main(["verify", str(path), "--json", "--timeout", "60"])
    got = json.loads(capsys.readouterr().out)
    assert got["status"] == "FALSE" and got["counterexample"]["validated"], got
    assert got["harness"]["reached_error"] is None and "argv" in got["harness"]["detail"], got["harness"]
