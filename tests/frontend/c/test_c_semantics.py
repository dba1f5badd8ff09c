"""C integer semantics of the front-end, cross-checked against gcc-compiled executions (see c_harness)."""
from __future__ import annotations

import pytest

from helpers.c_harness import crosscheck

BOTH = ("LP64", "ILP32")

EDGE_INTS = [0, 1, -1, 7, -7, 127, 128, -128, 255, 256, 32767, -32768, 65535, 2147483647, -2147483648,
             4294967295, 3000000000]


def _vectors(arity: int, values=EDGE_INTS, limit: int = 40) -> list[list[int]]:
    """Deterministic mix of edge values for `arity` inputs."""
    out = []
    n = len(values)
    for i in range(limit):
        out.append([values[(i * (k + 3) + k * 5) % n] for k in range(arity)])
    return out


PROMOTIONS = r"""
extern int __VERIFIER_nondet_int(void);
extern unsigned int __VERIFIER_nondet_uint(void);
extern char __VERIFIER_nondet_char(void);
extern unsigned char __VERIFIER_nondet_uchar(void);
extern short __VERIFIER_nondet_short(void);
extern unsigned short __VERIFIER_nondet_ushort(void);
int r_cc, r_uc, r_sh, r_us, r_mix, r_neg_uc, r_cmp1, r_cmp2, r_cmp3;
unsigned int r_u1, r_u2;
char r_c; unsigned char r_uc2; short r_s;
int main(void) {
  char c = __VERIFIER_nondet_char();
  unsigned char uc = __VERIFIER_nondet_uchar();
  short s = __VERIFIER_nondet_short();
  unsigned short us = __VERIFIER_nondet_ushort();
  int i = __VERIFIER_nondet_int();
  unsigned int u = __VERIFIER_nondet_uint();
  r_cc = c + c;            /* char promoted to int: no wrap at 8 bits */
  r_uc = uc * uc;          /* 255*255 fits int */
  r_sh = s * 2 + 1;
  r_us = us * us;          /* promoted to (signed) int: may overflow (wraps with -fwrapv) */
  r_mix = c + uc + s + us;
  r_neg_uc = -uc;          /* int */
  r_cmp1 = (i < u);        /* usual arithmetic conversions: i becomes unsigned */
  r_cmp2 = (c < uc);       /* both promoted to int: signed comparison */
  r_cmp3 = (-1 < (unsigned char)1);
  r_u1 = u + i;            /* unsigned wrap */
  r_u2 = u * 3u - (unsigned)i;
  r_c = (char)(i + 100);   /* narrowing to signed char wraps */
  r_uc2 = i;               /* assignment conversion modulo 256 */
  r_s = u;
  return 0;
}
"""


def test_integer_promotions_and_conversions(gcc, tmp_path):
    crosscheck(gcc, tmp_path, PROMOTIONS, _vectors(6),
               ["r_cc", "r_uc", "r_sh", "r_us", "r_mix", "r_neg_uc", "r_cmp1", "r_cmp2", "r_cmp3", "r_u1", "r_u2",
                "r_c", "r_uc2", "r_s"], BOTH)


DIVMOD_SHIFT = r"""
extern int __VERIFIER_nondet_int(void);
extern unsigned int __VERIFIER_nondet_uint(void);
int q, r, q2, r2, sl, sr, sr_neg, a1, a2, a3;
unsigned int uq, ur, usl, usr, mixed_div;
int main(void) {
  int a = __VERIFIER_nondet_int();
  int b = __VERIFIER_nondet_int();
  unsigned int u = __VERIFIER_nondet_uint();
  int k = __VERIFIER_nondet_int() & 15;
  if (b == 0) b = 3;
  if (a == -2147483647 - 1 && b == -1) b = 2;
  q = a / b; r = a % b;
  q2 = -a / 7; r2 = a % -5;
  uq = u / 3u; ur = u % 10u;
  mixed_div = u / (unsigned)b;     /* b converted to unsigned */
  sl = (a & 0xffff) << k;
  sr = a >> k;                     /* arithmetic shift for int (gcc) */
  sr_neg = (-a - 1) >> 3;
  usl = u << k; usr = u >> k;
  a1 = a & b; a2 = a | b; a3 = a ^ ~b;
  return 0;
}
"""


def test_division_modulo_and_shifts(gcc, tmp_path):
    crosscheck(gcc, tmp_path, DIVMOD_SHIFT, _vectors(4),
               ["q", "r", "q2", "r2", "uq", "ur", "mixed_div", "sl", "sr", "sr_neg", "usl", "usr", "a1", "a2", "a3"],
               BOTH)


