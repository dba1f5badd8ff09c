"""Task definitions: SV-COMP `.yml` files and CHC-COMP style `expected.csv` directories.

Why a reader interface: `looprover verify TASK.yml` and `looprover bench DIR` must agree on what a task
means (input file, property, expected verdict, data model), and benchmark sets come in more than one
format. A reader turns a directory into `BenchTask`s, one per (task, property) pair; `collect_tasks` merges
the readers' results and drops duplicates (a CHC-COMP file can be listed in `expected.csv` *and* have its
own `.yml`).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol

import yaml

from looprover.errors import InputError
from looprover.properties import CHECK_SAT, TERMINATION, UNREACH_CALL, VERIFIABLE, Property, load_property

DATA_MODELS = ("ILP32", "LP64")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class TaskProperty:
    property_file: Path
    expected: bool | None      # True: the property holds; False: it is violated; None: not stated
    subproperty: str | None = None   # of a violated valid-memsafety: valid-deref, valid-free or valid-memtrack


@dataclass(frozen=True)
class TaskDefinition:
    """One SV-COMP task definition file (format 1.0 or 2.0)."""
    path: Path
    input_files: tuple[Path, ...]
    properties: tuple[TaskProperty, ...]
    data_model: str | None     # None when the file does not say (format 1.0); SV-COMP's default is ILP32


def read_task_definition(path: str | Path) -> TaskDefinition:
    """Parse and check a `.yml` task definition; every problem is an InputError naming the file."""
    path = Path(path)
    try:
        data = yaml.load(path.read_text(errors="replace"), Loader=_Loader)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InputError(f"{path}: malformed YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a task definition (expected a YAML mapping)")
    inputs = data.get("input_files")
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not inputs or not all(isinstance(i, str) for i in inputs):
        raise InputError(f"{path}: task definition needs 'input_files' (a file name or a list of them)")
    base = path.parent
    input_paths = tuple(base / i for i in inputs)
    for p in input_paths:
        if not p.is_file():
            raise InputError(f"{path}: input file {p} does not exist")
    props = data.get("properties", [])
    if not isinstance(props, list):
        raise InputError(f"{path}: 'properties' must be a list")
    task_props = []
    for entry in props:
        if not isinstance(entry, dict) or not isinstance(entry.get("property_file"), str):
            raise InputError(f"{path}: each property needs a 'property_file'")
        expected = entry.get("expected_verdict")
        if expected is not None and not isinstance(expected, bool):
            raise InputError(f"{path}: expected_verdict must be true or false, not {expected!r}")
        sub = entry.get("subproperty")
        task_props.append(TaskProperty(base / entry["property_file"], expected, sub if isinstance(sub, str) else None))
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise InputError(f"{path}: 'options' must be a mapping")
    dm = options.get("data_model")
    if dm is not None and dm not in DATA_MODELS:
        raise InputError(f"{path}: unknown data_model {dm!r} (known: {', '.join(DATA_MODELS)})")
    return TaskDefinition(path, input_paths, tuple(task_props), dm)


def choose_property(task: TaskDefinition) -> tuple[Property, bool | None]:
    """The property `looprover verify TASK.yml` checks: the first reachability property we can verify
    (unreach-call, check-sat), else termination, else no-overflow, else the first listed. Reachability comes
    first because SV-COMP tasks list their properties in any order, and `verify TASK.yml` checked reachability
    before termination and no-overflow could be verified (so a task's default stays what it was); `--property`
    picks any other.
    A property file that cannot be read only matters if no other property of the task can be used."""
    if not task.properties:
        raise InputError(f"{task.path}: the task definition lists no properties")
    loaded: list[tuple[Property, bool | None]] = []
    first_error: InputError | None = None
    for tp in task.properties:
        try:
            loaded.append((load_property(tp.property_file), tp.expected))
        except InputError as exc:
            first_error = first_error or exc
    usable = [(prop, expected) for prop, expected in loaded if prop.unsupported_reason() is None]
    rank = {UNREACH_CALL: 0, CHECK_SAT: 0, TERMINATION: 1}
    if usable:
        return min(usable, key=lambda pe: rank.get(pe[0].name, 2))
    if loaded:
        return loaded[0]
    raise first_error


# ----------------------------------------------------------------------------------- benchmark runs
@dataclass(frozen=True)
class BenchTask:
    """One benchmark run: an input file checked against one property with a known expected verdict."""
    id: str                     # stable, human-readable: the task file relative to the benchmark root
    input_file: Path
    property: str               # property name (unreach-call, check-sat, termination, ...)
    property_spec: str          # what to pass as `--property` (a .prp path or a property name)
    expected: bool | None
    data_model: str
    origin: Path                # the file that defined the task (.yml or expected.csv)
    error: str | None = None    # a task that cannot be run (bad definition): reported, never run
    more_inputs: tuple[Path, ...] = ()   # further input files linked with input_file
    subproperty: str | None = None       # the part of the property a violation breaks (valid-memsafety)

    @property
    def runnable(self) -> bool:
        return self.error is None and self.property in VERIFIABLE


class TaskReader(Protocol):
    """Finds the tasks of one benchmark format below a directory."""

    def find(self, root: Path) -> Iterable[BenchTask]: ...


class SvcompYmlReader:
    """`*.yml` task definitions (SV-COMP, and CHC-COMP's copies of them), one run per property that has an
    expected verdict. A broken definition becomes a task with `error` set, so it shows up in the results."""

    def find(self, root: Path) -> Iterable[BenchTask]:
        for path in sorted(root.rglob("*.yml")):
            rel = path.relative_to(root).as_posix()
            try:
                task = read_task_definition(path)
            except InputError as exc:
                yield BenchTask(rel, path, "?", "", None, "ILP32", path, error=str(exc))
                continue
            for tp in task.properties:
                if tp.expected is None:
                    continue             # test-generation goals carry no verdict
                try:
                    name = load_property(tp.property_file).name
                except InputError as exc:
                    yield BenchTask(rel, task.input_files[0], tp.property_file.stem, str(tp.property_file),
                                    tp.expected, task.data_model or "ILP32", path, error=str(exc))
                    continue
                yield BenchTask(rel, task.input_files[0], name, str(tp.property_file), tp.expected,
                                task.data_model or "ILP32", path, more_inputs=tuple(task.input_files[1:]),
                                subproperty=tp.subproperty if tp.expected is False else None)


class ChcExpectedCsvReader:
    """Directories with an `expected.csv` of `file,expected` rows (sat = safe = TRUE, unsat = FALSE)."""

    def find(self, root: Path) -> Iterable[BenchTask]:
        for csv_path in sorted(root.rglob("expected.csv")):
            base = csv_path.parent
            with csv_path.open(newline="") as fh:
                for row in csv.DictReader(fh):
                    rel_file = (row.get("file") or "").strip()
                    answer = (row.get("expected") or "").strip().lower()
                    if not rel_file:
                        continue
                    f = base / rel_file
                    tid = f.relative_to(root).as_posix() if f.is_relative_to(root) else str(f)
                    expected = {"sat": True, "unsat": False}.get(answer)
                    error = None
                    if answer not in ("sat", "unsat"):
                        error = f"{csv_path}: expected answer for {rel_file} must be sat or unsat, not {answer!r}"
                    elif not f.is_file():
                        error = f"{csv_path}: listed file {rel_file} does not exist"
                    yield BenchTask(tid, f, CHECK_SAT, CHECK_SAT, expected, "ILP32", csv_path, error)


DEFAULT_READERS: tuple[TaskReader, ...] = (SvcompYmlReader(), ChcExpectedCsvReader())


def collect_tasks(root: str | Path, readers: Iterable[TaskReader] = DEFAULT_READERS,
                  filter_substr: str | None = None) -> list[BenchTask]:
    """All runs below `root`, in a stable order, without duplicate (input file, property) pairs."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: not a directory")
    seen: set[tuple[str, str]] = set()
    out: list[BenchTask] = []
    for reader in readers:
        for t in reader.find(root):
            if filter_substr and filter_substr not in t.id:
                continue
            key = (str(t.input_file.resolve()), t.property) if t.error is None else (t.id, t.error)
            if key in seen:
                continue
            seen.add(key)
            out.append(t)
    return out
