"""The portfolio: parallel engine processes, first definitive answer, evidence checks, deadlines."""
from __future__ import annotations

import multiprocessing as mp
import pickle
import time


from looprover import portfolio
from looprover.deadline import PAST_DEADLINE
from looprover.engines import verify
from looprover.engines.base import vet
from looprover.program.cfa import SrcLoc
from looprover.verdict import Counterexample, Status, Verdict


def run(monkeypatch, program, *names, timeout=20.0):
    monkeypatch.setattr(portfolio, "choose_engines", lambda task, run: list(names))
    t0 = time.monotonic()
    v = verify("portfolio", program, timeout=timeout)
    return v, time.monotonic() - t0


def test_program_is_picklable(chc_program):
    again = pickle.loads(pickle.dumps(chc_program))
    assert again == chc_program
    assert [e for e in again.out_edges(again.init)] == chc_program.out_edges(chc_program.init)


def test_accept_demotes_unvalidated_counterexamples():
    bad = Verdict(Status.FALSE, "bmc", "found", evidence=Counterexample([], [], validated=False))
    none = Verdict(Status.FALSE, "bmc", "found")
    good = Verdict(Status.FALSE, "bmc", "found", evidence=Counterexample([], [], validated=True))
    assert vet(bad).status == Status.UNKNOWN
    assert "not validated" in vet(bad).reason
    assert vet(none).status == Status.UNKNOWN
    assert vet(good) is good


def test_disagreement_is_unknown():
    cex = Counterexample([], [], validated=True, violated_at=SrcLoc("a.c", 1))
    results = {"bmc": Verdict(Status.FALSE, "bmc", "cex", evidence=cex),
               "kinduction": Verdict(Status.TRUE, "kinduction", "proof")}
    bugs = []
    v = portfolio._decide(results, bugs)
    assert v.status == Status.UNKNOWN and "disagree" in v.reason
    assert bugs == [{"kind": "engines disagree", "answers": [
        {"engine": "kinduction", "answer": "TRUE", "reason": "proof"},
        {"engine": "bmc", "answer": "FALSE", "reason": "cex"}]}]
    assert portfolio._decide({"bmc": Verdict.unknown("bmc", "bound")}) is None
    assert portfolio._decide({"bmc": results["bmc"]}).engine == "portfolio:bmc"


def test_first_definitive_answer_wins_and_stragglers_are_killed(monkeypatch, fake_engines, chc_program):
    v, elapsed = run(monkeypatch, chc_program, "fake_hang", "fake_true")
    assert v.status == Status.TRUE and v.engine == "portfolio:fake_true"
    assert elapsed < 10
    assert v.stats["portfolio"]["fake_hang"]["reason"].startswith("stopped")
    assert not mp.active_children()


def test_a_false_the_portfolio_replays_is_accepted(monkeypatch, fake_engines, unsafe_chc_program):
    v, _ = run(monkeypatch, unsafe_chc_program, "fake_unknown", "bmc")
    assert v.status == Status.FALSE and v.engine == "portfolio:bmc" and v.evidence.validated
    assert "bugs" not in v.stats


def test_a_lying_false_is_unknown_and_reported(monkeypatch, fake_engines, chc_program):
    """Counterexamples flagged `validated` by their engines that are not executions of the program: a trace
    whose edges do not run to a violation, and a 'deep run' whose inputs do not reach one."""
    for liar in ("fake_false", "fake_false_deep_lie"):
        v, _ = run(monkeypatch, chc_program, "fake_unknown", liar)
        assert v.status == Status.UNKNOWN, liar
        assert "did not replay in the portfolio" in v.stats["portfolio"][liar]["reason"]
        (bug,) = v.stats["bugs"]
        assert bug["kind"] == "evidence rejected" and bug["engine"] == liar and bug["answer"] == "FALSE"


