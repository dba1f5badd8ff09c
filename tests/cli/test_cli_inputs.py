"""`verify` with several input files (a program plus library code), `.yml` tasks listing several
`input_files`, `-D` definitions, and the valid-memsafety property end to end (`FALSE(valid-deref)`)."""
from __future__ import annotations

import json
import re

import pytest

from looprover import cli
from looprover.frontend.c import load_c_program

from helpers.scripts import load_script

MAIN = ("extern int __VERIFIER_nondet_int(void);\nvoid reach_error(void);\nint twice(int x);\nint limit;\n"
        "int main(void) {\n  int n = __VERIFIER_nondet_int();\n  if (n < 0 || n > 100) return 0;\n"
        "  if (twice(n) > 2 * LIMIT) reach_error();\n  return 0; }\n")
LIB = "#define LIMIT 1000\nint twice(int x) { return x + x; }\n"
UNSAFE_LIB = "int twice(int x) { return 3 * x; }\n"
MEMSAFETY_PRP = "CHECK( init(main()), LTL(G valid-free) )\nCHECK( init(main()), LTL(G valid-deref) )\n" \
                "CHECK( init(main()), LTL(G valid-memtrack) )\n"


def _verify(capsys, *argv):
    code = cli.main(["verify", *map(str, argv), "--engine", "bmc", "--timeout", "30", "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def test_two_files_are_linked_into_one_program(tmp_path, capsys):
    (tmp_path / "main.c").write_text(MAIN)
    (tmp_path / "lib.c").write_text(LIB)
    (tmp_path / "bad.c").write_text(UNSAFE_LIB)
    # each file is preprocessed on its own: lib.c's LIMIT does not reach main.c; -D sets it for both
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "lib.c")
    assert code == 1 and "undeclared identifier 'LIMIT'" in data["error"], data
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "lib.c", "-D", "LIMIT=100")
    assert code == 0 and data["status"] == "TRUE", data
    assert data["more_files"] == [str(tmp_path / "lib.c")]
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "lib.c", "-DLIMIT=40")
    assert code == 0 and data["status"] == "FALSE" and data["counterexample"]["validated"], data
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "bad.c", "-D", "LIMIT=100")   # 3n > 200
    assert code == 0 and data["result"] == "FALSE(unreach-call)", data
    # statements keep the file they come from
    program = load_c_program([tmp_path / "main.c", tmp_path / "bad.c"], cpp_flags=("-DLIMIT=1",))
    files = {s.src.file for _, s in program.statements() if s.src is not None}
    assert files == {str(tmp_path / "main.c"), str(tmp_path / "bad.c")}


