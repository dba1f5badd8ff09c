"""Functions, arrays, structs and pointers in the front-end, cross-checked against gcc (see c_harness)."""
from __future__ import annotations

from helpers.c_harness import crosscheck

BOTH = ("LP64", "ILP32")

FUNCTIONS = r"""
extern int __VERIFIER_nondet_int(void);
int g, order, r1, r2, r4, r5, r6;
int bump(void) { g += 10; return g; }
int absdiff(int a, int b) { if (a > b) return a - b; return b - a; }
int fact(int n) { int r = 1; while (n > 1) { r *= n; n--; } return r; }
void setg(int v) { g = v; if (v > 100) return; g++; }
unsigned char narrow(unsigned char c) { return c + 1; }   /* parameter and return conversions */
int twice(int (v)) { return v + v; }
int main(void) {
  int x = __VERIFIER_nondet_int();
  int n = x;
  r1 = absdiff(x, 3) + absdiff(3, x);
  r2 = fact(x & 7);
  g = x;
  r4 = bump() + g;
  setg(x); order = g;
  r5 = narrow(x) + narrow(255);
  r6 = twice(twice(n)) + n;    /* the parameter n of nothing shadows nothing; locals stay separate */
  { int x = 5; r6 += x; }
  r6 += x;
  return 0;
}
"""


def test_function_inlining_and_evaluation_order(gcc, tmp_path):
    crosscheck(gcc, tmp_path, FUNCTIONS, [[0], [1], [5], [-4], [200], [255], [1000]],
               ["g", "order", "r1", "r2", "r4", "r5", "r6"], BOTH)


def test_unspecified_order_is_left_to_right(tmp_path):
    """`g + f()` with f changing g: C leaves the order open (gcc reads g last); we document left to right."""
    from looprover.frontend.c import load_c_program
    from looprover.program import interp
    src = tmp_path / "order.c"
    src.write_text("int g, r, s; int bump(void) { g += 10; return g; }\n"
                   "int main(void) { r = g + bump(); s = bump() + g; return 0; }\n")
    p = load_c_program(src)
    res = interp.run(p, interp.Oracle())
    assert res.state["r"] == 0 + 10 and res.state["s"] == 20 + 20


ARRAYS = r"""
extern int __VERIFIER_nondet_int(void);
int ga[5] = {1, 2, 3};
int gz[4];
short m[2][3] = {{1, 2, 3}, {4, 5}};
int flat[2][2] = {7, 8, 9};
int r_sum, r_m, r_idx, r_loc, r_conv;
unsigned char bytes[4];
int sum(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
void fill(int a[], int n, int v) { int *p = a; while (n-- > 0) *p++ = v++; }
int main(void) {
  int x = __VERIFIER_nondet_int();
  int loc[6];
  int i;
  for (i = 0; i < 6; i++) loc[i] = i * x;
  ga[3] = x; gz[x & 3] = 1;
  r_sum = sum(ga, 5) + sum(loc, 6);
  fill(gz + 1, 3, x);
  m[1][2] = m[0][1] + m[1][0];
  r_m = m[1][2] * 100 + m[1][1];
  r_idx = 2[ga] + *(ga + 1) + flat[1][0] + flat[1][1];
  bytes[0] = 200; bytes[1] = bytes[0] + 100; bytes[2] = -1;
  r_loc = loc[5] + loc[x & 1];
  short *row = (short *)&m[1], *whole = (short *)&m;   /* a pointer to an array points to its first element */
  unsigned char *cs = (unsigned char *)&bytes;
  r_conv = row[1] * 1000 + whole[4] * 10 + cs[1] + row[x & 1];
  return 0;
}
"""


def test_arrays_and_array_pointers(gcc, tmp_path):
    crosscheck(gcc, tmp_path, ARRAYS, [[0], [1], [3], [-2], [1000]],
               ["ga", "gz", "m", "flat", "r_sum", "r_m", "r_idx", "bytes", "r_loc", "r_conv"], BOTH)


