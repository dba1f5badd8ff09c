"""Bodies for C library functions a program calls without defining them: `<string.h>`'s string functions
(`strlen` ... `strstr`; POSIX's `strnlen`),
`abs`/`labs`, `atoi`, `atol` and `strtol`'s family, and `<ctype.h>` (glibc's class tables, which its macros
read, and the functions).

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
    # POSIX: at most n cells read
    "strnlen": ("SIZE strnlen(const char *s, SIZE n) { SIZE i = 0; while (i < n && s[i] != 0) i++; return i; }", ()),
    # the set's cells are read up to its terminator for each cell of s looked at
    "strspn": ("SIZE strspn(const char *s, const char *a) { SIZE i = 0;"
               " for (;; i++) { SIZE k = 0; while (a[k] != 0 && a[k] != s[i]) k++; if (a[k] == 0) return i; } }",
               ()),
    "strcspn": ("SIZE strcspn(const char *s, const char *r) { SIZE i = 0;"
                " for (; s[i] != 0; i++) { SIZE k = 0; while (r[k] != 0 && r[k] != s[i]) k++;"
                " if (r[k] != 0) return i; } return i; }", ()),
    "strpbrk": ("char *strpbrk(const char *s, const char *a) { SIZE i = 0;"
                " for (; s[i] != 0; i++) { SIZE k = 0; while (a[k] != 0 && a[k] != s[i]) k++;"
                " if (a[k] != 0) return (char *)s + i; } return 0; }", ()),
    # a match is read cell by cell and stops at the first mismatch, so no read passes h's terminator
    "strstr": ("char *strstr(const char *h, const char *n) { SIZE i = 0; if (n[0] == 0) return (char *)h;"
               " for (; h[i] != 0; i++) { SIZE k = 0; while (n[k] != 0 && h[i + k] == n[k]) k++;"
               " if (n[k] == 0) return (char *)h + i; } return 0; }", ()),
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


def _strto(name: str, t: str, ut: str, signed: bool) -> str:
    """C11 7.22.1.3-4 (`strtol` and its kin): white space, a sign, a 0x prefix where the base allows one, then
    the longest run of digits of the base; the value, or the type's limit when it does not fit (errno is not
    modelled: reading it stays a call of an undefined function); `*end` after the digits, or at `s` if there
    are none. An invalid base converts nothing and leaves `*end`, as glibc does. Reads stop at the terminator."""
    big = f"(~({ut})0 >> 1)"
    lim = f"(neg ? {big} + 1 : {big})" if signed else f"~({ut})0"
    over = f"(neg ? -({t}){big} - 1 : ({t}){big})" if signed else f"~({ut})0"
    value = f"r == 0 ? 0 : neg ? -({t})(r - 1) - 1 : ({t})r" if signed else "neg ? 0 - r : r"
    hexdigit = "((s[i + 2] >= '0' && s[i + 2] <= '9') || (s[i + 2] >= 'a' && s[i + 2] <= 'f') || " \
               "(s[i + 2] >= 'A' && s[i + 2] <= 'F'))"
    return (f"{t} {name}(const char *s, char **end, int base) {{ SIZE i = 0; int neg = 0; int any = 0;"
            f" int over = 0; {ut} r = 0; {ut} lim;"
            " if (base != 0 && (base < 2 || base > 36)) return 0;"
            " while (s[i] == ' ' || (s[i] >= 9 && s[i] <= 13)) i++;"
            " if (s[i] == '-' || s[i] == '+') { neg = s[i] == '-'; i++; }"
            f" if ((base == 0 || base == 16) && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') && {hexdigit})"
            " { i += 2; base = 16; } else if (base == 0) base = s[i] == '0' ? 8 : 10;"
            f" lim = {lim};"
            " for (;;) { int c = s[i]; int d;"
            " if (c >= '0' && c <= '9') d = c - '0'; else if (c >= 'a' && c <= 'z') d = c - 'a' + 10;"
            " else if (c >= 'A' && c <= 'Z') d = c - 'A' + 10; else break;"
            " if (d >= base) break; any = 1;"
            " if (!over) { if (r > (lim - d) / base) over = 1; else r = r * base + d; } i++; }"
            " if (end) *end = (char *)(any ? s + i : s);"
            f" if (over) return {over}; return {value}; }}")


_MODELS.update({
    "strtol": (_strto("strtol", "long", "unsigned long", True), ()),
    "strtoul": (_strto("strtoul", "unsigned long", "unsigned long", False), ()),
    "strtoll": (_strto("strtoll", "long long", "unsigned long long", True), ()),
    "strtoull": (_strto("strtoull", "unsigned long long", "unsigned long long", False), ()),
    # glibc's atol is strtol(s, 0, 10): C leaves a value out of range undefined, glibc gives the limit
    "atol": ("long atol(const char *s) { return strtol(s, 0, 10); }", ("strtol",)),
    "atoll": ("long long atoll(const char *s) { return strtoll(s, 0, 10); }", ("strtoll",)),
})


# <ctype.h>: glibc's macros read `(*__ctype_b_loc())[c] & _ISxxx`, a table of class bits for c in [-128, 256) (the C
# locale: ASCII classes, nothing above 127 nor below 0), whose bits are the header's `_ISbit` on little-endian
# targets (both data models here); `tolower`/`toupper` read tables of values (glibc maps a negative char c, -128..-2,
# to c + 256)
_CLASSES = {  # name -> (glibc bit number, members in the C locale)
    "isupper": (0, lambda c: 65 <= c <= 90), "islower": (1, lambda c: 97 <= c <= 122),
    "isalpha": (2, lambda c: 65 <= c <= 90 or 97 <= c <= 122), "isdigit": (3, lambda c: 48 <= c <= 57),
    "isxdigit": (4, lambda c: 48 <= c <= 57 or 65 <= c <= 70 or 97 <= c <= 102),
    "isspace": (5, lambda c: c == 32 or 9 <= c <= 13), "isprint": (6, lambda c: 32 <= c <= 126),
    "isgraph": (7, lambda c: 33 <= c <= 126), "isblank": (8, lambda c: c in (9, 32)),
    "iscntrl": (9, lambda c: 0 <= c <= 31 or c == 127),
    "ispunct": (10, lambda c: 33 <= c <= 126 and not (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122)),
    "isalnum": (11, lambda c: 48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122),
}


def _class_bit(bit: int) -> int:
    return (1 << bit) << 8 if bit < 8 else (1 << bit) >> 8


def _table(name: str, ctype: str, value) -> str:
    """A 384-entry table for c in [-128, 256) and the pointer to its entry 0 that a `__ctype_*_loc` returns."""
    cells = ", ".join(str(value(c)) for c in range(-128, 256))
    return (f"static const {ctype} {name}_table[384] = {{{cells}}};\n"
            f"static const {ctype} *{name} = {name}_table + 128;\n")


_GLOBALS = {  # model -> the static objects it reads
    "__ctype_b_loc": _table("__looprover_ctype_b", "unsigned short",
                            lambda c: sum(_class_bit(b) for b, member in _CLASSES.values() if member(c))),
    "__ctype_tolower_loc": _table("__looprover_ctype_tolower", "int",
                                  lambda c: c + 32 if 65 <= c <= 90 else c + 256 if c <= -2 else c),
    "__ctype_toupper_loc": _table("__looprover_ctype_toupper", "int",
                                  lambda c: c - 32 if 97 <= c <= 122 else c + 256 if c <= -2 else c),
}
_MODELS.update({
    "__ctype_b_loc": ("const unsigned short **__ctype_b_loc(void) { return &__looprover_ctype_b; }", ()),
    "__ctype_tolower_loc": ("const int **__ctype_tolower_loc(void) { return &__looprover_ctype_tolower; }", ()),
    "__ctype_toupper_loc": ("const int **__ctype_toupper_loc(void) { return &__looprover_ctype_toupper; }", ()),
    # as glibc's functions: the table where it has an entry (C11 7.4p1 allows only EOF and unsigned char values)
    "tolower": ("int tolower(int c) { return c >= -128 && c < 256 ? (*__ctype_tolower_loc())[c] : c; }",
                ("__ctype_tolower_loc",)),
    "toupper": ("int toupper(int c) { return c >= -128 && c < 256 ? (*__ctype_toupper_loc())[c] : c; }",
                ("__ctype_toupper_loc",)),
})
# the functions themselves, for a call the macros do not cover (`(isdigit)(c)`, `#undef isdigit`): C fixes only
# "nonzero"; glibc's function returns the table's bit, gcc's built-in (which it uses for isdigit) 1, so either
# (an uninitialised local is any value without being an input)
_MODELS.update({name: (f"int {name}(int c) {{ int h; int v = (*__ctype_b_loc())[c] & {_class_bit(bit)};"
                       f" return v && h ? 1 : v; }}", ("__ctype_b_loc",))
                for name, (bit, _) in _CLASSES.items()})
NAMES = frozenset(n for n in _MODELS if not n.startswith("__looprover"))
FILE_NAME = "looprover-libc.c"   # the models' file in source locations
_SIZE = {"ILP32": "unsigned int", "LP64": "unsigned long"}
_CALL = re.compile(r"\b(" + "|".join(sorted(NAMES)) + r")\s*\)?\s*\(")      # `f(` and `(f)(`


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
    decls = "".join(_GLOBALS.get(n, "") for n in names)
    decls += "".join(_MODELS[n][0].split("{")[0].strip() + ";\n" for n in names)
    bodies = "".join(_MODELS[n][0] + "\n" for n in names)
    return (protos + decls + bodies).replace("SIZE", size)