def test_include_directories_reach_the_front_end_and_the_compiled_harness(tmp_path, capsys, monkeypatch):
    """`-I DIR` (relative to where looprover runs) finds a header for the model and for the gcc-compiled run of a
    counterexample, which happens elsewhere; `-D` and `-I` are given to gcc in their command-line order."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "limit.h").write_text("#ifndef LIMIT\n#define LIMIT 1000\n#endif\n")
    (tmp_path / "main.c").write_text('#include "limit.h"\n' + MAIN)
    (tmp_path / "lib.c").write_text(LIB.replace("#define LIMIT 1000\n", ""))
    monkeypatch.chdir(tmp_path)
    code, data = _verify(capsys, "main.c", "lib.c")
    assert code == 1 and "limit.h" in data["error"], data
    code, data = _verify(capsys, "main.c", "lib.c", "-I", "inc")
    assert code == 0 and data["status"] == "TRUE", data
    code, data = _verify(capsys, "main.c", "lib.c", "-DLIMIT=40", "-I", "inc")
    assert code == 0 and data["status"] == "FALSE" and data["counterexample"]["validated"], data
    assert data["harness"]["reached_error"] is True, data["harness"]     # also: reach_error has no body here


def test_a_function_defined_in_two_files_is_an_input_error(tmp_path, capsys):
    (tmp_path / "main.c").write_text(MAIN)
    (tmp_path / "lib.c").write_text(LIB)
    (tmp_path / "again.c").write_text(UNSAFE_LIB)
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "lib.c", tmp_path / "again.c", "-DLIMIT=1")
    assert code == 1 and data["status"] == "ERROR" and "redefinition of 'twice'" in data["error"], data


def test_files_that_include_one_header_share_its_types(tmp_path, capsys):
    """Each file is preprocessed on its own, so both bring the header's struct, enum and typedef: linked, they
    are one type (C11 6.2.7), as a compiler and linker take them. A static the header defines stays one per
    file, which one translation unit would merge into one variable: UNKNOWN naming it."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "shared.h").write_text("#include <stdlib.h>\nenum kind { SMALL, BIG };\n"
                                       "typedef struct { int n; enum kind k; } item;\nint weigh(item *it);\n")
    (tmp_path / "lib.c").write_text('#include "shared.h"\n'
                                    "int weigh(item *it) { return it->k == BIG ? 2 * it->n : it->n; }\n")
    (tmp_path / "sub" / "main.c").write_text(
        'extern void reach_error(void);\nextern int __VERIFIER_nondet_int(void);\n#include "../shared.h"\n'
        "int main(void) { item it = { __VERIFIER_nondet_int(), BIG };\n"
        "  if (it.n < 0 || it.n > 100) return 0;\n  if (weigh(&it) > LIMIT) reach_error();\n  return 0; }\n")
    main, lib = tmp_path / "sub" / "main.c", tmp_path / "lib.c"
    code, data = _verify(capsys, main, lib, "-DLIMIT=200")
    assert code == 0 and data["status"] == "TRUE", data
    code, data = _verify(capsys, main, lib, "-DLIMIT=199")
    assert code == 0 and data["status"] == "FALSE" and data["counterexample"]["validated"], data
    (tmp_path / "shared.h").write_text((tmp_path / "shared.h").read_text() + "static int calls;\n")
    code, data = _verify(capsys, main, lib, "-DLIMIT=200")
    assert code == 0 and data["status"] == "UNKNOWN" and "static storage defined in a header" in data["reason"], data


@pytest.mark.parametrize("first, second, ok", [("#define BIG\n", "", True), ("", "#define BIG\n", False)])
def test_a_header_that_macros_change_is_kept_unless_an_earlier_file_had_all_of_it(tmp_path, capsys, first, second,
                                                                                   ok):
    """The second file's lines of the header are left out only if the first file had every one of them; else the
    header stays whole and the compiler rejects the second definition of the struct (an input error)."""
    (tmp_path / "s.h").write_text("struct s {\n#ifdef BIG\n  long a;\n#endif\n  int b;\n};\nint get(struct s *p);\n")
    (tmp_path / "lib.c").write_text(second + '#include "s.h"\nint get(struct s *p) { return p->b; }\n')
    (tmp_path / "main.c").write_text(first + 'extern void reach_error(void);\n#include "s.h"\n'
                                     "int main(void) { struct s v; v.b = 3; if (get(&v) != 3) reach_error(); "
                                     "return 0; }\n")
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "lib.c")
    if ok:
        assert code == 0 and data["status"] == "TRUE", data
    else:
        assert code == 1 and "redefinition of 's'" in data["error"], data


STATIC_LIB = ("static int helper(int x) { return x + 1; }\nstatic int counter = 5;\n"
              "int fa(int x) { counter++; return helper(x) + counter; }\n")
STATIC_MAIN = ("extern int __VERIFIER_nondet_int(void);\nextern void reach_error(void);\nint fa(int x);\n"
               "static long counter;\n"
               "static int helper(int x) { struct { int helper; } s; s.helper = 2; return x * s.helper; }\n"
               "int main(void) {\n  int n = __VERIFIER_nondet_int();\n  if (n < 0 || n > 100) return 0;\n"
               "  int r = fa(n); int q = helper(n); counter = 7; if (r != n + 7 || q != WANT) reach_error();\n"
               "  if (counter != 7) reach_error();\n  return 0;\n}\n")


