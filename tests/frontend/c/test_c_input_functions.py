"""getchar, fgets, rand, time and srand (`frontend/c/input_functions.py`): every value C allows and no other, so
both answers stand; fgets's writes checked; a run that reads such a value is not given to the compiled harness."""
from __future__ import annotations

import json
import time

import pytest

from helpers.c_verdicts import body_verdict
from looprover.deadline import Deadline
from looprover.errors import UnsupportedError
from looprover.frontend.c import load_c_program
from looprover.witness.harness import harness_for

HEAD = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n" \
       "extern void reach_error(void);\n"

# name -> (main's body, property, expected: T, F or F(valid-deref))
CASES = {
    "getchar_range": ("int c = getchar(); if (c < -1 || c > 255) reach_error();", "unreach-call", "T"),
    "getchar_reaches": ("int c = getchar(); if (c == 'x') reach_error();", "unreach-call", "F"),
    "getc_range": ("int c = fgetc(stdin) + getc(stdin); if (c < -2 || c > 510) reach_error();", "unreach-call", "T"),
    "rand_range": ("srand(7); int r = rand(); if (r < 0 || r > RAND_MAX) reach_error();", "unreach-call", "T"),
    "rand_reaches": ("srand((unsigned)time(NULL)); if (rand() % 1000 == 999) reach_error();", "unreach-call", "F"),
    "time_stores": ("time_t t = 0; time_t r = time(&t); if (r != t) reach_error();", "unreach-call", "T"),
    "fgets_terminates": ("char b[4]; if (fgets(b, 4, stdin) != NULL && strlen(b) > 3) reach_error();",
                         "unreach-call", "T"),
    "fgets_newline_last": ("char b[8]; if (fgets(b, 8, stdin) && b[0] == '\\n' && b[1] != 0) reach_error();",
                           "unreach-call", "T"),
    "fgets_newline_read": ("char b[8]; if (fgets(b, 8, stdin) && b[0] == '\\n') reach_error();", "unreach-call", "F"),
    "fgets_fails": ("char b[8]; b[0] = 'z'; if (fgets(b, 8, stdin) == NULL) reach_error();", "unreach-call", "F"),
    # with n == 1 there is nothing to read: glibc and musl return s, an empty string
    "fgets_one": ("char b[1]; b[0] = 'x'; if (fgets(b, 1, stdin) == NULL || b[0] != 0) reach_error();",
                  "unreach-call", "T"),
    "fgets_fits": ("char b[4]; if (fgets(b, sizeof b, stdin)) return (int)strlen(b);", "valid-memsafety", "T"),
    "fgets_overflows": ("char b[4]; if (fgets(b, 8, stdin)) return b[0];", "valid-memsafety", "F(valid-deref)"),
    "index_from_input": ("char in[14] = \"\"; int d = -1, buf[10] = {0};\n"
                         "if (fgets(in, 14, stdin) != NULL) d = atoi(in); if (d >= 0) buf[d] = 1;",
                         "valid-memsafety", "F(valid-deref)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_input_verdicts(tmp_path, name):
    body, prop, want = CASES[name]
    got, verdict, path = body_verdict(tmp_path, name, HEAD, body, prop, timeout=90)
    assert got == want, (name, verdict.reason)
    if got == "F" and prop == "unreach-call":
        result = harness_for(verdict, path, "ILP32", True, Deadline(time.monotonic() + 30))
        assert result.reached_error is None and "reads input through a library function" in result.detail, result


@pytest.mark.parametrize("body", [
    "srand(42); int a = rand(); srand(42); int b = rand(); if (a != b) reach_error();",
    "int a = rand(); srand(1); if (a != rand()) reach_error();",
    "for (int i = 0; i < 2; i++) srand(3); if (rand() < 0) reach_error();",
])
def test_a_seed_set_again_is_refused(tmp_path, body):
    """C makes a seed repeat its sequence; independent rand values would find a run no C library has."""
    path = tmp_path / "seed.c"
    path.write_text(f"{HEAD}int main(void) {{\n  {body}\n  return 0;\n}}\n")
    with pytest.raises(UnsupportedError, match="srand that may run again"):
        load_c_program(path)


@pytest.mark.parametrize("body, written", [
    ("int c = getchar(); if (c == 'x' && rand() == 7) reach_error();", True),
    # the characters fgets stores are no input a witness can pin
    ("char b[4]; if (fgets(b, 4, stdin) && b[0] == 'x') reach_error();", False),
])
def test_violation_witnesses_pin_returned_values(tmp_path, capsys, body, written):
    from looprover import cli
    path = tmp_path / "w.c"
    path.write_text(f"{HEAD}int main(void) {{\n  {body}\n  return 0;\n}}\n")
    out = tmp_path / "w.yml"
    cli.main(["verify", str(path), "--witness", str(out), "--json"])
    got = json.loads(capsys.readouterr().out)
    assert got["result"] == "FALSE(unreach-call)"
    assert out.exists() == written, got["witness"]
    if written:
        assert "the validator confirms it" in got["witness"]["note"] and "\\result == 120" in out.read_text()
