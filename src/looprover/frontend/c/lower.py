"""Lowering of clang's typed AST to the IR: statements to CFA edges, expressions to typed IR expressions.

Conventions (documented because engines and witnesses depend on them):
  * Every C conversion is explicit: clang's implicit casts (UNEXPOSED_EXPR whose type is the converted type)
    and C-style casts become `Cast`s; compound assignments and ++/-- apply the promotions and usual arithmetic
    conversions themselves (clang does not expose their computation type).
  * `_Bool` is the IR's BOOL type (values true/false, so havocs need no range assumption); int -> _Bool is
    `!= 0`, _Bool -> int is 0/1. Arithmetic on _Bool never happens in C (it is promoted to int first).
  * Evaluation order: left to right wherever C leaves it unspecified (operands, arguments, initialisers,
    the two sides of an assignment). A value already computed is copied to a temporary when a later operand
    may write one of the variables it reads (calls, assignments, ++).
  * `&&`, `||` and `?:` stay pure IR expressions when the conditionally evaluated part has no side effects;
    otherwise (assignments, calls, pointer dereferences, which may block) they become control flow.
  * Functions are inlined at every call (no recursion); `return` jumps to the end of the inlined body.
  * Undefined behaviour that we block with `Assume`: dereferencing a pointer that does not point to a
    suitable object (NULL, dangling, wrong type), reaching `__builtin_unreachable()`. Under valid-memsafety
    invalid accesses are asserted against instead (`valid-deref`, see `memory.py`).

Layout: `Lowerer` is composed of one mixin per responsibility, all over `state.LoweringState` (the shared
state and the CFA-building primitives); the mixins call each other only through `self`, so no module imports
another's class:
    storage.py       objects of globals, locals and parameters; the address-taken pre-pass
    initialisers.py  brace lists, strings, zero values, static initialisation
    statements.py    control flow (if/loops/switch/goto/return) and conditions as branches
    effects.py       side-effect analysis and protecting computed values from later writes
    lvalues.py       lvalues, member/subscript/dereference, reads and writes
    expressions.py   rvalues, operators, assignments, conversions
    calls.py         modelled built-ins and inlining
    heap.py          malloc, calloc, alloca and free
    void_pointers.py which objects a void * points into, checked where its offset is read
    byte_functions.py  memset, memcpy and memmove
    output_functions.py  printf, puts, putchar and the like
    input_functions.py  getchar, fgets, rand, time
    main_args.py     main's argc and argv
with `cursors.py` (questions about clang cursors) and `known_functions.py` (names modelled as built-ins).
"""
from __future__ import annotations

import sys

import clang.cindex as ci

from looprover.errors import InputError, UnsupportedError
from looprover.frontend.c.byte_functions import ByteFunctionsMixin
from looprover.frontend.c.calls import CallMixin
from looprover.frontend.c.cursors import K, children
from looprover.frontend.c.effects import SideEffectMixin
from looprover.frontend.c.expressions import ExpressionMixin
from looprover.frontend.c.function_pointers import FunctionPointerMixin
from looprover.frontend.c.heap import (
    POOL_ID_FLOOR, POOL_ID_TOP, HeapMixin, allocations_in_loops, used_before_allocated,
)
from looprover.frontend.c.initialisers import InitialiserMixin
from looprover.frontend.c.input_functions import InputFunctionsMixin, reseeded
from looprover.frontend.c.lvalues import LValueMixin
from looprover.frontend.c.memory import idx_const
from looprover.frontend.c.main_args import MainArgsMixin
from looprover.frontend.c.format_functions import FormatFunctionsMixin
from looprover.frontend.c.output_functions import OutputFunctionsMixin
from looprover.frontend.c.object_ids import narrowed, resolved_ids
from looprover.frontend.c.parse import Parsed
from looprover.frontend.c.simplify import simplify
from looprover.frontend.c.state import Frame
from looprover.frontend.c.statements import StatementMixin
from looprover.frontend.c.memtrack import MemtrackMixin
from looprover.frontend.c.storage import StorageMixin
from looprover.frontend.c.void_pointers import VoidPointerMixin
from looprover.program.cfa import Assign, Program, SrcLoc
from looprover.program.expr import FALSE, IntConst

