"""`looprover bench --compare A.csv B.csv`: counts per engine and the tasks solved by one run only."""
from __future__ import annotations

from helpers.bench_csv import write_results

from looprover import cli

ROWS_A = [("t1.yml", "TRUE", "correct", 2, 1.0), ("t2.yml", "FALSE", "correct", 1, 19.5),
          ("t3.yml", "UNKNOWN", "unknown", 0, 20.0)]
ROWS_B = [("t1.yml", "TRUE", "correct", 2, 1.2), ("t2.yml", "UNKNOWN", "unknown", 0, 20.0),
          ("t3.yml", "TRUE", "correct", 2, 3.0)]


def _write(path, rows):
    write_results(path, [{"task": task, "status": status, "result": result, "score": score, "cpu_time": wall}
                         for task, status, result, score, wall in rows])


def test_compare_lists_counts_and_differences(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _write(a, ROWS_A)
    _write(b, ROWS_B)
    assert cli.main(["bench", "--compare", str(a), str(b), "--timeout", "20"]) == 0
    out = capsys.readouterr().out
    assert "correct TRUE                     1          2" in out
    assert "solved in A only (1):\n    t2.yml [unreach-call]: FALSE in 19.5 s (near the limit)" in out
    assert "solved in B only (1):\n    t3.yml [unreach-call]: TRUE in 3.0 s; other run: UNKNOWN 20.0 s" in out


def test_compare_needs_results_csvs(tmp_path, capsys):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    assert cli.main(["bench", "--compare", str(bad), str(bad)]) == cli.EXIT_INPUT_ERROR
    assert "not a looprover bench results CSV" in capsys.readouterr().err
    assert cli.main(["bench"]) == cli.EXIT_USAGE
