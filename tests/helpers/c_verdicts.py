"""The default portfolio's answer on a small C program, in the short form the case tables of the C library
tests use: T, U, F (unreach-call) or F(tag) with the violated property's tag."""
from __future__ import annotations

import time

from looprover.deadline import Deadline
from looprover.jobs import Job, JobOptions, verify_job
from looprover.properties import Property, default_property
from looprover.verdict import Status


def short_verdict(path, prop: str, timeout: float = 60, data_model: str = "ILP32"):
    """(short answer, verdict); a violation must be reported in `path` itself (at the call of a library
    function, not inside its model)."""
    job = Job(path, default_property() if prop == "unreach-call" else Property(prop), data_model)
    verdict, _ = verify_job(job, JobOptions("portfolio"), Deadline(time.monotonic() + timeout))
    got = {Status.TRUE: "T", Status.UNKNOWN: "U"}.get(verdict.status)
    if verdict.status == Status.FALSE:
        got = "F" if prop == "unreach-call" else f"F({verdict.evidence.violated.prop})"
        assert verdict.evidence.violated_at.file == str(path), verdict.evidence.violated_at
    return got, verdict


def body_verdict(tmp_path, name: str, head: str, body: str, prop: str, timeout: float = 60):
    """`short_verdict` of the program `head` + `int main(void) { body return 0; }`, written as `name`.c."""
    path = tmp_path / f"{name}.c"
    path.write_text(f"{head}int main(void) {{\n  {body}\n  return 0;\n}}\n")
    return short_verdict(path, prop, timeout) + (path,)