def test_a_true_whose_proof_fails_the_check_is_unknown_and_reported(monkeypatch, fake_engines, chc_program):
    v, _ = run(monkeypatch, chc_program, "fake_unknown", "fake_true_bad_proof")
    assert v.status == Status.UNKNOWN
    assert "proof failed the check in the portfolio: the 1-induction step fails" in \
        v.stats["portfolio"]["fake_true_bad_proof"]["reason"]
    (bug,) = v.stats["bugs"]
    assert bug["engine"] == "fake_true_bad_proof" and bug["answer"] == "TRUE"


def test_a_lying_complete_unwinding_or_closed_run_is_unknown(monkeypatch, fake_engines, chc_program,
                                                            unsafe_chc_program):
    ran = "the interpreted run ended with 'violation'"
    for liar, program, why in (("fake_true_short_unwinding", chc_program, "the loops are not exhausted at bound 2"),
                               ("fake_true_closed_run_lie", unsafe_chc_program, ran)):
        v, _ = run(monkeypatch, program, "fake_unknown", liar)
        assert v.status == Status.UNKNOWN
        assert f"proof failed the check in the portfolio: {why}" in v.stats["portfolio"][liar]["reason"]


def test_a_single_engine_true_is_checked_in_the_job(fake_engines, chc_file):
    """Without the portfolio the job checks the proof: a lying one is UNKNOWN, bmc's complete unwinding and
    k-induction's invariants pass."""
    from helpers.fake_engines import COUNTER_SMT2
    from looprover.deadline import Deadline
    from looprover.jobs import JobOptions, resolve_job, verify_job
    job = resolve_job(str(chc_file), None, None)
    unsafe = chc_file.with_name("unsafe.smt2")
    unsafe.write_text(COUNTER_SMT2.replace("(not (= y 20))", "(= y 20)"))
    for liar, file, why in (("fake_true_bad_proof", chc_file, "the 1-induction step fails"),
                            ("fake_true_short_unwinding", chc_file, "the loops are not exhausted at bound 2"),
                            ("fake_true_closed_run_lie", unsafe, "the interpreted run ended with 'violation'")):
        v, _ = verify_job(resolve_job(str(file), None, None), JobOptions(engine=liar), Deadline.after(20))
        assert v.status == Status.UNKNOWN and f"in the job's check with fresh solvers: {why}" in v.reason, v.reason
    for engine in ("bmc", "kinduction"):
        v, _ = verify_job(job, JobOptions(engine=engine), Deadline.after(20))
        assert v.status == Status.TRUE and v.stats["evidence_checked_by"] == "job", (engine, v.reason)
    v, _ = verify_job(job, JobOptions(engine="fake_true_no_proof"), Deadline.after(20))
    assert v.status == Status.UNKNOWN and "comes without a certificate" in v.reason, v.reason


def test_a_true_without_a_certificate_is_unknown_and_reported(monkeypatch, fake_engines, chc_program):
    v, _ = run(monkeypatch, chc_program, "fake_unknown", "fake_true_no_proof")
    assert v.status == Status.UNKNOWN
    assert "comes without a certificate" in v.stats["portfolio"]["fake_true_no_proof"]["reason"]
    (bug,) = v.stats["bugs"]
    assert bug["engine"] == "fake_true_no_proof" and bug["answer"] == "TRUE"


def test_a_true_whose_proof_passes_is_accepted(monkeypatch, chc_program):
    v, _ = run(monkeypatch, chc_program, "kinduction")
    assert v.status == Status.TRUE and v.stats.get("evidence_checked_by") == "portfolio"


def test_recheck_refuses_edges_the_program_does_not_have(unsafe_chc_program):
    """A trace through an edge that is not the program's (an engine's invention) is refused even when the
    invented edge would violate the assertion."""
    from looprover.deadline import Deadline
    from looprover.engines.base import Task
    from looprover.program.cfa import Edge
    from looprover.verdict import TraceStep
    from looprover.evidence.recheck import recheck_counterexample
    v = verify("bmc", unsafe_chc_program, Task.for_program(unsafe_chc_program), timeout=20)
    assert v.status == Status.FALSE
    cex = v.evidence
    assert recheck_counterexample(unsafe_chc_program, cex, False, Deadline.after(10)) is None
    last = cex.steps[-1].edge
    forged = Edge(last.src, last.dst, last.stmts + last.stmts)
    cex.steps[-1] = TraceStep(forged, cex.steps[-1].src, {})
    assert "not an edge of the program" in recheck_counterexample(unsafe_chc_program, cex, False,
                                                                  Deadline.after(10))


