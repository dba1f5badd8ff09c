"""Bodies for C library functions a program calls without defining them: `<string.h>`'s string functions,
`abs`/`labs`, and `atoi`.

Why bodies in C rather than built-ins: each is then lowered like the program's own code, so its array accesses
are checked (valid-memsafety: `strcpy` into a buffer too small is the overflow at the call), its loops are loops
the engines summarize or accelerate, and a counterexample walks through it. Each body does what C11 7.24 says
the function does for the inputs it defines and nothing more: the reads and writes go exactly as far as the
standard lets the function go (`strlen` reads up to the terminator, `strncpy` writes exactly n cells). `atoi`
reads white space, a sign and digits and returns their value, or any value (`__VERIFIER_nondet_int`) where C
leaves it undefined (out of int's range).

Only the functions a program calls and does not define are linked (`needed`), so a program (Verisec's stubs)
that brings its own `strcpy` keeps it. Functions taking `void *` (`memcpy`, `memset`) are not here but loops the
front-end builds over the argument's element type (`byte_functions.py`): the model's pointers count elements, not
bytes (`memory.py`).
"""
from __future__ import annotations

import re

# name -> (C definition, the other models it calls); `SIZE` is size_t of the data model
_MODELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "strlen": ("SIZE strlen(const char *s) { SIZE n = 0; while (s[n] != 0) n++; return n; }", ()),
    "strcpy": ("char *strcpy(char *d, const char *s) { SIZE i = 0; while ((d[i] = s[i]) != 0) i++; return d; }", ()),
    "strncpy": ("char *strncpy(char *d, const char *s, SIZE n) { SIZE i = 0;"
                " for (; i < n && s[i] != 0; i++) d[i] = s[i]; for (; i < n; i++) d[i] = 0; return d; }", ()),
    # their own length loop: a program's own strlen (Verisec's stubs) is not what the library's strcat calls
    "strcat": ("char *strcat(char *d, const char *s) { SIZE n = 0; SIZE i = 0; while (d[n] != 0) n++;"
               " while ((d[n + i] = s[i]) != 0) i++; return d; }", ()),
    "strncat": ("char *strncat(char *d, const char *s, SIZE k) { SIZE n = 0; SIZE i = 0; while (d[n] != 0) n++;"
                " for (; i < k && s[i] != 0; i++) d[n + i] = s[i]; d[n + i] = 0; return d; }", ()),
    # C11 7.24.4: only the sign of the result is fixed (glibc returns the difference, gcc folds to -1/0/1)
    "strcmp": ("int strcmp(const char *a, const char *b) { SIZE i = 0; while (a[i] != 0 && a[i] == b[i]) i++;"
               " return __looprover_sign((int)(unsigned char)a[i] - (int)(unsigned char)b[i]); }",
               ("__looprover_sign",)),
    "strncmp": ("int strncmp(const char *a, const char *b, SIZE n) { SIZE i = 0; if (n == 0) return 0;"
                " while (i + 1 < n && a[i] != 0 && a[i] == b[i]) i++;"
                " return __looprover_sign((int)(unsigned char)a[i] - (int)(unsigned char)b[i]); }",
                ("__looprover_sign",)),
    # any value of the sign of d (an uninitialised local is any value without being an input); with h = 0, as a
    # concrete run without recorded values takes it, -1 or 1 (what gcc folds a constant strcmp to)
    "__looprover_sign": ("int __looprover_sign(int d) { int h; if (d == 0) return 0; __VERIFIER_assume(h >= 0);"
                         " if (d < 0) return -1 - h; __VERIFIER_assume(h < 2147483647); return 1 + h; }", ()),
    "strchr": ("char *strchr(const char *s, int c) { SIZE i = 0;"
               " while (s[i] != (char)c) { if (s[i] == 0) return 0; i++; } return (char *)s + i; }", ()),
    "strrchr": ("char *strrchr(const char *s, int c) { SIZE i = 0; SIZE k = 0; int found = 0;"
                " for (;; i++) { if (s[i] == (char)c) { k = i; found = 1; } if (s[i] == 0) break; }"
                " return found ? (char *)s + k : 0; }", ()),
    "abs": ("int abs(int x) { return x < 0 ? -x : x; }", ()),
    "labs": ("long labs(long x) { return x < 0 ? -x : x; }", ()),
    # C11 7.22.1: white space, a sign, the digits; a value out of int's range is undefined (any value here)
    "atoi": ("int atoi(const char *s) { SIZE i = 0; int neg = 0; long long r = 0;"
             " while (s[i] == ' ' || (s[i] >= 9 && s[i] <= 13)) i++;"
             " if (s[i] == '-' || s[i] == '+') { neg = s[i] == '-'; i++; }"
             " while (s[i] >= '0' && s[i] <= '9') { if (r <= 2147483648LL) r = r * 10 + (s[i] - '0'); i++; }"
             " if (neg) r = -r;"
             " if (r < -2147483647LL - 1 || r > 2147483647LL) return __VERIFIER_nondet_int();"
             " return (int)r; }", ()),
}
NAMES = frozenset(n for n in _MODELS if not n.startswith("__"))
FILE_NAME = "looprover-libc.c"   # the models' file in source locations
_SIZE = {"ILP32": "unsigned int", "LP64": "unsigned long"}
_CALL = re.compile(r"\b(" + "|".join(sorted(NAMES)) + r")\s*\(")


def called(text: str) -> set[str]:
    """The model names `text` (a program's source file) may call: a cheap over-approximation (a call that a
    macro of a local header makes is missed and stays a call of an undefined function)."""
    return set(_CALL.findall(text))


def needed(names: set[str], defined: set[str]) -> list[str]:
    """The models to link for calls of `names` in a program that defines `defined`, with what they call."""
    out: list[str] = []
    todo = sorted(n for n in names if n in _MODELS and n not in defined)
    while todo:
        n = todo.pop()
        if n in out:
            continue
        out.append(n)
        todo += [d for d in _MODELS[n][1] if d not in defined and d not in out]
    return sorted(out)


def source(names: list[str], data_model: str) -> str:
    """The C text of the models `names` (after `needed`), for `data_model`."""
    size = _SIZE[data_model]
    protos = "extern int __VERIFIER_nondet_int(void);\nextern void __VERIFIER_assume(int);\n"
    decls = "".join(_MODELS[n][0].split("{")[0].strip() + ";\n" for n in names)
    bodies = "".join(_MODELS[n][0] + "\n" for n in names)
    return (protos + decls + bodies).replace("SIZE", size)