__all__ = ["lower"]


class Relower(Exception):
    """What a lowering learned that a second lowering needs: the allocation calls (`LoweringState.call_key`) a
    loop of the lowered CFA executes, which get pools (`heap.py`), and the types of allocations used as `void *`
    (`void_pointers.py`); with what makes this lowering unsupported if nothing new was learned."""

    def __init__(self, pools: dict, allocation_types: dict, byte_call_types: dict, looped: SrcLoc | None,
                 void_site: tuple | None):
        super().__init__(pools)
        self.pools = pools      # call -> (function, site, element type): `HeapMixin.make_pools`
        self.allocation_types, self.byte_call_types = allocation_types, byte_call_types
        self.looped = looped
        self.void_site = void_site      # (VoidSite, why) of a use of a void * the check refuses


class Lowerer(StatementMixin, ExpressionMixin, CallMixin, FunctionPointerMixin, InputFunctionsMixin,
              OutputFunctionsMixin, FormatFunctionsMixin, ByteFunctionsMixin, HeapMixin, VoidPointerMixin,
              MemtrackMixin, MainArgsMixin, LValueMixin, SideEffectMixin, InitialiserMixin, StorageMixin):
    """The lowering of one translation unit, composed from one mixin per responsibility over the shared
    `LoweringState`; `run` lowers main (inlining every call) and the static initialisers, then simplifies the
    CFA."""

    # =========================================================================================== driver
    def run(self) -> Program:
        main = self._find_main()
        self.collect_globals()
        self.main_top_decls = self.top_decls(self.function_body(main))
        self.scan_address_taken(main)
        self.make_pools(self.pool_calls)
        entry = self.bld.new_loc()
        self.cur = entry
        main_end = self.bld.new_loc() if self.memtrack or self.memcleanup else self.exit
        fr = Frame("main", "", None, main_end, top_decls=self.main_top_decls,
                   top_labels=self.top_labels(self.function_body(main)))
        self.frames.append(fr)
        self.call_stack.append(main.canonical)
        self.main_params(main, fr)
        self.stmt(self.function_body(main))
        self.jump(main_end)  # falling off the end of main returns 0
        self.frames.pop()
        if self.memtrack or self.memcleanup:
            self.start(main_end)
            self.memtrack_point(main_end=True)
            self.jump(self.exit)
            self.finish_memtrack()
        # Globals and static locals are initialised before main runs; lowering their initialisers may
        # reference further globals, hence the work list.
        self.cur = self.bld.init
        self.static_init = True
        done = 0
        while done < len(self.init_queue):
            obj, init, where = self.init_queue[done]
            done += 1
            self.loc = where
            self.init_static(obj, init)
        self.static_init = False
        for flag in self.alive.values():   # no local object is live before its block is entered
            self.emit(Assign(flag, FALSE, None))
        pooled = self.pooled_ids()
        for obj in self.objects:           # the id before the first birth (`StorageMixin._new_instance`)
            if obj.id_var is not None:     # (a pool's unallocated object: an id no pointer holds, `heap.py`)
                first = POOL_ID_FLOOR - obj.id if obj.id in pooled else -obj.id
                self.emit(Assign(obj.id_var, IntConst(first, self.OBJ), None))
            if obj.id in pooled and obj.parent is None:
                self.emit(Assign(obj.length, idx_const(0, self.IDX), None))
        if self.pool_next is not None:
            self.emit(Assign(self.pool_next, IntConst(POOL_ID_TOP, self.OBJ), None))
        self.jump(entry)
        looped = allocations_in_loops(self.bld.edges, self.allocations) if self.allocations else []
        reached = self.void_objects(self.bld.edges) if self.void_sites else []
        refused = self.check_void_sites(reached)
        if looped or refused:
            allocs, calls = self.learned_types(reached) if refused else ({}, {})
            pools = {key: self.allocation_calls[key] for key, _ in looped}
            learned = not (pools.keys() <= self.pool_calls.keys()
                           and allocs.keys() <= self.void_allocation_types.keys()
                           and calls.keys() <= self.byte_call_types.keys())
            if learned or looped or not self.assert_checks:
                raise Relower(pools, allocs, calls, looped[0][1] if looped else None,
                              refused[0] if refused else None)
            self.void_site_exits(refused)       # `check`: those sites are model exits (`void_pointers.py`)
        if self.void_sites:
            self.drop_void_sites()
        if self.allocations:
            # a dereference lowered before an allocation knows no object of it: it must not run after it
            late = used_before_allocated(self.bld.edges, self.allocations, self.object_views)
            if late is not None:
                alloc, step = late
                raise UnsupportedError(f"an access or free (at {step}) that a goto lets run after an allocation "
                                       f"lowered after it", alloc)
        again = reseeded(self.bld.edges, self.random_calls)
        if again is not None:
            raise UnsupportedError("srand that may run again or after rand (the sequence a seed repeats is not "
                                   "modelled)", again)
        edges, init, exit_, n, srcs, names = simplify(self.bld.edges, self.bld.init, self.exit, self.bld.num_locs,
                                                      dict(self.bld.loc_src), dict(self.bld.loc_names))
        distinct = frozenset(o.id_var for o in self.objects
                             if o.id_var is not None and o.id not in pooled and o.id <= self.id_step)
        edges = narrowed(resolved_ids(edges, distinct) if distinct else edges, self.id_vars, self.pool_seeds())
        p = Program(self.bld.name, dict(self.bld.variables), tuple(edges), init, exit_, n, srcs, names,
                    self.bld.data_model, self.bld.source_file, assumptions=tuple(self.assumptions),
                    refusals=tuple(self.refusals))
        p.check()
        return p

    def _find_main(self) -> ci.Cursor:
        for c in children(self.tu.cursor):
            if c.kind == K.FUNCTION_DECL and c.spelling == "main" and c.is_definition():
                return c
        raise InputError(f"{self.parsed.path}: no definition of main()")