ARRAY_PARAMS = r"""
extern int __VERIFIER_nondet_int(void);
typedef unsigned char u8;
u8 buf[32], out[16];
int r1, r2;
static void copy(u8 o[16], const u8 k[32], int n) { for (int i = 0; i < 16; i++) o[i] = k[(i + n) & 31]; }
static int sum(const int v[4]) { return v[0] + v[1] + v[2] + v[3]; }
static int tail(const u8 k[32], int n) { const u8 *p = k + 16; p = n > 0 ? k + 8 : p; return p[n & 7] + (k + 1)[2]; }
int main(void) {
  int x = __VERIFIER_nondet_int();
  for (int i = 0; i < 32; i++) buf[i] = i * 3 + x;
  int v[4] = {x, 2, 3, 4};
  copy(out, buf, x);
  r1 = out[0] + out[15];
  r2 = sum(v) + tail(buf, x);
  return 0;
}
"""


def test_arrays_passed_to_const_array_parameters(gcc, tmp_path):
    """A parameter declared `const u8 k[32]` is a pointer (C11 6.7.6.3p7), though libclang gives the argument's
    conversion, and what is computed from the parameter (`k + 16`), the array type (Monocypher's API: every key
    and nonce parameter)."""
    crosscheck(gcc, tmp_path, ARRAY_PARAMS, [[0], [5], [-7], [300]], ["r1", "r2"], BOTH)


STRUCTS = r"""
extern int __VERIFIER_nondet_int(void);
struct pt { int x; unsigned char tag; };
struct box { struct pt lo, hi; int data[3]; };
struct box gb = { {1, 2}, {3, 4}, {5, 6, 7} };
struct pt pts[3];
int r1, r2, r3, r4, r5;
struct pt mk(int x) { struct pt p; p.x = x; p.tag = x + 1; return p; }
int area(struct box b) { b.lo.x = 1000; return (b.hi.x - b.lo.x) * 2; }
int main(void) {
  int v = __VERIFIER_nondet_int();
  struct box b = gb;
  struct pt q = mk(v);
  b.lo = q;                   /* struct assignment copies every field */
  gb.data[v & 1] = v;
  r1 = b.lo.x + b.lo.tag + gb.data[0] + gb.data[1];
  r2 = area(b) + b.lo.x;      /* pass by value: the callee's change is invisible */
  pts[1] = q; pts[2].x = 9; pts[v & 1].tag = 77;
  r3 = pts[1].x + pts[1].tag + pts[2].x + pts[0].tag;
  r4 = mk(v).tag;
  struct pt z = {0};
  r5 = z.x + z.tag + b.data[2];
  return 0;
}
"""


def test_structs_copy_nesting_and_arrays_of_structs(gcc, tmp_path):
    crosscheck(gcc, tmp_path, STRUCTS, [[0], [1], [254], [-7]], ["r1", "r2", "r3", "r4", "r5"], BOTH)


POINTERS = r"""
extern int __VERIFIER_nondet_int(void);
extern _Bool __VERIFIER_nondet_bool(void);
struct node { int val; struct node *next; };
int r_swap, r_list, r_cmp, r_pp, r_null, r_arr, r_diff;
int gx = 5;
void swap(int *a, int *b) { int t = *a; *a = *b; *b = t; }
int length(struct node *n) { int k = 0; while (n) { k += n->val; n = n->next; } return k; }
int main(void) {
  int x = __VERIFIER_nondet_int();
  int y = __VERIFIER_nondet_int();
  swap(&x, &y);
  swap(&gx, &x);
  r_swap = x * 100 + y * 10 + gx;
  struct node a, b, c;
  a.val = 1; b.val = 20; c.val = 300;
  a.next = &b; b.next = __VERIFIER_nondet_bool() ? &c : 0; c.next = 0;
  r_list = length(&a);
  struct node *p = &a, *q = a.next;
  r_cmp = (p == &a) + (q == &b) * 2 + (p != q) * 4 + (q->next == 0) * 8;
  int *ip = &y; int **pp = &ip;
  **pp = 42; *pp = &x; **pp += 1;
  r_pp = y * 1000 + x;
  int *np = 0;
  r_null = (np == 0) + !np + (np ? 5 : 0);
  int arr[4] = {10, 20, 30, 40};
  int *e = &arr[1];
  e[1] = 33; *(e + 2) += 1; e++;
  r_arr = arr[2] + arr[3] + *e + e[-2];
  r_diff = (int)(e - arr) + (e > arr) * 10;
  return 0;
}
"""


