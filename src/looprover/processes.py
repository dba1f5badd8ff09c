"""Child processes that compute one value, can be killed at any moment, and never outlive their parent.

Why processes: a solver call or a front-end pass can run far past its deadline inside native code, and only
a process can be stopped reliably and have its memory freed. `verify` runs its whole job (front-end and
engine) in one such child, killed at the deadline; the portfolio runs one per engine. Children are forked where
possible (no re-import of z3, no pickling of the program); each sends its one result through a pipe. A child
asks Linux to kill it when its parent dies (`PR_SET_PDEATHSIG`), so a killed `verify` or a Ctrl-C leaves no
solver behind, and it ignores SIGINT itself: the parent decides what an interrupt means (SIGTERM just ends it).
What native code writes to a child's stderr goes to a file its parent reads only when the child dies, into the
reason (`native_failure`); Python's own stderr in the child stays the user's.
"""
from __future__ import annotations

import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import time
from typing import Any, Callable, Iterable


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no orphaned solvers after a kill -9)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def set_memory_limit(mb: int | None) -> None:
    """Cap this process's address space (inherited by its children): a memout is an UNKNOWN, not a machine
    that swaps."""
    if not mb:
        return
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mb * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def memory_limit_mb() -> int | None:
    """The address-space limit this process runs under (`--memory`, inherited by its children), in MB."""
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY else soft // (1024 * 1024)


def address_space_mb() -> int | None:
    """How much address space this process maps now (VmSize), in MB; None where /proc does not say."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def out_of_memory_reason(detail: str = "") -> str:
    """The reason of an UNKNOWN for memory, naming the limit that was reached (if there is one)."""
    mb = memory_limit_mb()
    parts = [p for p in (f"--memory {mb} MB" if mb else "", detail) if p]
    return "out of memory" + (f" ({'; '.join(parts)})" if parts else "")


# Signals a process dies of when native code (z3, libclang) cannot allocate: an uncaught std::bad_alloc or a
# thread that cannot be created aborts, an unchecked failed allocation segfaults.
_NATIVE_CRASHES = (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS)


def death_reason(exitcode: int | None, limit_mb: int | None) -> str:
    """How a child died, for an UNKNOWN's reason. Under an address-space limit, a native abort or segfault is
    how a failed allocation shows (the run passed the start-up check, `jobs.preload`, so it ran out while
    computing); it is reported as out of memory, with the evidence."""
    if exitcode is not None and exitcode < 0:
        sig = -exitcode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        if limit_mb and sig in _NATIVE_CRASHES:
            return f"out of memory (--memory {limit_mb} MB: the process crashed with {name}, as native code does " \
                   f"when it cannot allocate)"
        return f"killed by signal {sig} ({name})"
    return f"exit code {exitcode}"


_MEMORY_SIGNS = ("failed to map segment", "cannot allocate memory", "can't start new thread", "out of memory",
                 "std::bad_alloc")


def out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` is how running out of address space (`--memory`) shows: a MemoryError, or a library that
    could not be mapped, a thread stack that could not be allocated, a native allocation that failed."""
    if isinstance(exc, MemoryError):
        return True
    text = str(exc).lower()
    return any(sign in text for sign in _MEMORY_SIGNS)


def _proc_state(pid: int | None) -> str | None:
    """The process's state letter from /proc (R running, S sleeping, T stopped, Z zombie); None if unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (OSError, ProcessLookupError):    # already gone: a child's result (or death) shows in `result`
        pass


def _wait_stopped(pids: list[int | None]) -> None:
    """Until Linux shows every process in `pids` stopped (or gone), at most 0.2 s."""
    for _ in range(100):
        if all(_proc_state(p) in ("T", "t", "Z", "X", None) for p in pids):
            return
        time.sleep(0.002)


def _descendants(pid: int | None) -> list[int]:
    """The children, grandchildren, ... of `pid` (Linux: /proc/PID/task/TID/children; none elsewhere)."""
    out: list[int] = []
    todo = [pid] if pid is not None else []
    while todo:
        p = todo.pop()
        kids = []
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids.extend(int(k) for k in f.read().split())
        except (OSError, ValueError):
            pass
        out.extend(kids)
        todo.extend(kids)
    return out


def _context() -> mp.context.BaseContext:
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def shared_doubles(n: int):
    """`n` floats in shared memory that a parent writes and the children it starts later read (no lock: the
    writer makes its own protocol, `timeshare.ShareClock`)."""
    return _context().RawArray("d", n)


def forking() -> bool:
    """Whether children are forked (they then share the parent's loaded modules and open streams)."""
    return _context().get_start_method() == "fork"


def _main(fn: Callable[..., Any], args: tuple, conn, native_log: int | None) -> None:
    parent = os.getppid()
    die_with_parent()
    if os.getppid() != parent:            # the parent died before prctl took effect
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)   # not the command's handler (cli.Terminated): just end
    if native_log is not None:
        _native_stderr_to(native_log)
    conn.send(fn(*args))
    conn.close()