def lower(parsed: Parsed, data_model: str, memsafety: bool = False, keep_values: bool = False,
          nondet_undefined: bool = False, reach_checks: bool = False, memcleanup: bool = False,
          allocation_fails: bool = True) -> Program:
    """The CFA of a parsed translation unit (main with every call inlined); `InputError` or `UnsupportedError`
    (with the location being lowered) for anything else that goes wrong. `memsafety`: instrument the
    accesses for valid-memsafety (see `memory.py`). `keep_values`: see `ExpressionMixin.discard`."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 200_000))  # load_c_program runs us on a thread with a large stack
    pools: dict = {}
    allocation_types: dict = {}
    byte_call_types: dict = {}
    lw = None
    try:
        while True:     # again while a lowering learns something new (`Relower`): finitely many calls
            lw = Lowerer(parsed, data_model, memsafety, keep_values, nondet_undefined, reach_checks, memcleanup,
                         allocation_fails)
            lw.pool_calls, lw.void_allocation_types, lw.byte_call_types = pools, allocation_types, byte_call_types
            try:
                return lw.run()
            except Relower as again:
                if again.pools.keys() <= pools.keys() and again.allocation_types.keys() <= allocation_types.keys() \
                        and again.byte_call_types.keys() <= byte_call_types.keys():      # nothing new learned
                    if again.void_site is not None:
                        site, why = again.void_site
                        raise UnsupportedError(why, site.where) from None
                    raise UnsupportedError("an allocation that a loop executes more than once",
                                           again.looped) from None
                pools = {**pools, **again.pools}
                allocation_types = {**allocation_types, **again.allocation_types}
                byte_call_types = {**byte_call_types, **again.byte_call_types}
    except InputError:
        raise
    except UnsupportedError as exc:
        if exc.where is None and lw is not None and lw.loc is not None:  # raised where no location was at hand
            raise UnsupportedError(exc.construct, lw.loc) from None
        raise
    except RecursionError:
        raise UnsupportedError("expression or statement nesting too deep", lw.loc if lw else None) from None
    except Exception as exc:  # noqa: BLE001 - never a traceback for user input
        raise UnsupportedError(f"internal front-end error ({type(exc).__name__}: {exc})",
                               lw.loc if lw else None) from exc
    finally:
        sys.setrecursionlimit(old)