def test_pointers_to_stack_and_globals(gcc, tmp_path):
    crosscheck(gcc, tmp_path, POINTERS, [[1, 2, 0], [3, -4, 1], [0, 0, 1]],
               ["r_swap", "r_list", "r_cmp", "r_pp", "r_null", "r_arr", "r_diff", "gx"], BOTH)


STATIC_LOCALS = r"""
extern int __VERIFIER_nondet_int(void);
int r1, r2;
int counter(void) { static int n = 10; static int calls; calls++; return n++ + calls * 100; }
int main(void) {
  int k = __VERIFIER_nondet_int() & 3;
  for (int i = 0; i < k; i++) r1 += counter();
  r2 = counter();
  return 0;
}
"""


def test_static_locals_are_initialised_once(gcc, tmp_path):
    crosscheck(gcc, tmp_path, STATIC_LOCALS, [[0], [1], [3]], ["r1", "r2"], BOTH)


def test_names_and_kinds(tmp_path):
    """Shadowed and inlined locals get distinct IR names; the C name and kind are kept."""
    from looprover.frontend.c import load_c_program
    src = tmp_path / "names.c"
    src.write_text("extern int __VERIFIER_nondet_int(void);\nint g;\nint f(int a) { int x = a; a++; return x; }\n"
                   "int main(void) { int x = __VERIFIER_nondet_int(); { int x = 2; g = x; }\n"
                   "  g = f(x) + f(g); return 0; }\n")
    p = load_c_program(src)
    kinds = {n: (i.kind, i.c_name) for n, i in p.variables.items()}
    assert kinds["g"] == ("global", "g")
    assert kinds["x"] == ("local", "x") and kinds["x#1"] == ("local", "x")
    assert kinds["f::a"] == ("param", "a") and kinds["f::a#1"] == ("param", "a")
    assert kinds["f::ret"][0] == "ret"
    assert [n for n, (k, _) in kinds.items() if k == "nondet"] == ["nondet_int"]
    assert p.data_model == "ILP32" and p.source_file == str(src)
    assert all(s.src is not None and s.src.line >= 1 for _, s in p.statements())


def test_read_only_parameters_need_no_variable(tmp_path):
    """`__VERIFIER_assert(x > 0)`-style calls: the parameter stands for the argument's value."""
    from looprover.frontend.c import load_c_program
    src = tmp_path / "ro.c"
    src.write_text("extern void abort(void);\nint g;\n"
                   "void check(int c) { if (!c) abort(); }\n"
                   "void touch(int c) { g++; if (!c) abort(); }\n"
                   "int main(void) { int x = 3; check(x > 0); check(g == 0); touch(x); touch(g); return 0; }\n")
    p = load_c_program(src)
    params = sorted(n for n, i in p.variables.items() if i.kind == "param")
    # check(x > 0), check(g == 0) and touch(x) bind their arguments; touch(g) changes g, so it needs a copy
    assert params == ["touch::c"]


STRINGS_AND_NONDET_TYPES = r"""
extern int __VERIFIER_nondet_int(void);
char s[8] = "a\tb\\\x41\101";
char t[] = "xy" "z";
char words[2][4] = {"ab", "cde"};
int len, code;
int main(void) {
  int i = __VERIFIER_nondet_int() & 7;
  len = 0; while (t[len]) len++;
  code = s[i] + words[1][2] * 1000 + words[0][3];
  return 0;
}
"""


def test_string_initialisers(gcc, tmp_path):
    crosscheck(gcc, tmp_path, STRINGS_AND_NONDET_TYPES, [[0], [1], [3], [5], [7]],
               ["s", "t", "words", "len", "code"], BOTH)


