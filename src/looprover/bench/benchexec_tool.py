"""BenchExec tool-info module for looprover: `<benchmark tool="looprover.bench.benchexec_tool">`.

Why here, in the package: BenchExec loads a tool-info module by its full Python name, so this one can be
imported wherever looprover is installed (the environment that runs it anyway), without a path to set or a
copy inside BenchExec. Only BenchExec imports it (it needs `benchexec`, a test extra of looprover).

    python -m benchexec.test_tool_info looprover.bench.benchexec_tool
    benchexec contrib/benchexec/looprover-dev.xml
"""
from __future__ import annotations

import re

import benchexec.result as result
import benchexec.tools.template

# the answer line looprover prints first: SV-COMP's result string, or CHC-COMP's answer for .smt2 inputs
_ANSWER = re.compile(r"TRUE|UNKNOWN|FALSE(?:\((?P<prop>[a-z][a-z-]*)\))?|sat|unsat|unknown")
_VERSION = re.compile(r"looprover\s+(\S+)")

_KNOWN_FALSE = {r.partition("(")[2].rstrip(")"): r for r in (
    result.RESULT_FALSE_REACH, result.RESULT_FALSE_TERMINATION, result.RESULT_FALSE_OVERFLOW,
    result.RESULT_FALSE_DEREF, result.RESULT_FALSE_FREE, result.RESULT_FALSE_MEMTRACK,
    result.RESULT_FALSE_MEMCLEANUP, result.RESULT_FALSE_DATARACE, result.RESULT_FALSE_DEADLOCK)}


def answer_to_result(line: str) -> str | None:
    """BenchExec's result constant for one line of looprover's output, None if the line is not an answer."""
    m = _ANSWER.fullmatch(line.strip())
    if m is None:
        return None
    word = m.group(0)
    if word in ("TRUE", "sat"):                 # sat: the Horn clauses have a model, the program is safe
        return result.RESULT_TRUE_PROP
    if word in ("UNKNOWN", "unknown"):
        return result.RESULT_UNKNOWN
    prop = m.group("prop")
    if prop is None:                            # unsat (a derivation of false), or a bare FALSE
        return result.RESULT_FALSE_PROP
    return _KNOWN_FALSE.get(prop, f"{result.RESULT_FALSE_PROP}({prop})")


class Tool(benchexec.tools.template.BaseTool2):
    """looprover, a verifier for C programs (SV-COMP) and constrained Horn clauses (CHC-COMP) focused on loops.

    Each run is `looprover verify [OPTIONS] FILE --property PRP --data-model DM --timeout S`: the task's one
    input file, its property file, the data model of its options and the smaller of the CPU-time and
    wall-time limits as looprover's own (wall-clock) deadline, so it answers UNKNOWN before BenchExec kills it.
    The memory limit is BenchExec's (cgroups), so no `--memory` is passed. The first line of the output is
    the answer: TRUE, FALSE(property), UNKNOWN, or sat/unsat/unknown for .smt2 inputs.
    """

    REQUIRED_PATHS: list[str] = []     # an installed Python package: the executable is all BenchExec needs

    def executable(self, tool_locator):
        return tool_locator.find_executable("looprover", subdir="bin")

    def version(self, executable):
        line = self._version_from_tool(executable, arg="--version")
        m = _VERSION.match(line)
        return m.group(1) if m else line

    def name(self):
        return "looprover"

    def cmdline(self, executable, options, task, rlimits):
        if len(task.input_files) != 1:
            raise benchexec.tools.template.UnsupportedFeatureException(
                "looprover verifies one input file per task")
        cmd = [executable, "verify", *options, task.single_input_file]
        if task.property_file:
            cmd += ["--property", task.property_file]
        data_model = (task.options or {}).get("data_model")
        if data_model:
            cmd += ["--data-model", data_model]
        limits = [s for s in (rlimits.cputime, rlimits.walltime) if s]
        if limits:
            cmd += ["--timeout", str(min(limits))]
        return cmd

    def determine_result(self, run):
        for line in run.output:
            answer = answer_to_result(line)
            if answer is not None:
                return answer
        code = run.exit_code
        if code.signal:
            return f"{result.RESULT_ERROR} (signal {code.signal})"
        return f"{result.RESULT_ERROR} (exit code {code.value})"