def _native_stderr_to(log: int) -> None:
    """Send what native code writes to file descriptor 2 into the file open as `log`, while Python's `sys.stderr`
    (progress lines, warnings) still reaches the user's stderr. Why: z3 reports its internal failures there (an `ASSERTION
    VIOLATION` in Spacer's generalizer, then exit code 114); they belong in the run's UNKNOWN reason, not in the
    middle of the verdict's output."""
    try:
        sys.stderr.flush()
        python_fd = sys.stderr.fileno()   # not 2 in a child's child (its parent kept the user's stderr) or
    except (AttributeError, OSError, ValueError):   # when stderr is captured in memory (tests)
        python_fd = None
    try:
        if python_fd == 2:
            sys.stderr = os.fdopen(os.dup(2), "w", buffering=1, errors="backslashreplace")
        os.dup2(log, 2)
    except OSError:
        pass                              # then native text reaches the user, as before


NATIVE_LINES = 4          # of the native stderr a dead child left, in the reason


def native_failure(log: Any) -> str:
    """The first lines native code wrote to stderr in a child (`_native_stderr_to`), as one line; "" if none."""
    if log is None:
        return ""
    try:
        log.seek(0)
        text = log.read(4096).decode(errors="replace")
    except (OSError, ValueError):
        return ""
    return "; ".join([ln.strip() for ln in text.splitlines() if ln.strip()][:NATIVE_LINES])


class Child:
    """A child process computing `fn(*args)`; its value comes back through `result()`.

    `daemon` children are killed by multiprocessing when the parent exits normally, but may not start children
    of their own; a child that runs the portfolio or an engine (whose QE runs in children, smt/tactics.py)
    must therefore not be one.
    """

    def __init__(self, name: str, fn: Callable[..., Any], *args: Any, daemon: bool = True,
                 memory_limit: int | None = None):
        """`memory_limit`: the child's address-space limit in MB, if it sets one itself (else it inherits
        this process's), for the reason of a crash."""
        ctx = _context()
        self.memory_limit = memory_limit or memory_limit_mb()
        sys.stdout.flush()    # a forked child flushes its copy of these buffers on exit: empty them first
        sys.stderr.flush()
        recv, send = ctx.Pipe(duplex=False)
        self.name = name
        # an unlinked file the forked child writes its native stderr to and this process reads on its death
        self.native_log = tempfile.TemporaryFile(prefix="looprover-stderr-") if ctx.get_start_method() == "fork" \
            else None
        log = self.native_log.fileno() if self.native_log is not None else None
        self.proc = ctx.Process(target=_main, args=(fn, args, send, log), name=name, daemon=daemon)
        self.proc.start()
        send.close()
        self.conn = recv

    @property
    def pid(self) -> int | None:
        return self.proc.pid

    def result(self) -> tuple[bool, Any]:
        """(True, value) once the child has sent it, else (False, why the child died)."""
        try:
            value = self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(timeout=2)
            why = death_reason(self.proc.exitcode, self.memory_limit)
            native = native_failure(self.native_log)
            return False, f"{why} (native code said: {native})" if native else why
        finally:
            self.conn.close()
            self._forget_log()
        self.proc.join(timeout=2)
        return True, value

    def _forget_log(self) -> None:
        if self.native_log is not None:
            self.native_log.close()
            self.native_log = None

    def pause(self) -> None:
        """Stop the child where it is (SIGSTOP): it keeps its state and memory but uses no CPU. Returns once
        Linux shows it stopped (signals are delivered asynchronously; a scheduler that starts another child
        right after must not briefly run one too many), or after 0.2 s. Its own children (an engine's QE,
        smt/tactics.py) are stopped with it: they would otherwise run on a core that is not theirs."""
        self._signal(signal.SIGSTOP)
        _wait_stopped([self.proc.pid])
        kids = _descendants(self.proc.pid)          # the child itself is stopped: it starts no new ones
        for pid in kids:
            _kill(pid, signal.SIGSTOP)
        _wait_stopped(kids)

    def resume(self) -> None:
        for pid in _descendants(self.proc.pid):
            _kill(pid, signal.SIGCONT)
        self._signal(signal.SIGCONT)

    def _signal(self, sig: int) -> None:
        if self.proc.pid is not None:
            _kill(self.proc.pid, sig)

    def kill(self) -> None:
        try:
            self.proc.kill()
        except (OSError, AttributeError, ValueError):
            pass
        self.conn.close()
        self.proc.join(timeout=2)
        self._forget_log()

    @staticmethod
    def wait(children: Iterable["Child"], timeout: float) -> list["Child"]:
        """The children whose result (or death) is ready within `timeout` seconds."""
        by_conn = {c.conn: c for c in children}
        ready = mp.connection.wait(list(by_conn), timeout=max(timeout, 0.0))
        return [by_conn[r] for r in ready]