def test_nondet_value_has_the_type_its_name_says(tmp_path):
    """`int __VERIFIER_nondet_uchar()` still returns an unsigned char value (SV-COMP convention)."""
    from looprover.frontend.c import load_c_program
    from looprover.program import interp
    src = tmp_path / "nd.c"
    src.write_text("int __VERIFIER_nondet_uchar(); int __VERIFIER_nondet_bool(); long __VERIFIER_nondet_long();\n"
                   "int u, b; long l;\n"
                   "int main(void) { u = __VERIFIER_nondet_uchar(); b = __VERIFIER_nondet_bool();"
                   " l = __VERIFIER_nondet_long(); return 0; }\n")
    for dm, lbits in (("ILP32", 32), ("LP64", 64)):
        p = load_c_program(src, dm)
        types = {i.c_name: str(i.var.type) for i in p.variables.values() if i.kind == "nondet"}
        assert types == {"__VERIFIER_nondet_uchar()": "u8", "__VERIFIER_nondet_bool()": "bool",
                         "__VERIFIER_nondet_long()": f"i{lbits}"}
        r = interp.run(p, interp.InputOracle(p, [300, 7, 2**40]))
        assert r.state["u"] == 44 and r.state["b"] == 1
        assert r.state["l"] == (2**40 if lbits == 64 else 0)


VLAS = r"""
extern int __VERIFIER_nondet_int(void);
int r1, r2, r3;
int sum(int n, int *a) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
int main(void) {
  int n = (__VERIFIER_nondet_int() & 3) + 1;
  int m = (__VERIFIER_nondet_int() & 3) + 2;
  int a[n][m];
  int v[n + 2];
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      a[i][j] = k++;
  for (int i = 0; i < n + 2; i++) v[i] = i * 10;
  r1 = a[n - 1][m - 1] * 100 + a[0][1];
  int *row = a[n - 1];
  r2 = row[0] + sum(m, a[0]) * 1000;
  r3 = sum(n + 2, v);
  return 0;
}
"""


def test_variable_length_arrays(gcc, tmp_path):
    crosscheck(gcc, tmp_path, VLAS, [[0, 0], [1, 2], [3, 3], [2, 1]], ["r1", "r2", "r3"], BOTH)


ALIASING = r"""
extern int __VERIFIER_nondet_int(void);
struct s { int a; struct s *n; int b; };
struct s x, y;
int r1, r2, r3, r4;
int main(void) {
  int k = __VERIFIER_nondet_int();
  struct s *p = k ? &x : &y, *q = &x;
  x.a = 1; x.b = 2; y.a = 3; y.b = 4;
  x.n = &x;                   /* self loop */
  x.n->n = 0;                 /* the write overwrites the pointer its own guard reads */
  r1 = (x.n == 0);
  y = x;                      /* struct copy including a pointer */
  *p = *q;                    /* p == q when k != 0 */
  r2 = y.a * 10 + y.b + (y.n == 0) * 100;
  p->a += 5;
  r3 = x.a * 10 + y.a;
  struct s *arr[2] = {&x, &y};
  arr[k != 0]->b = 42;
  r4 = x.b * 100 + y.b;
  return 0;
}
"""


def test_aliasing_writes_read_before_write(gcc, tmp_path):
    crosscheck(gcc, tmp_path, ALIASING, [[0], [1]], ["r1", "r2", "r3", "r4"], BOTH)


POINTER_WALKS = r"""
extern char __VERIFIER_nondet_char(void);
extern int __VERIFIER_nondet_int(void);
struct pt { int x; unsigned char tag; };
struct pt pts[3];
char buf[6];
int arr[5] = {1, 2, 3, 4, 5};
int r_len, r_sum, r_pts, r_cmp;
int slen(const char *s) { const char *p = s; while (*p) p++; return p - s; }
int main(void) {
  int n = __VERIFIER_nondet_int() & 3;
  for (int i = 0; i < n; i++) { buf[i] = __VERIFIER_nondet_char(); if (!buf[i]) buf[i] = 'x'; }
  r_len = slen(buf);
  int *p, *end = arr + 5;
  for (p = arr; p < end; p++) r_sum += *p;
  r_sum += (p == end) * 100 + (int)(end - p);
  struct pt *q = &pts[1];
  q->x = 5; (q + 1)->tag = 9; q[-1].x = 3; (*q).tag = 7;
  r_pts = pts[0].x * 1000 + pts[1].x * 100 + pts[1].tag * 10 + pts[2].tag;
  r_cmp = (q > &pts[0]) + (q + 1 >= &pts[2]) * 2 + (q <= pts) * 4;
  return 0;
}
"""


def test_pointer_walks_over_arrays_and_struct_arrays(gcc, tmp_path):
    crosscheck(gcc, tmp_path, POINTER_WALKS, [[0], [1, 65], [3, 0, 66, 67], [2, 200, 1]],
               ["r_len", "r_sum", "r_pts", "r_cmp", "buf"], BOTH)