@pytest.mark.parametrize("want, verdict", [("2 * n", "TRUE"), ("2 * n + 1", "FALSE")])
def test_static_names_of_two_files_stay_apart(tmp_path, capsys, want, verdict):
    """Each file's `static` function and variable is its own (C11 6.2.2p3), as a compiler and linker keep them,
    though one name in both files: lib.c's helper adds one, main.c's doubles (a struct member of that name is
    left alone), and each file's counter has its own type and value."""
    (tmp_path / "main.c").write_text(STATIC_MAIN.replace("WANT", want))
    (tmp_path / "lib.c").write_text(STATIC_LIB)
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "lib.c")
    assert code == 0 and data["status"] == verdict, data
    if verdict == "FALSE":
        assert data["counterexample"]["validated"] and data["harness"]["reached_error"] is True, data


def test_a_static_name_another_file_gives_external_linkage_is_renamed_only_where_static(tmp_path, capsys):
    """sha512.c of Monocypher defines a static crypto_wipe while the library's header declares an external one."""
    (tmp_path / "lib.h").write_text("void wipe(int *p);\n")
    (tmp_path / "lib.c").write_text('#include "lib.h"\nvoid wipe(int *p) { *p = 0; }\n')
    (tmp_path / "main.c").write_text(
        "extern void reach_error(void);\nstatic void wipe(int *p) { *p = 1; }\nvoid other(int *p);\n"
        "int main(void) { int a = 5, b = 5; wipe(&a); other(&b); if (a != 1 || b != 0) reach_error(); return 0; }\n")
    (tmp_path / "other.c").write_text('#include "lib.h"\nvoid other(int *p) { wipe(p); }\n')
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "lib.c", tmp_path / "other.c")
    assert code == 0 and data["status"] == "TRUE", data


@pytest.mark.parametrize("mine", [
    'static int counter = 1; const char *m = "\u00e9\u00e9\u00e9"; int get(void) { return counter; }\n',  # bytes
    "static int\ncounter = 1;\nint get(void) { return counter; }\n",          # the name on the next line
    "static int a,\n  counter = 1;\nint get(void) { return counter + a; }\n",
    "static int in = 1, c = 0;\nint get(void) { return in + c; }\n",   # words of line markers: <built-in>, x.c
])
def test_a_static_name_is_renamed_wherever_clang_shows_it(tmp_path, capsys, mine):
    """Cases a review found missed: a use after non-ASCII text (clang counts bytes), `static` on another line
    than the name. The other file's counter is 5; get must read its own file's, 1."""
    (tmp_path / "lib.c").write_text(mine)
    (tmp_path / "main.c").write_text("extern void reach_error(void);\nint get(void);\nint counter = 5;\n"
                                     "int in = 7, c = 3;\nint main(void) { if (get() != 1 || counter != 5) reach_error(); return 0; }\n")
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "lib.c")
    assert code == 0 and data["status"] == "TRUE", data


def test_a_static_name_used_where_clang_shows_no_reference_is_unknown(tmp_path, capsys):
    """An attribute's argument names the function without a reference clang shows: renaming could miss it."""
    (tmp_path / "lib.c").write_text("static void helper(int *p) { *p = 0; }\n"
                                    "int get(void) { int x __attribute__((cleanup(helper))) = 1; return x; }\n")
    (tmp_path / "main.c").write_text("extern void reach_error(void);\nint get(void);\n"
                                     "void helper(int *p) { *p = 1; }\n"
                                     "int main(void) { if (get() != 1) reach_error(); return 0; }\n")
    code, data = _verify(capsys, tmp_path / "main.c", tmp_path / "lib.c")
    assert code == 0 and data["status"] == "UNKNOWN" and "static name 'helper'" in data["reason"], data


def test_checks_after_a_renamed_name_keep_their_source_columns(tmp_path):
    """Renaming makes a line longer; the checks after it on that line are reported at their columns in the
    source: the same as when no name needs renaming."""
    (tmp_path / "main.c").write_text(STATIC_MAIN.replace("WANT", "2 * n"))
    (tmp_path / "lib.c").write_text(STATIC_LIB)
    (tmp_path / "apart.c").write_text(STATIC_LIB.replace("helper", "inc").replace("counter", "count"))

    def places(lib):
        program = load_c_program([tmp_path / "main.c", lib], reach_checks=True)
        return sorted((s.src.line, s.src.col) for _, s in program.statements()
                      if s.src is not None and s.src.file.endswith("main.c"))
    assert places(tmp_path / "lib.c") == places(tmp_path / "apart.c")