def test_unvalidated_false_is_not_an_answer(monkeypatch, fake_engines, chc_program):
    v, _ = run(monkeypatch, chc_program, "fake_false_unvalidated", "fake_slow_true")
    assert v.status == Status.TRUE
    assert "not validated" in v.stats["portfolio"]["fake_false_unvalidated"]["reason"]
    v, _ = run(monkeypatch, chc_program, "fake_false_unvalidated", "fake_unknown")
    assert v.status == Status.UNKNOWN and "not validated" in v.reason and "gave up" in v.reason


def test_deadline_kills_engines_that_ignore_it(monkeypatch, fake_engines, chc_program):
    v, elapsed = run(monkeypatch, chc_program, "fake_hang", "fake_hang", timeout=1.0)
    assert v.status == Status.UNKNOWN and "timeout" in v.reason
    assert elapsed < 1.0 + PAST_DEADLINE + 3
    assert not mp.active_children()


def test_crashes_and_exceptions_are_unknowns_not_failures(monkeypatch, fake_engines, chc_program):
    v, _ = run(monkeypatch, chc_program, "fake_crash", "fake_raise")
    assert v.status == Status.UNKNOWN
    assert "crashed (exit code 3)" in v.reason
    assert "internal error: RuntimeError: engine bug" in v.reason
    v, _ = run(monkeypatch, chc_program, "fake_crash", "fake_slow_true")
    assert v.status == Status.TRUE


def test_unsupported_constructs_and_unpicklable_evidence(monkeypatch, fake_engines, chc_program):
    v, _ = run(monkeypatch, chc_program, "fake_unsupported", "fake_unknown")
    assert "unsupported: floating point at prog.c:3" in v.reason
    v, _ = run(monkeypatch, chc_program, "fake_z3_evidence", "fake_hang", timeout=4.0)   # fake_hang runs out the clock
    # the z3 evidence crossed the process boundary as text (the answer arrived); being no proof, it certifies
    # nothing
    reason = v.stats["portfolio"]["fake_z3_evidence"]["reason"]
    assert v.status == Status.UNKNOWN and "comes without a certificate" in reason and "(invariant)" in reason


def test_progress_lines_are_prefixed_with_the_engine(monkeypatch, fake_engines, chc_program):
    lines = []
    monkeypatch.setattr(portfolio, "choose_engines", lambda task, run: ["fake_hang", "fake_slow_true"])
    v = verify("portfolio", chc_program, timeout=20, progress=lines.append)
    assert v.status == Status.TRUE
    assert any(l.startswith("portfolio: started fake_hang") for l in lines)
    # a child calls its forked copy of the callback (the CLI's prints to stderr), so this list only sees
    # the parent's own lines
    assert any("fake_slow_true answered TRUE" in l for l in lines)


def test_a_missing_engine_does_not_stop_the_others(monkeypatch, fake_engines, chc_program):
    monkeypatch.setitem(__import__("looprover.engines").engines.ENGINES, "ghost", "no.such.module")
    v, _ = run(monkeypatch, chc_program, "ghost", "fake_true")
    assert v.status == Status.TRUE
    assert "engine not available" in v.stats["portfolio"]["ghost"]["reason"]
    v, _ = run(monkeypatch, chc_program, "ghost", "undeclared")
    assert v.status == Status.UNKNOWN and "ghost: engine not available" in v.reason


