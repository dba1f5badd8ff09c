"""The parts of libclang the Python bindings (18.1.1) do not expose, bound with ctypes.

Why: operator kinds, constant evaluation, presumed (line-marker aware) locations and variable initialisers are
exported by the bundled native library but not wrapped by `clang.cindex`. Reading them from tokens instead would
re-implement C's grammar badly. `children` is the one wrapped function we call directly: cindex's version costs
twice as much, and the lowering lists the children of every AST node several times.
"""
from __future__ import annotations

import ctypes
from functools import lru_cache

import clang.cindex as ci

_lib = None

# CXUnaryOperatorKind (clang-c/Index.h, libclang 17+)
UO_POST_INC, UO_POST_DEC, UO_PRE_INC, UO_PRE_DEC = 1, 2, 3, 4
UO_ADDR_OF, UO_DEREF, UO_PLUS, UO_MINUS, UO_NOT, UO_LNOT = 5, 6, 7, 8, 9, 10
UO_REAL, UO_IMAG, UO_EXTENSION = 11, 12, 13

_CXEval_Int, _CXEval_Float = 1, 2


def lib():
    """The native library with the extra prototypes declared (once)."""
    global _lib
    if _lib is not None:
        return _lib
    lb = ci.conf.lib
    lb.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
    lb.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
    lb.clang_getBinaryOperatorKindSpelling.argtypes = [ctypes.c_int]
    lb.clang_getBinaryOperatorKindSpelling.restype = ci._CXString
    lb.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
    lb.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
    lb.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
    lb.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lb.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lb.clang_EvalResult_getKind.restype = ctypes.c_int
    lb.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
    lb.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
    lb.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
    lb.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
    lb.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lb.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lb.clang_EvalResult_getAsDouble.argtypes = [ctypes.c_void_p]
    lb.clang_EvalResult_getAsDouble.restype = ctypes.c_double
    lb.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    lb.clang_EvalResult_dispose.restype = None
    lb.clang_getPresumedLocation.argtypes = [ci.SourceLocation, ctypes.POINTER(ci._CXString),
                                             ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
    lb.clang_getPresumedLocation.restype = None
    lb.clang_Cursor_getVarDeclInitializer.argtypes = [ci.Cursor]
    lb.clang_Cursor_getVarDeclInitializer.restype = ci.Cursor
    lb.clang_Cursor_isNull.argtypes = [ci.Cursor]
    lb.clang_Cursor_isNull.restype = ctypes.c_int
    _lib = lb
    return lb


@lru_cache(maxsize=None)
def _binary_spelling(kind: int) -> str:
    return ci._CXString.from_result(lib().clang_getBinaryOperatorKindSpelling(kind))


def binary_op(c: ci.Cursor) -> str:
    """'+', '+=', '&&', ',' ... for BINARY_OPERATOR / COMPOUND_ASSIGNMENT_OPERATOR cursors."""
    return _binary_spelling(lib().clang_getCursorBinaryOperatorKind(c))


def unary_op(c: ci.Cursor) -> int:
    """One of the UO_* constants (pre/post increment are distinct kinds, unlike their spelling)."""
    return lib().clang_getCursorUnaryOperatorKind(c)


def _evaluate(c: ci.Cursor, kind: int, read):
    """Clang's constant folding of `c`, read by `read(lib, result)` when it is of `kind`; else None."""
    lb = lib()
    res = lb.clang_Cursor_Evaluate(c)
    if not res:
        return None
    try:
        return read(lb, res) if lb.clang_EvalResult_getKind(res) == kind else None
    finally:
        lb.clang_EvalResult_dispose(res)


def evaluate_int(c: ci.Cursor) -> int | None:
    """Clang's constant folding of an integer expression (case labels, sizeof, character literals)."""
    return _evaluate(c, _CXEval_Int, lambda lb, res: int(lb.clang_EvalResult_getAsUnsigned(res))
                     if lb.clang_EvalResult_isUnsignedInt(res) else int(lb.clang_EvalResult_getAsLongLong(res)))


def evaluate_float(c: ci.Cursor) -> float | None:
    """Clang's constant folding of a floating-point expression, as a double (None when it does not fold)."""
    return _evaluate(c, _CXEval_Float, lambda lb, res: float(lb.clang_EvalResult_getAsDouble(res)))


def presumed_location(loc: ci.SourceLocation) -> tuple[str, int, int]:
    """File, line and column as `#line` markers present them (the original .c of a preprocessed file)."""
    fname = ci._CXString()
    line, col = ctypes.c_uint(), ctypes.c_uint()
    lib().clang_getPresumedLocation(loc, ctypes.byref(fname), ctypes.byref(line), ctypes.byref(col))
    return ci._CXString.from_result(fname), line.value, col.value


def _append_child(child: ci.Cursor, _parent: ci.Cursor, sink: tuple) -> int:
    out, tu = sink
    child._tu = tu  # what cindex's get_children does (children need the TU)
    out.append(child)
    return 1  # CXChildVisit_Continue


_APPEND_CHILD = ci.callbacks["cursor_visit"](_append_child)


def children(c: ci.Cursor) -> list[ci.Cursor]:
    """`list(c.get_children())`, twice as fast: cindex's visitor asserts that each child is not the null
    cursor (two more native calls per child) and wraps a new callback per call. The lowering enumerates the
    children of every AST node several times, so this is a large part of the load time of big programs."""
    out: list[ci.Cursor] = []
    lib().clang_visitChildren(c, _APPEND_CHILD, (out, c._tu))
    return out


def var_initializer(c: ci.Cursor) -> ci.Cursor | None:
    """The initialiser expression of a VAR_DECL (children also hold array-size expressions, so they cannot
    tell it apart)."""
    init = lib().clang_Cursor_getVarDeclInitializer(c)
    if init is None or lib().clang_Cursor_isNull(init):
        return None
    init._tu = c._tu  # what cindex's own cursor-returning wrappers do (children need the TU)
    return init