def test_column_shifts_map_renamed_columns_back():
    from looprover.frontend.c.internal_names import ColumnShifts
    shifts = ColumnShifts()
    shifts.add("a.c", 3, 5, 8)          # a name at column 5 grew by 8
    shifts.add("a.c", 3, 20, 4)         # and one at column 20 by 4 (at 28 in the renamed line)
    assert [shifts.original("a.c", 3, c) for c in (1, 5, 14, 20, 28, 40)] == [1, 5, 6, 12, 20, 28]
    assert shifts.original("a.c", 4, 30) == 30 and shifts.original("b.c", 3, 30) == 30


def test_a_task_with_two_input_files(tmp_path, capsys):
    (tmp_path / "main.c").write_text(MAIN.replace("LIMIT", "60"))
    (tmp_path / "lib.c").write_text(LIB)
    (tmp_path / "unreach-call.prp").write_text("CHECK( init(main()), LTL(G ! call(reach_error())) )\n")
    (tmp_path / "t.yml").write_text("format_version: '2.0'\ninput_files: ['main.c', 'lib.c']\nproperties:\n"
                                    "  - property_file: unreach-call.prp\n    expected_verdict: false\n")
    code, data = _verify(capsys, tmp_path / "t.yml")
    assert code == 0 and data["status"] == "FALSE" and data["matches_expected"] is True, data


def test_memsafety_task_answers_false_valid_deref_with_the_access(tmp_path, capsys):
    (tmp_path / "buf.c").write_text("int main(void) {\n  char buf[4]; int i;\n"
                                    "  for (i = 0; i <= BASE_SZ; i++)\n    buf[i] = 0;\n  return 0; }\n")
    (tmp_path / "valid-memsafety.prp").write_text(MEMSAFETY_PRP)
    (tmp_path / "t.yml").write_text("format_version: '2.0'\ninput_files: buf.c\nproperties:\n"
                                    "  - property_file: valid-memsafety.prp\n    expected_verdict: false\n"
                                    "    subproperty: valid-deref\n")
    code, data = _verify(capsys, tmp_path / "t.yml", "-DBASE_SZ=4")
    assert code == 0 and data["result"] == "FALSE(valid-deref)" and data["property"] == "valid-memsafety", data
    assert data["counterexample"]["validated"] and data["counterexample"]["violated_at"].endswith("buf.c:4")
    code, data = _verify(capsys, tmp_path / "buf.c", "-DBASE_SZ=3", "--property", "valid-memsafety")
    assert code == 0 and data["status"] == "TRUE", data
    cli.main(["verify", str(tmp_path / "buf.c"), "-DBASE_SZ=4", "--property", "valid-memsafety", "--engine", "bmc"])
    assert "valid-deref is violated at" in capsys.readouterr().out


def test_unsupported_memsafety_construct_is_unknown_with_its_place(tmp_path, capsys):
    (tmp_path / "heap.c").write_text("void *realloc(void *, unsigned long);\nint main(void) {\n"
                                     "  void *q = realloc(0, 4);\n  return q != 0; }\n")
    code, data = _verify(capsys, tmp_path / "heap.c", "--property", "valid-memsafety")
    assert code == 0 and data["status"] == "UNKNOWN", data
    assert "unsupported: realloc used as void *" in data["reason"] and "heap.c:3" in data["reason"]