# ------------------------------------------------------------------------------------------- engine choice
def test_engines_are_chosen_by_what_they_declare():
    from looprover.engines import ENGINES, get_engine
    from looprover.engines.base import Run, Task
    from looprover.properties import Property
    run = Run.with_timeout(10)
    names = portfolio.choose_engines(Task(), run)
    assert set(names) == {n for n in ENGINES if get_engine(n).portfolio           # C unreach-call: all of them
                          and "unreach-call" in get_engine(n).properties}         # that check it
    costs = [get_engine(n).cost for n in names]
    assert costs == sorted(costs) and names[:3] == ["bmc", "kinduction", "accel"]  # cheapest first
    assert portfolio.choose_engines(Task(Property("termination")), run) == ["termination"]
    bv = portfolio.choose_engines(Task(), Run.with_timeout(10, bitvector=True))
    assert bv == [n for n in names if get_engine(n).bitvector]
    # Horn clauses: Spacer's measured cost there puts it beside bmc in the first turns, k-induction after it
    chc = portfolio.choose_engines(Task(Property("check-sat"), "chc"), run)
    assert chc[:3] == ["bmc", "spacer", "kinduction"] and "execute" not in chc
    # memory safety of C: accel starts beside bmc, Spacer (on the strings' cell abstraction) joins the first
    # turns, k-induction waits for the second ones
    mem = portfolio.choose_engines(Task(Property("valid-memsafety")), run)
    assert mem[:4] == ["bmc", "accel", "spacer", "execute"] and mem[4] == "kinduction"
    assert names.index("spacer") > names.index("execute")          # elsewhere on C it keeps its later turn


def test_no_engine_for_the_task_is_unknown_with_the_reason(chc_program):
    from looprover.engines.base import Task
    from looprover.properties import Property
    v = verify("portfolio", chc_program, Task(Property("no-such-property"), "chc"), timeout=5)
    assert v.status == Status.UNKNOWN and "no engine accepts" in v.reason


# ------------------------------------------------------------------------------------------- time-sharing
def test_more_engines_than_cores_take_turns(monkeypatch, fake_engines, chc_program):
    """One core: the hanging engine that starts first is paused at the end of its turn, so the one after it
    still gets to answer; never more than one engine runs at a time."""
    from looprover.portfolio import PortfolioSettings
    settings = PortfolioSettings(engines=("fake_hang", "fake_unknown", "fake_slow_true"), cores=1,
                                 first_slice=0.3)
    v = verify("portfolio", chc_program, timeout=20, settings=settings)
    assert v.status == Status.TRUE and v.engine == "portfolio:fake_slow_true"
    assert v.stats["schedule"]["most_running"] == 1 and v.stats["schedule"]["pauses"] >= 1
    assert v.stats["portfolio"]["fake_unknown"]["status"] == "UNKNOWN"
    assert not mp.active_children()


def _spin(seconds: float) -> float:
    """Burns `seconds` of CPU time (a paused process makes no progress), returns when it started."""
    start = time.time()
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        pass
    return start


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_timeshare_never_runs_more_children_than_cores():
    """Four CPU-bound children on two 'cores', watched from outside through /proc: at no sample are more than
    two of them runnable (not stopped, not finished), and all four finish."""
    from looprover.processes import Child
    from looprover.timeshare import TimeShare
    share = TimeShare(4, lambda i, clock: Child(f"spin{i}", _spin, 0.6), cores=2, first_slice=0.1)
    results, most = {}, 0
    t_end = time.monotonic() + 60
    while not share.finished() and time.monotonic() < t_end:
        for i, child in share.poll(0.05):
            ok, value = child.result()
            assert ok
            results[i] = value
        live = [c for j, c in share.children.items() if j not in share.done and _state(c.pid) not in ("T", "t", "gone", "Z")]
        most = max(most, len(live))
    share.kill_all()
    assert sorted(results) == [0, 1, 2, 3]
    assert most <= 2 and share.max_running <= 2 and share.pauses >= 2


def _with_grandchild(seconds: float) -> bool:
    """A child whose work runs in a child of its own, as an engine's QE does (smt/tactics.py)."""
    from looprover.processes import Child
    ok, _ = Child("grandchild", _spin, seconds).result()
    return ok


