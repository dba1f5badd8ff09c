"""`looprover check --sarif FILE`: the checks' verdicts as a SARIF 2.1.0 log (OASIS Static Analysis Results
Interchange Format), the form code-scanning services and editors read.

One rule per kind of check, one result per check: a `violated` check is a result of kind `fail` and level
`error`, a `safe` one of kind `pass`, an `unknown` one of kind `open` (the spec's "the tool could not decide");
each at the check's source location, with the check's id, engine, time and (for a violation) the inputs of the
counterexample in its property bag.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from looprover.runtime_checks import KINDS, SAFE, VIOLATED, CheckResult

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
VERSION = "2.1.0"
RESULT_KIND = {VIOLATED: "fail", SAFE: "pass"}      # else "open"


def _tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("looprover")
    except PackageNotFoundError:
        return "unknown"


def _uri(file: str) -> str:
    """A file below the working directory as a relative reference (resolved against the log's location by
    readers that know the source root), any other as an absolute `file:` URI."""
    p = Path(file).resolve()
    try:
        return p.relative_to(Path(os.getcwd()).resolve()).as_posix()
    except ValueError:
        return p.as_uri()


def sarif_log(results: list[CheckResult], error: str | None = None, warnings: list[str] = ()) -> dict[str, Any]:
    """The log of one `check` run; `error` (the program could not be built) makes it a run without results whose
    invocation failed, with the reason as a notification; `warnings` are notifications of a run that went on
    (the calls whose code the front-end refuses)."""
    kinds = [k for k, _ in KINDS.values() if any(r.check.kind == k for r in results)]
    rules = [{"id": k, "shortDescription": {"text": d}} for k, d in KINDS.values() if k in kinds]
    out = []
    for r in results:
        res: dict[str, Any] = {
            "ruleId": r.check.kind, "ruleIndex": kinds.index(r.check.kind),
            "kind": RESULT_KIND.get(r.status, "open"),
            "message": {"text": f"{r.check.id} {r.status}: {r.check.description}"
                                + (f" ({r.reason})" if r.reason else "")},
            "properties": {"checkId": r.check.id, "status": r.status, "engine": r.engine,
                           "time": round(r.time, 3), **({"inputs": r.inputs} if r.status == VIOLATED else {}),
                           **({"harness": r.harness.to_json()} if r.harness is not None else {})},
        }
        res["level"] = "error" if r.status == VIOLATED else "none"
        src = r.check.src
        if src is not None:
            region = {"startLine": src.line, **({"startColumn": src.col} if src.col else {})}
            res["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": _uri(src.file)},
                                                      "region": region}}]
        out.append(res)
    invocation: dict[str, Any] = {"executionSuccessful": error is None}
    notes = [{"level": "warning", "message": {"text": w}} for w in warnings]
    if error is not None:
        notes.append({"level": "error", "message": {"text": error}})
    if notes:
        invocation["toolExecutionNotifications"] = notes
    driver = {"name": "looprover", "version": _tool_version(), "rules": rules}
    return {"$schema": SCHEMA, "version": VERSION,
            "runs": [{"tool": {"driver": driver}, "invocations": [invocation], "results": out}]}