def test_bench_passes_every_input_file_of_a_task(tmp_path):
    from looprover.bench.runner import verify_command
    from looprover.bench.tasks import collect_tasks
    (tmp_path / "main.c").write_text(MAIN.replace("LIMIT", "60"))
    (tmp_path / "lib.c").write_text(LIB)
    (tmp_path / "unreach-call.prp").write_text("CHECK( init(main()), LTL(G ! call(reach_error())) )\n")
    (tmp_path / "t.yml").write_text("format_version: '2.0'\ninput_files: ['main.c', 'lib.c']\nproperties:\n"
                                    "  - property_file: unreach-call.prp\n    expected_verdict: false\n")
    (task,) = collect_tasks(tmp_path)
    cmd = verify_command(task, 10, "bmc", None)
    at = cmd.index("verify")
    assert cmd[at + 1:at + 3] == [str(tmp_path / "main.c"), str(tmp_path / "lib.c")]


def _verisec_script():
    return load_script("verisec")


@pytest.mark.slow
def test_verisec_cases_with_their_stubs(shared_dir, tmp_path, capsys):
    """Verisec test cases linked with the suite's stubs (prepared as scripts/verisec.py does): an overflow found
    with its access, and a fixed variant proved."""
    verisec = _verisec_script()
    suite = shared_dir / "benchmarks" / "verisec"
    stubs = verisec.stubs_copy(suite / "lib", tmp_path)
    apps = suite / "programs" / "apps"
    bad = apps / "edbrowse" / "CVE-2006-6909" / "ftpls" / "strchr_bad.c"
    code, data = _verify(capsys, bad, stubs, "-DBASE_SZ=2", "--property", "valid-memsafety")
    assert code == 0 and data["result"] == "FALSE(valid-deref)" and data["counterexample"]["validated"], data
    ok = apps / "sendmail" / "CVE-2003-0161" / "prescan" / "prescan_arr_min_test_ok.c"
    code, data = _verify(capsys, ok, stubs, "-DBASE_SZ=2", "--property", "valid-memsafety")
    assert code == 0 and data["status"] == "TRUE", data