def _until(cond, seconds: float = 10.0) -> bool:
    t_end = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > t_end:
            return False
        time.sleep(0.01)
    return True


def test_a_paused_child_s_own_children_are_paused_with_it():
    """Otherwise an engine paused while its QE child runs would leave that child on a core not its own."""
    from looprover.processes import Child, _descendants
    c = Child("engine", _with_grandchild, 60.0, daemon=False)
    try:
        assert _until(lambda: bool(_descendants(c.pid)))
        kids = _descendants(c.pid)
        c.pause()
        assert all(_state(k) in ("T", "t") for k in kids)
        c.resume()
        assert _until(lambda: all(_state(k) not in ("T", "t") for k in kids))
    finally:
        c.kill()
    assert _until(lambda: all(_state(k) in ("gone", "Z") for k in kids))   # it dies with its parent


def test_timeshare_starts_children_lazily_in_order():
    """With one core, a child that answers at once means the later ones are never started."""
    from looprover.processes import Child
    from looprover.timeshare import TimeShare
    started = []

    def start(i, clock):
        started.append(i)
        return Child(f"quick{i}", _spin, 0.0)
    share = TimeShare(3, start, cores=1, first_slice=5.0)
    ready = []
    while not ready:
        ready = share.poll(10)
    assert [i for i, _ in ready] == [0] and started == [0]
    share.kill_all()


def test_an_engine_s_deadlines_read_its_share_clock(fake_engines, chc_program):
    """Each engine of the portfolio sets its deadlines on the clock its time-share gives it, also when it has a
    core of its own (it is then never paused)."""
    from looprover.portfolio import PortfolioSettings
    for cores in (1, 3):
        settings = PortfolioSettings(engines=("fake_clock", "fake_unknown", "fake_slow_true"), cores=cores,
                                     first_slice=5.0)
        v = verify("portfolio", chc_program, timeout=20, settings=settings)
        assert v.stats["portfolio"]["fake_clock"]["reason"] == "deadlines on a ShareClock", cores


def test_a_share_clock_stands_still_while_the_child_is_paused():
    """The parent's writes (pause, resume) as the child reads them, on a wall clock set by hand: the clock is the
    wall clock less the time spent paused, so a deadline set before a pause is as far away after it."""
    from looprover import deadline as dl
    from looprover.deadline import Deadline
    from looprover.timeshare import ShareClock
    wall = [10.0]
    clock = ShareClock(10.0, wall=lambda: wall[0])
    wall[0] = 11.0
    assert clock.now() == 11.0
    clock.pause(11.0)
    wall[0] = 20.0
    assert clock.now() == 11.0                 # paused: nothing passes
    clock.resume(20.0)
    wall[0] = 20.5
    assert clock.now() == 11.5
    old = dl._clock
    try:
        dl.use_clock(clock)
        budget = Deadline.after(2.0)           # at 13.5 on this clock
        clock.pause(20.5)
        wall[0] = 50.0
        clock.resume(50.0)
        assert budget.left() == 2.0 and not budget.expired()
        wall[0] = 52.5
        assert budget.expired() and dl.now() == 14.0
    finally:
        dl.use_clock(old)


def test_tpa_keeps_its_single_system_beside_the_multiloop_engine():
    """In the portfolio the network search runs once (multiloop's), tpa gives the pc-encoded view; settings
    the user gave tpa are kept, and without multiloop tpa keeps its default."""
    from looprover.tpa.options import TPAOptions
    both = portfolio._settings_for("tpa", ["bmc", "tpa", "multiloop"], {})
    assert both["tpa"].loops == "single"
    assert portfolio._settings_for("tpa", ["bmc", "tpa"], {}) == {}
    mine = {"tpa": TPAOptions(variant="split")}
    assert portfolio._settings_for("tpa", ["tpa", "multiloop"], mine) is mine
    assert portfolio._settings_for("multiloop", ["tpa", "multiloop"], {}) == {}