COMPOUND = r"""
extern int __VERIFIER_nondet_int(void);
extern unsigned int __VERIFIER_nondet_uint(void);
unsigned char uc; signed char sc; short s; unsigned short us; int i; unsigned int u; long long ll;
unsigned long long ull; _Bool b;
int main(void) {
  int x = __VERIFIER_nondet_int();
  unsigned int y = __VERIFIER_nondet_uint();
  uc = x; sc = x; s = x; us = y; i = x; u = y; ll = x; ull = y;
  uc += 200; uc *= 3u; uc -= y;        /* computed in unsigned int, stored modulo 256 */
  sc += 100; sc *= sc;                 /* computed in int, stored as signed char */
  if (s >= 0) s <<= 3; s >>= 1;
  us += x; us /= 3;
  i -= y;                              /* int op unsigned -> unsigned, converted back to int */
  i %= 1000;
  u *= x; u |= 1u << 31;
  ll += y; ll *= -3;
  ull -= x;
  b = x; b += 1; b -= 1;               /* _Bool: (b + 1) != 0, then (b - 1) != 0 */
  return 0;
}
"""


def test_compound_assignments_with_mixed_types(gcc, tmp_path):
    crosscheck(gcc, tmp_path, COMPOUND, _vectors(2),
               ["uc", "sc", "s", "us", "i", "u", "ll", "ull", "b"], ("LP64",))


INCDEC = r"""
extern unsigned char __VERIFIER_nondet_uchar(void);
extern int __VERIFIER_nondet_int(void);
unsigned char c1, c2, post, pre; signed char sc; unsigned short us; _Bool b1, b2, b3; int i, j, k;
int main(void) {
  c1 = __VERIFIER_nondet_uchar();
  c2 = c1;
  post = c1++;          /* 255 wraps to 0 */
  pre = ++c2;
  sc = (signed char)c1; sc--; --sc;
  us = 0; us--;
  b1 = __VERIFIER_nondet_int(); b2 = b1; b3 = b1;
  b1++; b2--; --b3;     /* _Bool ++ sets 1; -- toggles */
  i = __VERIFIER_nondet_int();
  j = i++ + 10;
  k = --i * 2;
  return 0;
}
"""


def test_increment_decrement_wrap_and_bool(gcc, tmp_path):
    crosscheck(gcc, tmp_path, INCDEC, [[255, 0], [0, 1], [127, 5], [128, -3], [254, 2]],
               ["c1", "c2", "post", "pre", "sc", "us", "b1", "b2", "b3", "i", "j", "k"], BOTH)


BOOLS = r"""
extern int __VERIFIER_nondet_int(void);
extern _Bool __VERIFIER_nondet_bool(void);
_Bool b, nb, from_big, from_neg; int sum, cmp, notb, land, lor;
int main(void) {
  int x = __VERIFIER_nondet_int();
  long long big = (long long)x * 4294967296LL;
  b = x;                 /* != 0, not truncation */
  from_big = big;        /* (x << 32) != 0 even though the low 32 bits are 0 */
  from_neg = -x;
  nb = __VERIFIER_nondet_bool();
  sum = b + nb + b;      /* promoted to int */
  cmp = (b == 1) + (nb > b);
  notb = !x + !!x * 10;
  land = x && nb;
  lor = (x > 5) || nb;
  return 0;
}
"""


def test_bool_conversions(gcc, tmp_path):
    crosscheck(gcc, tmp_path, BOOLS, [[0, 0], [1, 1], [256, 0], [-1, 1], [7, 0], [65536, 1]],
               ["b", "nb", "from_big", "from_neg", "sum", "cmp", "notb", "land", "lor"], ("LP64", "ILP32"))


LONGS = r"""
extern long __VERIFIER_nondet_long(void);
extern unsigned long __VERIFIER_nondet_ulong(void);
extern int __VERIFIER_nondet_int(void);
long l; unsigned long ul; long long ll; int cmp1, cmp2; unsigned long long big;
int main(void) {
  l = __VERIFIER_nondet_long();
  ul = __VERIFIER_nondet_ulong();
  int i = __VERIFIER_nondet_int();
  ll = l * 3 + i;
  cmp1 = l < ul;         /* LP64: unsigned long */
  cmp2 = i < 4294967295; /* the literal is long in LP64 (signed comparison) */
  big = 0xffffffffffULL + (unsigned long long)l;
  ul = ul / 7 + (ul >> 40);
  return 0;
}
"""


