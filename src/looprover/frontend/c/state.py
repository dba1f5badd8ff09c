"""The state the whole lowering shares, and the primitives that append to the CFA.

Why: every part of the lowering (statements, expressions, calls, storage) emits statements at "the current
location", opens new locations, names fresh variables and reports errors with a source location; keeping that
state and those primitives in one base class gives the mixins composed into `lower.Lowerer` a single, explicit
common ground.

The CFA under construction: `cur` is the current location (None after a jump: code there is unreachable until a
label or join starts a new location) and `pending` holds the statements of the edge that leaves it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from looprover.errors import UnsupportedError
from looprover.frontend.c.ctype import CPtr, CType, TypeTable
from looprover.frontend.c.cursors import ARRAY_KINDS, K, canonical_type, children, denotes_param
from looprover.frontend.c.memory import Obj
from looprover.frontend.c.object_ids import Instances
from looprover.frontend.c.parse import Parsed
from looprover.program.cfa import Assume, ProgramBuilder, SrcLoc
from looprover.program.expr import FALSE, TRUE, Expr, Var, free_vars, not_


# expressions whose value C never gives an array type (their operands decay first)
_NEVER_ARRAYS = frozenset({K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR, K.CONDITIONAL_OPERATOR,
                           K.CSTYLE_CAST_EXPR, K.CALL_EXPR})


@dataclass
class Frame:
    """One inlined activation of a function."""
    name: str
    prefix: str
    ret: Obj | None
    ret_loc: int
    env: dict = field(default_factory=dict)          # canonical decl cursor -> Obj
    labels: dict[str, int] = field(default_factory=dict)
    bound: dict = field(default_factory=dict)        # read-only parameters bound to their argument's value
    top_decls: frozenset = frozenset()               # canonical VAR_DECLs at the top level of the body
    top_labels: frozenset = frozenset()              # labels in no block but the body (`top_labels`)
    born: list = field(default_factory=list)         # memsafety: liveness flags of its address-taken locals
    scopes: list = field(default_factory=list)       # open blocks: (their own declarations, liveness flags)
    depth_of: dict = field(default_factory=dict)     # break/continue target -> len(scopes) at its loop
    breaks: list[int] = field(default_factory=list)
    conts: list[int] = field(default_factory=list)
    # valid-memtrack (`memtrack.py`): the jump targets (labels, cases) lowered so far; per declaration lowered,
    # how many there were then (a local declared before a jump target may be skipped by a jump to it); the
    # heap objects allocated by the statement being lowered (their pointer may not be stored yet)
    jump_targets: int = 0
    declared: dict = field(default_factory=dict)
    allocating: set = field(default_factory=set)


class LoweringState:
    """The lowering's state (see the attributes) and its primitives: source locations and errors, fresh
    variables, clang type translation, and building the CFA edge by edge."""

    def __init__(self, parsed: Parsed, data_model: str, memsafety: bool = False, keep_values: bool = False,
                 nondet_undefined: bool = False, reach_checks: bool = False, memcleanup: bool = False,
                 allocation_fails: bool = True):
        self.parsed = parsed
        self.memsafety = memsafety       # valid-memsafety: accesses are asserted valid, not assumed (memory.py)
        # calls of reach_error are asserted unreachable (not under the memory properties: not part of them)
        self.reach_checks = reach_checks or not (memsafety or memcleanup)
        self.assert_checks = memsafety and reach_checks     # `looprover check`: C's assert is a check too
        self.memtrack = memsafety and not reach_checks      # verify's valid-memsafety: no heap object lost
        self.memcleanup = memcleanup     # valid-memcleanup: every heap object freed where a run ends
        self.memtrack_points: list = []  # where no heap object may be lost (`memtrack.py`)
        self.argv_array: Obj | None = None  # main's argv array (`main_args.py`): it outlives main
        self.alive: dict[int, Var] = {}  # memsafety: object id -> whether the (local) object is live; heap objects
        self.heap_flags: dict[int, Var] = {}   # heap object id -> whether it is live (`heap.py`), in any mode
        self.allocation_fails = allocation_fails   # malloc and calloc may return NULL (`heap.py`)
        self.allocations: list = []      # `heap.Allocation`s (`heap.allocations_in_loops`)
        self.allocation_calls: dict = {}       # allocation call (`call_key`) -> (function, site, element)
        self.pools: dict = {}                  # allocation call -> its pool's objects (`heap.py`)
        self.pool_calls: dict = {}             # the calls to make pools for (`lower.lower`)
        self.pool_ids: dict = {}               # per pool allocation: its id temporary -> its pool's first object id
        self.indeterminate_ids: set = set()    # the pools' fresh contents' object ids (`heap._allocate_in_pool`)
        self.void_sites: list = []             # the uses of void * pointers (`void_pointers.py`)
        self.byte_allocations: dict = {}       # object id -> the call of an allocation used as void * (as chars)
        self.void_allocation_types: dict = {}  # allocation call -> clang type of its elements (`lower.lower`)
        self.byte_call_types: dict = {}        # byte function argument -> clang type of its elements (same)
        self.pool_next: Var | None = None      # the id the next pool object gets
        self.id_step = 0                 # objects with an id after the pre-pass (`StorageMixin._new_instance`)
        self.random_calls: list[tuple[str, int, SrcLoc | None]] = []   # srand/rand: (name, location, source)
        # (CFA location, number of objects, source) each time the lowering enumerated the objects (`known_objects`)
        self.object_views: list[tuple[int, int, SrcLoc | None]] = []
        self.literals: dict = {}         # string literal cursor -> its (read-only) object
        self.literal_vars: set = set()   # the IR variables of those objects
        self.static_init = False         # lowering the initialisers of static storage (before main)
        self.keep_values = keep_values      # keep unused values computed by operations (`ExpressionMixin.discard`)
        self.nondet_undefined = nondet_undefined  # havoc at calls of undefined functions (`CallMixin.undefined_call`)
        self.assumptions: list[str] = []    # what the model assumes beyond C (`Program.assumptions`)
        self.refusals: list = []            # `check`: calls whose body is refused (`Program.refusals`)
        self.refused_code: dict = {}        # and the code each refused function runs (`CallMixin.code_of`)
        self.tu = parsed.tu
        self.types = TypeTable(data_model)
        self.IDX = self.types.index_type
        self.OBJ = self.types.obj_type
        self.bld = ProgramBuilder(Path(parsed.path).stem, data_model, source_file=parsed.path)
        self.exit = self.bld.new_loc(name="exit")
        self.bld.exit = self.exit
        self.cur: int | None = None
        self.pending: list = []
        self.loc: SrcLoc | None = None
        self.pinned: SrcLoc | None = None   # while set, every location is this one (see calls._inline)
        self.frames: list[Frame] = []
        self.call_stack: list = []
        self.call_sites: list = []       # the source positions of the calls being inlined (`call_key`)
        self.globals: dict = {}          # canonical decl cursor -> Obj (globals and static locals)
        self.global_defs: dict = {}      # canonical -> the declaration that carries the initialiser
        self.init_queue: list = []       # (Obj, initialiser cursor or None)
        self.shared: dict = {}           # canonical decl -> Obj for address-taken locals/params
        self.addr_taken: dict = {}       # canonical decl cursors (ordered: object ids are deterministic)
        self.member_addr_taken: dict = {}   # (decl, member path) whose address is taken (`memory.Obj.members`)
        # struct type -> the member paths of it whose address is taken through a pointer (`memory.py`)
        self.pointee_members: dict = {}
        self.objects: list[Obj] = []     # address-taken objects, id = index + 1
        # pointee type -> (how many of `objects` were looked at, the indices of those it may point into)
        self.pointee_cache: dict = {}
        self.function_ids: dict = {}     # canonical function decl -> the id its pointers hold (`memory.py`)
        self.id_vars: set = set()        # variables that hold object ids, or copy one (`object_ids.py`)
        self.main_top_decls: frozenset = frozenset()  # top-level locals of main: their declarations run once
        self.switch_scopes: list[int] = [0]  # per switch being lowered: open blocks of its frame after its body's
        self.poisoned: dict = {}         # canonical decl -> why it cannot be used (main's envp, an unused argv)
        self.unmodelled: dict = {}       # object id -> f(offset): the condition that the element accessed is modelled
        self.case_locs: dict = {}        # case/default statement cursor -> its location (set by the switch)
        self._counters: dict[str, int] = {}  # fresh: the last #k suffix used per base name
        self.effectful_memo: dict = {}   # effects.effectful, by (cursor hash, offset, kind)
        self.written_params_memo: dict = {}  # calls: canonical function -> parameters its body writes
        self.call_writes_memo: dict = {}     # effects: canonical function -> variables a call may write

    # ======================================================================================= utilities
    def shared_vars(self) -> set:
        """The IR variables of every global, static and address-taken object: what code outside the current
        function can reach."""
        vs = set()
        for o in list(self.globals.values()) + self.objects:
            vs.update(o.vars.values())
        return vs

    def call_key(self, call: ci.Cursor) -> tuple:
        """Which allocation (or byte function) call this is, across two lowerings of one translation unit
        (`lower.lower`): its place in the source and the places of the calls it is inlined through, so that a
        wrapper called for two types or in two loops has an allocation (a pool, a learned type) per call."""
        return source_position(call), tuple(self.call_sites)

    def pool_seeds(self) -> dict:
        """The id sets for `object_ids.values`: of the pools' id temporaries (`heap.py`), and of the variable
        ids of locals whose block may be entered again (`object_ids.Instances`; a pool's slots get theirs from
        allocations)."""
        seeds = {t: frozenset((first, 0)) for t, first in self.pool_ids.items()}
        pooled = self.pooled_ids()
        seeds.update({o.id_var: frozenset((Instances(o.id),)) for o in self.objects
                      if o.id_var is not None and o.id not in pooled})
        return seeds

    def pooled_ids(self) -> set[int]:
        """The static ids of the pools' slot objects and their members' (`heap.py`)."""
        return {x.id for slots in self.pools.values() for o in slots for x in (o, *o.members.values())}

    def known_objects(self) -> list[Obj]:
        """The objects, as a step being lowered sees them (a dereference's candidates, what a free may end): an
        object allocated later is not among them, so where this happens is recorded (`heap.used_before_allocated`
        checks that no such step can run after that allocation)."""
        self.object_views.append((self.here(), len(self.objects), self.loc))
        return self.objects

    def where(self, c: ci.Cursor | None) -> SrcLoc | None:
        if c is None:
            return self.loc
        if self.pinned is not None:
            return self.pinned
        try:
            f, line, col = self.parsed.where(c.location)
        except Exception:  # noqa: BLE001 - a location is only decoration
            return self.loc
        if not line:
            return self.loc
        return SrcLoc(f, line, col)

    def unsupported(self, what: str, c: ci.Cursor | None = None) -> UnsupportedError:
        return UnsupportedError(what, self.where(c) if c is not None else self.loc)

    def fresh(self, base: str) -> str:
        if base not in self.bld.variables:
            return base
        k = self._counters.get(base, 0)
        while True:
            k += 1
            name = f"{base}#{k}"
            if name not in self.bld.variables:
                self._counters[base] = k
                return name

    def new_var(self, base: str, t, kind: str, c_name: str | None = None) -> Var:
        return self.bld.declare(self.fresh(base), t, kind, c_name=c_name or base, src=self.loc)

    def temp(self, t) -> Var:
        return self.new_var("tmp", t, "temp")

    def type_of(self, t: ci.Type, c: ci.Cursor, canonical: bool = False) -> CType:
        """Translate a clang type (`canonical`: t is already canonical); the location (slow to compute) is only
        looked up for an error."""
        try:
            return self.types.of_canonical(t) if canonical else self.types.of(t)
        except UnsupportedError as exc:
            if exc.where is None:
                raise UnsupportedError(exc.construct, self.where(c)) from None
            raise

    def ctype(self, c: ci.Cursor) -> CType:
        """The C type of an expression (a parameter declared as an array is the pointer C makes it). libclang
        gives such a parameter's adjusted type (clang's DecayedType) as the declared array, also to what is
        computed from it (`nonce + 16`); an operator, a cast or a call never has an array value in C."""
        t = canonical_type(c.type)
        if t.kind in ARRAY_KINDS and (c.kind in _NEVER_ARRAYS or denotes_param(c)):
            return CPtr(self.type_of(t.element_type, c))
        return self.type_of(t, c, canonical=True)

    def function_body(self, fdef: ci.Cursor) -> ci.Cursor:
        """The compound statement of a function definition."""
        for k in children(fdef):
            if k.kind == K.COMPOUND_STMT:
                return k
        raise UnsupportedError(f"function '{fdef.spelling}' without a body", self.where(fdef))

    @staticmethod
    def top_decls(body: ci.Cursor) -> frozenset:
        """The canonical variable declarations at the top level of a function body."""
        return frozenset(v.canonical for d in children(body) if d.kind == K.DECL_STMT
                         for v in children(d) if v.kind == K.VAR_DECL)

    @staticmethod
    def top_labels(body: ci.Cursor) -> frozenset:
        """The labels of a function body that lie in no block inside it: a goto to one leaves every block it
        is in (those that `goto` from a nested block may jump to under valid-memsafety)."""
        out = set()
        stack = list(children(body))
        while stack:
            c = stack.pop()
            if c.kind == K.COMPOUND_STMT or c.kind.is_expression() or c.kind == K.DECL_STMT:
                continue
            if c.kind == K.LABEL_STMT:
                out.add(c.spelling)
            stack.extend(children(c))
        return frozenset(out)

    # ---------------------------------------------------------------------------------- CFA building
    def here(self) -> int:
        if self.cur is None:  # code after return/break/goto: unreachable unless a label follows
            self.cur = self.bld.new_loc()
            self.pending = []
        return self.cur

    def emit(self, *stmts) -> None:
        self.here()
        self.pending.extend(stmts)

    def jump(self, loc: int) -> None:
        if self.cur is None:
            return
        self.bld.add_edge(self.cur, loc, *self.pending)
        self.pending = []
        self.cur = None

    def start(self, loc: int) -> None:
        self.jump(loc)
        self.cur = loc
        self.pending = []

    def flush(self) -> int:
        """Put pending statements on their own edge, so that branches need not repeat them."""
        self.here()
        if self.pending:
            nxt = self.bld.new_loc()
            self.start(nxt)
        return self.cur

    def branch(self, cond: Expr, t: int, f: int) -> None:
        if cond == TRUE or t == f:
            self.jump(t)
            return
        if cond == FALSE:
            self.jump(f)
            return
        src = self.flush()
        self.bld.add_edge(src, t, Assume(cond, self.loc))
        self.bld.add_edge(src, f, Assume(not_(cond), self.loc))
        self.cur = None

    def assume_once(self, cond: Expr, src) -> None:
        """Emit Assume(cond) unless the current edge already assumes it and nothing since wrote its
        variables (repeated dereferences of one pointer in a statement)."""
        if any(isinstance(st, Assume) and st.cond == cond for st in self.since_written(free_vars(cond))):
            return
        self.emit(Assume(cond, src))

    def since_written(self, fv) -> list:
        """The statements of the current edge after the last one that writes a variable in `fv`, latest first."""
        if self.cur is None:
            return []
        out = []
        for st in reversed(self.pending):
            if st.writes() & fv:
                break
            out.append(st)
        return out

    def block(self) -> None:
        """The path ends here without terminating (blocked)."""
        self.jump(self.bld.new_loc())

    def new_loc(self, name: str | None = None) -> int:
        return self.bld.new_loc(self.loc, name)


def source_position(c: ci.Cursor) -> tuple:
    """(file, offset) of where cursor `c` starts."""
    start = c.extent.start
    return (start.file.name if start.file else None, start.offset)