def test_verisec_tables_of_runs_at_several_sizes(tmp_path, capsys):
    """`scripts/verisec.py --tables` joins the CSVs of runs made one size at a time: counts per size, the time
    to find each overflow by size (with its median), and a wrong answer makes it exit 1."""
    verisec = _verisec_script()
    head = "file,size,expected,status,outcome,time,engine,reason\n"
    (tmp_path / "s2.csv").write_text(head + "a_bad.c,2,False,FALSE,found,1.5,bmc,\n"
                                     "a_ok.c,2,True,TRUE,proved,0.5,kinduction,\n")
    (tmp_path / "s1000.csv").write_text(head + "a_bad.c,1000,False,FALSE,found,2.5,accel,\n"
                                        "a_ok.c,1000,True,UNKNOWN,unknown,60,,timeout\n")
    assert verisec.main(["--tables", str(tmp_path / "s2.csv"), str(tmp_path / "s1000.csv")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^\s+2\s+1\s+1\s+1\s+1\s+0\s+0$", out, re.M)
    assert re.search(r"^\s+1000\s+1\s+1\s+1\s+0\s+0\s+1$", out, re.M)
    assert re.search(r"^\s+1\.50\s+2\.50\s+a_bad\.c$", out, re.M) and "undecided in time" in out
    (tmp_path / "w.csv").write_text(head + "b_ok.c,10,True,FALSE,WRONG,3.0,bmc,\n")
    assert verisec.main(["--tables", str(tmp_path / "w.csv")]) == 1
    assert "WRONG: b_ok.c at BASE_SZ=10" in capsys.readouterr().out


def test_verisec_tables_give_the_time_to_find_without_the_compiled_harness(tmp_path, capsys):
    """A FALSE's time includes its compiled harness (gcc and a run); the tables give the median without it too,
    and what the harnesses said."""
    verisec = _verisec_script()
    head = "file,size,expected,status,outcome,time,engine,reason,harness,harness_time\n"
    (tmp_path / "h.csv").write_text(head + "a_bad.c,2,False,FALSE,found,1.5,bmc,,reached,0.5\n"
                                    "b_bad.c,2,False,FALSE,found,2.5,bmc,,not run,0.25\n")
    assert verisec.main(["--tables", str(tmp_path / "h.csv")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^\s+2\.00\s+median$", out, re.M)
    assert re.search(r"^\s+1\.62\s+median without the compiled harness$", out, re.M)
    assert re.search(r"^\s+2: 1 not run, 1 reached$", out, re.M)


def test_verisec_rows_are_written_as_runs_end_and_a_resumed_run_skips_them(tmp_path, monkeypatch, capsys):
    verisec = _verisec_script()
    suite = tmp_path / "suite"
    (suite / "lib").mkdir(parents=True)
    (suite / "lib" / "stubs.h").write_text("#define TYPECAST_MEMCPY 0\n")
    (suite / "expected.csv").write_text("file,expected\na_bad.c,false\nb_ok.c,true\n")
    ran = []

    def fake_run(file, stubs, size, timeout, engine, command="verify", options=()):
        assert options == ("spacer.arrays=strings",)    # --option reaches every run
        ran.append((file.name, size))
        if file.name == "b_ok.c" and size == 10 and len(ran) == 2:
            raise KeyboardInterrupt                     # the first run is cut off here
        return {"status": "FALSE" if "bad" in file.name else "TRUE", "time": 1.0, "engine": "bmc"}

    monkeypatch.setattr(verisec, "run_one", fake_run)
    out = tmp_path / "runs.csv"
    args = [str(suite), "--size", "10", "--size", "100", "--csv", str(out), "--option", "spacer.arrays=strings"]
    with pytest.raises(KeyboardInterrupt):
        verisec.main(args)
    assert [r["file"] for r in verisec.read_results([out])] == ["a_bad.c"]      # kept though the run died
    ran.clear()
    assert verisec.main(args + ["--resume"]) == 0
    assert ran == [("b_ok.c", 10), ("a_bad.c", 100), ("b_ok.c", 100)]
    assert len(verisec.read_results([out])) == 4 and "(1 done earlier)" in capsys.readouterr().out


UNDEFINED = """extern int __VERIFIER_nondet_int(void);
void reach_error(void);
int check(int *p, int n);
void log_value(int v);
int g = 0;
int main(void) {
  int x = 5, y = 7;
  log_value(x);
  if (y != 7) reach_error();            /* y's address is never taken: no callee can change it */
  int r = check(&x, 3);
  if (r < 0 || r > 1) return 0;
  if (x == 5 && g == 0) return 0;       /* the callee may change x and g */
  reach_error();
  return 0;
}
"""


@pytest.mark.parametrize("engine", ["bmc", "portfolio"])
def test_undefined_functions_are_unknown_by_default_and_havoc_what_they_reach_with_nondet(tmp_path, capsys, engine):
    """Without the option the first undefined call is named; with it, the result and what a callee can reach
    (the global, the address-taken x; not y) take any value: FALSE, saying what it rests on, and no witness."""
    f = tmp_path / "u.c"
    f.write_text(UNDEFINED)
    code = cli.main(["verify", str(f), "--engine", engine, "--timeout", "30", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "UNKNOWN" and "undefined function 'log_value'" in data["reason"] and "u.c:8" in \
        data["reason"], data
    w = tmp_path / "w.yml"
    code = cli.main(["verify", str(f), "--engine", engine, "--timeout", "30", "--json", "--undefined-functions",
                     "nondet", "--witness", str(w)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["status"] == "FALSE", data
    assert "resting on the assumption that undefined function 'log_value' at" in data["reason"], data
    assert "undefined function 'check' at" in data["reason"] and "u.c:10" in data["reason"] and not w.exists()


def test_undefined_functions_nondet_keeps_a_true_sound(tmp_path, capsys):
    """A global the callee may write, asserted after the call: never TRUE; one only main touches: TRUE, with a
    correctness witness `validate` confirms under the same option."""
    f = tmp_path / "g.c"
    f.write_text("void reach_error(void);\nvoid touch(void);\nint g = 0;\nint main(void) {\n  int local = 1, i = 0;\n"
                 "  while (i < 10) { touch(); i++; }\n  if (local != 1) reach_error();\n  if (g != 0) reach_error();\n"
                 "  return 0;\n}\n")
    code = cli.main(["verify", str(f), "--engine", "kinduction", "--timeout", "30", "--json",
                     "--undefined-functions", "nondet"])
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "FALSE" and "g.c:8" in json.dumps(data["counterexample"]), data
    f.write_text(f.read_text().replace("  if (g != 0) reach_error();\n", ""))
    w = tmp_path / "w.yml"
    code = cli.main(["verify", str(f), "--engine", "kinduction", "--timeout", "30", "--json",
                     "--undefined-functions", "nondet", "--witness", str(w)])
    data = json.loads(capsys.readouterr().out)
    assert code == cli.EXIT_VERDICT and data["status"] == "TRUE", data
    # its witness is checked under the same reading of the call (without it the program is refused)
    cli.main(["validate", "--witness", str(w), str(f), "--undefined-functions", "nondet"])
    assert capsys.readouterr().out.startswith("confirmed"), data
    cli.main(["validate", "--witness", str(w), str(f)])
    assert "undefined function 'touch'" in capsys.readouterr().out


def test_verisec_links_the_programs_own_helper_file(tmp_path):
    """`programs/apps/<program>/<vulnerability>/<program>.c` (bind.c beside bind's test cases) is linked with
    every test case below it; a program without one gets none."""
    verisec = _verisec_script()
    vuln = tmp_path / "programs" / "apps" / "bind" / "CA-1999-14"
    (vuln / "rrextract-sig").mkdir(parents=True)
    (vuln / "bind.c").write_text("int dn_expand(void) { return 0; }\n")
    case = vuln / "rrextract-sig" / "simp_bad.c"
    case.write_text("int main(void) { return 0; }\n")
    assert verisec.helper_files(case) == [vuln / "bind.c"]
    other = tmp_path / "programs" / "apps" / "gxine" / "CVE-2007-0406" / "main_bad.c"
    other.parent.mkdir(parents=True)
    other.write_text("int main(void) { return 0; }\n")
    assert verisec.helper_files(other) == []


def test_verisec_check_mode_reads_one_verdict_per_file():
    """`scripts/verisec.py --command check`: a violated access makes the file FALSE, all safe TRUE, an open one
    UNKNOWN; a file `check` could not build keeps its own UNKNOWN."""
    verdict = _verisec_script().file_verdict

    def checks(*statuses):
        return {"checks": [{"status": s, "reason": s, "engine": "bmc"} for s in statuses], "time": 1.0}
    assert verdict(checks("safe", "violated", "unknown"))["status"] == "FALSE"
    assert verdict(checks("safe", "safe"))["status"] == "TRUE"
    assert verdict(checks("safe", "unknown"))["status"] == "UNKNOWN"
    assert verdict({"status": "UNKNOWN", "reason": "unsupported: x", "checks": []})["reason"] == "unsupported: x"


UNDEFINED_ASSERT = """extern int __VERIFIER_nondet_int(void);
int main(void) {
  int a[10];
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 10) return 0;
  assert(n < LIMIT);
  if (n < 10) a[n] = 1; else a[n - 1] = 2;
  return 0;
}
"""


@pytest.mark.parametrize("prop", ["valid-memsafety", "unreach-call", "no-overflow"])
def test_an_undefined_assert_that_can_fail_is_unknown_and_one_that_holds_is_proved(tmp_path, capsys, prop):
    """A call of `assert` the program leaves undefined (Verisec's inlined cases): what it does when its condition
    is false is unknown, so a failing one is UNKNOWN naming the call (it was taken as ending the run, which made
    programs TRUE whose later code the failing call may reach), and one that never fails does not stand in the
    way of TRUE."""
    (tmp_path / "a.c").write_text(UNDEFINED_ASSERT)
    code, data = _verify(capsys, tmp_path / "a.c", "-DLIMIT=10", "--property", prop)
    assert code == 0 and data["status"] == "UNKNOWN", data
    assert "assert at" in data["reason"] and "a.c:6" in data["reason"] and "undefined" in data["reason"], data
    code, data = _verify(capsys, tmp_path / "a.c", "-DLIMIT=11", "--property", prop)
    assert code == 0 and data["status"] == "TRUE", data