def test_long_in_lp64(gcc, tmp_path):
    crosscheck(gcc, tmp_path, LONGS, _vectors(3, EDGE_INTS + [1 << 40, -(1 << 40), (1 << 63) - 1]),
               ["l", "ul", "ll", "cmp1", "cmp2", "big"], ("LP64",))


def test_ilp32_long_is_32_bits(tmp_path):
    """ILP32 cannot be run with gcc here (-m32 is unavailable); check the typing directly instead."""
    from looprover.frontend.c import load_c_program
    from looprover.program import interp
    src = tmp_path / "l32.c"
    src.write_text("long l; unsigned long ul; int cmp; int main(void){ l = 2147483647; l = l + 1;"
                   " ul = 0; ul = ul - 1; cmp = -1 < 4294967295; return 0; }\n")
    p32 = load_c_program(src, "ILP32")
    assert str(p32.var("l").type) == "i32" and str(p32.var("ul").type) == "u32"
    r = interp.run(p32, interp.Oracle(), signed_overflow="wrap")
    # 4294967295 is `long long` in ILP32 (does not fit long), so the comparison is signed: -1 < 4294967295
    assert r.state["l"] == -2147483648 and r.state["ul"] == 4294967295 and r.state["cmp"] == 1
    p64 = load_c_program(src, "LP64")
    assert str(p64.var("l").type) == "i64"
    r = interp.run(p64, interp.Oracle(), signed_overflow="wrap")
    assert r.state["l"] == 2147483648 and r.state["ul"] == 2**64 - 1


ENUMS_LITERALS = r"""
extern int __VERIFIER_nondet_int(void);
enum color { RED, GREEN = 5, BLUE };
typedef unsigned char u8;
int e1, e2, lit1, lit2, lit3, chr, sz; unsigned int hex; long long bigl; u8 t;
int main(void) {
  enum color c = __VERIFIER_nondet_int() ? BLUE : RED;
  e1 = c; e2 = GREEN + BLUE;
  lit1 = 0x7fffffff; lit2 = 017; lit3 = 'A' + '\n' + '\x7f';
  hex = 0xffffffffu; bigl = 0x100000000LL;
  chr = (char)200;
  sz = sizeof(int) + sizeof(char) + sizeof(short) * 10 + sizeof(long long) * 100;
  t = (u8)(300 + __VERIFIER_nondet_int());
  return 0;
}
"""


def test_enums_literals_sizeof_typedefs(gcc, tmp_path):
    crosscheck(gcc, tmp_path, ENUMS_LITERALS, [[0, 0], [1, 5], [1, -300]],
               ["e1", "e2", "lit1", "lit2", "lit3", "hex", "bigl", "chr", "sz", "t"], BOTH)


FLOAT_CONSTANTS = r"""
extern int __VERIFIER_nondet_int(void);
#define RATE 25.0
int limit, neg, tiny, big, flag, off, mixed;
unsigned char byte;
int main(void) {
  int x = __VERIFIER_nondet_int();
  limit = (unsigned int)(2.5 * RATE);  /* 62: truncated toward zero */
  neg = -0.99;                         /* 0 */
  tiny = -7.75f;                       /* -7 */
  big = 2147483647.0;
  byte = 255.9;
  flag = (_Bool)0.25;                  /* any non-zero value is true */
  off = (_Bool)0.0;
  mixed = x + (int)(RATE / 3);         /* 8, added to a nondet int */
  return 0;
}
"""


@pytest.mark.parametrize("dm", BOTH)
def test_floating_constants_converted_to_integers(gcc, tmp_path, dm):
    """Floating-point constants converted to integers fold to what the compiled program computes."""
    crosscheck(gcc, tmp_path, FLOAT_CONSTANTS, [[0], [5], [-3]],
               ["limit", "neg", "tiny", "big", "byte", "flag", "off", "mixed"], (dm,))


SIGNED_OVERFLOW_WRAP = r"""
extern int __VERIFIER_nondet_int(void);
int a, m, n;
int main(void) {
  a = __VERIFIER_nondet_int();
  m = a + 1;
  n = a * 65536;
  return 0;
}
"""


@pytest.mark.parametrize("dm", ["LP64", "ILP32"])
def test_signed_overflow_matches_fwrapv(gcc, tmp_path, dm):
    crosscheck(gcc, tmp_path, SIGNED_OVERFLOW_WRAP, [[2147483647], [65536], [-1]], ["a", "m", "n"], (dm,))
