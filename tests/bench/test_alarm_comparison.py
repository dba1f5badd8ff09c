"""scripts/alarm_comparison.py: which of Frama-C EVA's alarms (read from its Report plugin's CSV) `check`'s
verdicts at the same place prove false, show real or leave open."""
from __future__ import annotations

from helpers.scripts import load_script

HEAD = "directory\tfile\tline\tfunction\tproperty kind\tstatus\tproperty\n"
ROWS = [
    ("src", "lib.c", 10, "f", "mem_access", "Unknown", "\\valid_read(p)"),
    ("src", "lib.c", 10, "f", "mem_access", "Partially proven", "\\valid_read(p)"),   # a second access there
    ("src", "lib.c", 11, "f", "signed_overflow", "Unknown", "x + 1 <= 2147483647"),
    ("src", "lib.c", 12, "f", "precondition of memmove", "Unknown", "valid_dest: valid_or_empty(dest, n)"),
    ("src", "lib.c", 13, "f", "precondition of tolower", "Unknown", "c_uchar_or_eof: (0 <= c <= 255) || c == -1"),
    ("src", "lib.c", 14, "f", "precondition of __FC_assert", "Invalid", "nonnull_c: c != 0"),
    ("src", "lib.c", 15, "f", "division_by_zero", "Unknown", "y != 0"),
    ("src", "lib.c", 16, "f", "initialization", "Unknown", "\\initialized(&t)"),
    ("src", "lib.c", 17, "f", "mem_access", "Valid", "\\valid(q)"),            # shown: no alarm
    ("src", "lib.c", 18, "f", "mem_access", "Dead", "\\valid(q)"),             # unreachable: no alarm
    ("src", "lib.c", 19, "f", "assigns clause", "Unknown", "assigns \\nothing;"),  # a specification
    (".", "main.c", 3, "main", "mem_access", "Unknown", "\\valid(r)"),        # the harness: not counted
]
CHECKS = [
    {"file": "src/lib.c", "line": 10, "kind": "memory-access", "status": "safe"},
    {"file": "src/lib.c", "line": 10, "kind": "memory-access", "status": "safe"},
    {"file": "src/lib.c", "line": 11, "kind": "signed-overflow", "status": "violated"},
    {"file": "src/lib.c", "line": 12, "kind": "memory-access", "status": "safe"},
    {"file": "src/lib.c", "line": 12, "kind": "memory-access", "status": "unknown"},
    {"file": "src/lib.c", "line": 14, "kind": "assertion", "status": "safe"},
    {"file": "src/lib.c", "line": 15, "kind": "signed-overflow", "status": "safe"},   # not the alarm's kind
]


def test_alarms_are_counted_as_eva_counts_them_and_matched_by_place_and_kind(tmp_path):
    script = load_script("alarm_comparison")
    report = tmp_path / "eva.csv"
    report.write_text(HEAD + "".join("\t".join(map(str, r)) + "\n" for r in ROWS))
    alarms = script.eva_alarms(report, {"lib.c"})
    assert sorted((line, kind) for _, line, kind, _ in alarms) == [
        (10, "mem_access"), (10, "mem_access"), (11, "signed_overflow"), (12, "precondition of memmove"),
        (13, "precondition of tolower"), (14, "precondition of __FC_assert"), (15, "division_by_zero"),
        (16, "initialization")]
    result = script.compare(alarms, CHECKS)
    assert result["outcome"] == {"proved false": 3, "real": 1, "open": 1, "no check": 1}
    assert result["by_kind"] == {"memory-access": {"proved false": 2, "open": 1}, "signed-overflow": {"real": 1},
                                 "assertion": {"proved false": 1}, "undefined-operation": {"no check": 1}}
    assert result["eva_only_kinds"] == {"precondition of tolower": 1, "initialization": 1}