POINTER_MIX = r"""
extern int __VERIFIER_nondet_int(void);
struct node { int v; struct node *next; };
struct node nodes[4];
int r1, r2, r3, r4, r5;
struct node *pick(struct node *a, struct node *b, int c) { return c ? a : b; }
void bump(struct node *n, int by) { n->v += by; }
int main(void) {
  int k = __VERIFIER_nondet_int() & 3;
  for (int i = 0; i < 4; i++) { nodes[i].v = i * 10; nodes[i].next = i < 3 ? &nodes[i + 1] : 0; }
  nodes[k].next = 0;
  int s = 0; struct node *p = &nodes[0];
  while (p) { s += p->v; p = p->next; }
  r1 = s;
  struct node **pp = &p; p = &nodes[2]; (*pp)->v = 77; (**pp).v += 1;
  r2 = nodes[2].v;
  int a = 1, b = 2, c = 3; int *ps[3] = {&a, &b, &c};
  *ps[k % 3] = 50; *ps[0] += *ps[2];
  r3 = a * 10000 + b * 100 + c;
  bump(pick(&nodes[1], &nodes[3], k & 1), 5);
  (k ? &nodes[0] : &nodes[1])->v = 9;
  r4 = nodes[0].v * 10000 + nodes[1].v * 100 + nodes[3].v;
  int arr[6] = {1, 2, 3, 4, 5, 6}; int *q = arr + 5; q -= 3; q = &*q; *&a = *q;
  r5 = a + (int)(q - &arr[1]) * 100;
  return 0;
}
"""


def test_pointer_mix(gcc, tmp_path):
    crosscheck(gcc, tmp_path, POINTER_MIX, [[0], [1], [2], [3]], ["r1", "r2", "r3", "r4", "r5"], BOTH)


MEMBER_POINTERS = r"""
extern int __VERIFIER_nondet_int(void);
struct in { int a; int b[3]; };
struct out { struct in x; char name[6]; int c; };
struct out go;
int r_set, r_walk, r_name, r_local, r_global, r_cmp;
void set(int *p, int v) { *p = v; }
int sum(const int *p, int n) { int s = 0; for (int i = 0; i < n; i++) s += p[i]; return s; }
int fill(char *s, int n) { for (int i = 0; i < n; i++) s[i] = 'a' + i; s[n] = 0; return n; }
int local(int k) { struct in t; t.b[0] = k; t.b[1] = 2 * k; t.b[2] = 0; int *q = t.b; q[2] = q[0] + q[1]; return sum(t.b, 3); }
int main(void) {
  int k = __VERIFIER_nondet_int() & 3;
  struct out o;
  o.c = 1; o.x.a = 2;
  set(&o.x.a, 10 + k); set(&o.x.b[k % 3], 7); set(&o.c, o.x.a + 1);
  r_set = o.x.a * 100 + o.c;
  int *w = o.x.b; w[0] = 1; w[1] = 2; w[2] = 3; w[k % 3] += 10;
  r_walk = sum(o.x.b, 3) + o.x.b[k % 3];
  struct in *pi = &o.x; pi->b[1] = 40;
  r_walk += o.x.b[1];
  r_name = fill(o.name, k + 1) * 1000 + o.name[0] + o.name[k];
  char *nm = o.name; nm[1] = 'z'; r_name += o.name[1];
  r_local = local(k) + local(k + 1);
  set(&go.x.b[2], k); go.name[0] = 'g'; char *gn = go.name;
  r_global = go.x.b[2] + gn[0];
  r_cmp = (&o.x.b[1] > o.x.b) + (w + 2 == &o.x.b[2]) * 10;
  return 0;
}
"""


def test_pointers_to_struct_members(gcc, tmp_path):
    """`&s.x`, a member array used as a pointer, members of members and of globals: each member whose address
    is taken is an object sharing the struct's cells (`memory.Obj.members`)."""
    crosscheck(gcc, tmp_path, MEMBER_POINTERS, [[0], [1], [2], [3]],
               ["r_set", "r_walk", "r_name", "r_local", "r_global", "r_cmp"], BOTH)
