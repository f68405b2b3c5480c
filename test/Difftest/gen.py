# ===- gen.py - Random GPU kernels for differential testing --------------=== #
#
# Generator(seed).generate() builds a random Kernel (kernel_ast.py): arith and
# math ops on f32/i32/index values, thread/block ids, scf.for loops with run-
# time bounds (zero- and one-trip loops, iter_args), scf.if with and without
# results, workgroup memory written and read in barrier-separated phases
# (also inside uniform loops holding barriers), and atomics on global and
# workgroup buffers.
#
# The kernels are race-free and deterministic by construction, so that a CPU
# execution of the same tree gives the same answer up to rounding:
# - a thread writes only its own slots of 'own' buffers (global: its linear
#   id in the grid, workgroup: in the block); other threads' workgroup slots
#   are read only in phases where no thread writes the tile;
# - atomic buffers are never read plainly while atomics may run on them
#   (global ones never; workgroup ones in a later phase, after a barrier),
#   and each buffer has one atomic kind (all kinds used commute);
# - float values stay finite and well-conditioned: every value carries a
#   bound on its magnitude (at most FMAX), math functions get arguments where
#   they are smooth (log of x*x + 1, sqrt of |x| + 1/4, exp of |x| <= 3,
#   denominators of magnitude >= 1/2, asin of 3/4 tanh x), loop-carried
#   floats are contracted to at most LOOPB;
# - branch conditions and float-to-int conversions see only *exact* floats,
#   values that the CPU and the GPU compute bit-identically (loads of inputs,
#   constants, small integers converted, negation, |x|, max/min, products by
#   powers of two, floor/ceil/round, select); buffers flagged exact only ever
#   receive exact values. Values that rounding may change differently on the
#   two sides (anything through add, mul, div or a math function) reach
#   outputs only through continuous functions.
# With diff=True the kernel is differentiable: float data flow only from
# float buffers (int buffers are const inputs), no integer atomics or
# float-to-int conversions, float min/max atomics only on workgroup memory
# with a barrier after them; loops carry `nabla.max_trip_count` hints half of
# the time (taped instead of checkpointed).
# ===----------------------------------------------------------------------=== #
import math
import random
from dataclasses import dataclass

from kernel_ast import (Atomic, Barrier, Buffer, For, If, Kernel, Load, Op,
                        Scalar, Store, all_uses)

FMAX = 32.0     # bound on every float value
STB = 4.0       # bound on values stored to buffers
LOOPB = 4.0     # bound on loop-carried floats
IMAX = 4096     # bound on index values (32-bit index on SPIR-V)

INT_ACC_KINDS = ["addi", "maxs", "mins", "maxu", "minu", "andi", "ori"]
INT_ACC_INIT = {"addi": 0, "maxs": -1000, "mins": 1000, "maxu": 0,
                "minu": -1, "andi": -1, "ori": 0}
# Known failures, left out of generated kernels unless
# Generator(known_failures=True); each has a minimized regression in
# regressions/ (xfail while open):
# "dim": memref.dim of a memref<?xT> parameter has no SPIR-V lowering (a
# documented limit, Targets.md).
# Fixed since, and generated again: ceildivsi/floordivsi/ceildivui and
# math.trunc on SPIR-V, integer atomics in subgroup-divergent loops on
# lavapipe (relaxed semantics), the reverse mode of constant empty loops,
# math.fpowi on f64 with a run-time exponent ("f64-fpowi": an invalid
# spirv.GL.Pow on f64, now a loop).
KNOWN_UNSUPPORTED = {"dim"}

CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF = ["oeq", "one", "olt", "ole", "ogt", "oge", "ueq", "une", "ult", "ule",
        "ugt", "uge", "ord"]


@dataclass
class Val:
    name: str
    ty: str
    bound: float = 0.0   # |f|, index upper bound; unused for i32/i1
    exact: bool = False  # float computed bit-identically on CPU and GPU
    uniform: bool = False


class Ctx:
    """Where statements are generated: the modes of the workgroup buffers in
    this phase ('write' own slots / 'read' any slot for tiles; 'atomic' /
    'read' / 'none' for accumulators) and the loop nesting."""

    def __init__(self, modes, loops=0):
        self.modes = modes
        self.loops = loops

    def nested(self, loop=False):
        return Ctx(self.modes, self.loops + (1 if loop else 0))


def pow2_at_least(x):
    return 2.0 ** math.ceil(math.log2(max(x, 1e-30)))


class Generator:
    def __init__(self, seed, diff=None, size="normal", known_failures=False):
        self.r = random.Random(seed)
        self.avoid = set() if known_failures else KNOWN_UNSUPPORTED
        self.minmax_read = set()
        self.seed = seed
        self.count = 0
        self.scope = []
        self.out = []
        self.force_diff = diff
        self.ctx = Ctx({})
        self.f64 = False
        self.budget_scale = {"small": 0.5, "normal": 1.0}[size]

    # ---------------------------------------------------------------- basics
    def fresh(self, prefix="v"):
        self.count += 1
        return f"%{prefix}{self.count}"

    def emit(self, stmt):
        self.out.append(stmt)

    def chance(self, p):
        return self.r.random() < p

    def op(self, kind, args, ty, attr=None, bound=0.0, exact=False,
           keep=True, prefix="v"):
        name = self.fresh(prefix)
        self.emit(Op(name, kind, [a.name if isinstance(a, Val) else a
                                  for a in args], ty, attr))
        val = Val(name, ty, bound, exact)
        if keep:
            self.scope.append(val)
        return val

    def const(self, ty, value):
        if ty == "f":
            return self.op("const", [], "f", float(value), abs(value), True,
                           keep=False, prefix="c")
        if ty == "i1":
            return self.op("const", [], "i1", bool(value), keep=False,
                           prefix="c")
        return self.op("const", [], ty, int(value), abs(int(value)), True,
                       keep=False, prefix="c")

    def pick(self, ty, filt=None, make=True, other=None):
        cands = [v for v in self.scope
                 if v.ty == ty and (filt is None or filt(v))]
        if other is not None and len(cands) > 1:
            cands = [v for v in cands if v.name != other.name]
        if not cands:
            return self.make(ty, filt) if make else None
        if self.chance(0.7):
            return self.r.choice(cands[-6:])
        return self.r.choice(cands)

    def make(self, ty, filt=None):
        """A value of type ty satisfying filt, built from scratch."""
        if ty == "f":
            v = self.load_value("f", exact_only=filt is not None)
            if v is not None and (filt is None or filt(v)):
                return v
            return self.const("f", self.dyadic(2.0))
        if ty == "i32":
            return self.new_i32()
        if ty == "index":
            return self.new_index()
        return self.new_cond()

    def choose(self, names):
        return self.r.choice([n for n in names if n not in self.avoid])

    def dyadic(self, bound):
        return self.r.randint(-int(bound * 8), int(bound * 8)) / 8.0

    # --------------------------------------------------------------- floats
    def squash(self, v, target):
        """v with magnitude at most target (exactness kept by scaling)."""
        if v.bound <= target:
            return v
        if v.exact or self.f64 or self.chance(0.6):
            scale = pow2_at_least(v.bound / target)
            c = self.const("f", 1.0 / scale)
            return self.op("bin", [v, c], "f", "mulf", v.bound / scale,
                           v.exact)
        t = self.op("un", [v], "f", "math.tanh", 1.0)
        c = self.const("f", float(int(target)))
        return self.op("bin", [t, c], "f", "mulf", float(int(target)))

    def fval(self, exact=False):
        if exact:
            return self.pick("f", lambda v: v.exact)
        return self.pick("f")

    def new_f(self):
        r = self.r
        kinds = ["arith", "arith", "arith", "div", "math", "math", "math",
                 "math2", "fma", "sitofp", "select", "unexact", "const"]
        if not self.diff:
            kinds += ["round"]
        kind = r.choice(kinds)
        if kind == "arith":
            a = self.fval()
            b = self.pick("f", other=a)
            name = r.choice(["addf", "subf", "mulf", "maximumf", "minimumf",
                             "maxnumf", "minnumf"])
            if name == "mulf":
                if self.chance(0.3):
                    c = self.const("f", r.choice([0.25, 0.5, 2.0, -0.5, 4.0]))
                    v = self.op("bin", [a, c], "f", "mulf",
                                a.bound * abs(c.bound), a.exact)
                    return self.squash(v, FMAX)
                bound = a.bound * b.bound
            elif name in ("addf", "subf"):
                bound = a.bound + b.bound
            else:
                bound = max(a.bound, b.bound)
            exact = name not in ("addf", "subf", "mulf") and a.exact and b.exact
            return self.squash(self.op("bin", [a, b], "f", name, bound, exact),
                               FMAX)
        if kind == "div":
            a, b = self.fval(), self.fval()
            if self.chance(0.5):
                b2 = self.squash(b, 8.0)
                sq = self.op("bin", [b2, b2], "f", "mulf", b2.bound ** 2,
                             keep=False)
                one = self.const("f", 1.0)
                d = self.op("bin", [sq, one], "f", "addf", sq.bound + 1,
                            keep=False)
                return self.op("bin", [a, d], "f", "divf", a.bound)
            ab = self.op("un", [b], "f", "math.absf", b.bound, b.exact,
                         keep=False)
            half = self.const("f", 0.5)
            d = self.op("bin", [ab, half], "f", "addf", ab.bound + 0.5,
                        keep=False)
            return self.squash(self.op("bin", [a, d], "f", "divf",
                                       2 * a.bound), FMAX)
        if kind == "math":
            return self.new_math1(self.fval())
        if kind == "math2":
            return self.new_math2(self.fval(), self.fval())
        if kind == "fma":
            a, b, c = self.fval(), self.fval(), self.fval()
            a, b = self.squash(a, 6.0), self.squash(b, 4.0)
            return self.squash(self.op("fma", [a, b, c], "f", None,
                                       a.bound * b.bound + c.bound), FMAX)
        if kind == "sitofp":
            return self.int_to_float(self.pick("i32"))
        if kind == "select":
            c = self.new_cond()
            a, b = self.fval(), self.fval()
            return self.op("select", [c, a, b], "f", None,
                           max(a.bound, b.bound), a.exact and b.exact)
        if kind == "unexact":
            a = self.fval()
            name = r.choice(["arith.negf", "math.absf"])
            return self.op("un", [a], "f", name, a.bound, a.exact)
        if kind == "round":
            a = self.fval(exact=True)
            name = self.choose(["math.floor", "math.ceil", "math.round",
                                "math.roundeven", "math.trunc"])
            return self.op("un", [a], "f", name, a.bound + 1, a.exact)
        return self.const("f", self.dyadic(2.0))

    def int_to_float(self, i):
        """An exact float of magnitude <= 4 from any i32."""
        mask = self.const("i32", 255)
        m = self.op("bin", [i, mask], "i32", "andi", keep=False)
        c128 = self.const("i32", 128)
        s = self.op("bin", [m, c128], "i32", "subi", keep=False)
        name = "sitofp" if self.chance(0.8) else "uitofp"
        if name == "uitofp":
            f = self.op("cast", [m], "f", ["uitofp", "i32"], 255.0, True,
                        keep=False)
        else:
            f = self.op("cast", [s], "f", ["sitofp", "i32"], 128.0, True,
                        keep=False)
        c = self.const("f", 1.0 / 32)
        return self.op("bin", [f, c], "f", "mulf", f.bound / 32, True)

    def new_math1(self, a):
        r = self.r
        if self.f64:
            # SPIR-V has no f64 transcendentals (GLSL.std.450 is 32-bit).
            name = self.choose(["sqrt", "rsqrt", "f64-fpowi", "absf"])
            name = "fpowi" if name == "f64-fpowi" else name
            if name == "absf":
                return self.op("un", [a], "f", "math.absf", a.bound, a.exact)
        else:
            name = r.choice(["sin", "cos", "tanh", "erf", "atan", "exp",
                             "exp2", "expm1", "sinh", "cosh", "log", "log2",
                             "log10", "log1p", "sqrt", "rsqrt", "cbrt",
                             "asinh", "acosh", "atanh", "asin", "acos", "tan",
                             "erfc", "fpowi"])
        un = lambda x, b, n=name: self.op("un", [x], "f", "math." + n, b)
        if name in ("sin", "cos"):
            return un(self.squash(a, 8.0), 1.0)
        if name in ("tanh", "erf"):
            return un(a, 1.0)
        if name == "atan":
            return un(a, 1.6)
        if name == "erfc":
            return un(a, 2.0)
        if name in ("exp", "exp2", "expm1", "sinh", "cosh"):
            x = self.squash(a, 3.0)
            return un(x, math.exp(x.bound) + 1)
        if name in ("log", "log2", "log10", "log1p", "acosh"):
            if name == "log1p":
                arg = self.op("un", [a], "f", "math.absf", a.bound, keep=False)
            else:
                x = self.squash(a, 8.0)
                sq = self.op("bin", [x, x], "f", "mulf", x.bound ** 2,
                             keep=False)
                one = self.const("f", 1.5 if name == "acosh" else 1.0)
                arg = self.op("bin", [sq, one], "f", "addf", sq.bound + 1.5,
                              keep=False)
            return un(arg, math.log(arg.bound + 1) + 1)
        if name in ("sqrt", "rsqrt", "cbrt"):
            ab = self.op("un", [a], "f", "math.absf", a.bound, keep=False)
            c = self.const("f", 0.5 if name != "sqrt" else 0.25)
            arg = self.op("bin", [ab, c], "f", "addf", ab.bound + 0.5,
                          keep=False)
            return un(arg, max(2.0, math.sqrt(arg.bound) + 1))
        if name == "asinh":
            return un(a, math.asinh(a.bound) + 1)
        if name in ("atanh", "asin", "acos", "tan"):
            t = self.op("un", [a], "f", "math.tanh", 1.0, keep=False)
            c = self.const("f", 0.75)
            arg = self.op("bin", [t, c], "f", "mulf", 0.75, keep=False)
            return un(arg, 3.2)
        # fpowi: x^n, n in 0..3 from a constant or a masked integer
        x = self.squash(a, 3.0)
        if self.chance(0.5):
            n = self.const("i32", r.randint(0, 3))
        else:
            i = self.pick("i32")
            three = self.const("i32", 3)
            n = self.op("bin", [i, three], "i32", "andi", keep=False)
        return self.squash(self.op("fpowi", [x, n], "f", None,
                                   max(1.0, x.bound) ** 3), FMAX)

    def new_math2(self, a, b):
        name = self.r.choice(["copysign"] if self.f64 else
                             ["atan2", "powf", "copysign"])
        if name == "atan2":
            ab = self.op("un", [b], "f", "math.absf", b.bound, keep=False)
            half = self.const("f", 0.5)
            d = self.op("bin", [ab, half], "f", "addf", ab.bound + 0.5,
                        keep=False)
            return self.op("math2", [a, d], "f", "atan2", 1.6)
        if name == "powf":
            x = self.squash(a, 4.0)
            ab = self.op("un", [x], "f", "math.absf", x.bound, keep=False)
            half = self.const("f", 0.5)
            base = self.op("bin", [ab, half], "f", "addf", ab.bound + 0.5,
                           keep=False)
            e = self.squash(b, 2.0)
            return self.squash(self.op("math2", [base, e], "f", "powf",
                                       base.bound ** 2 + 1), FMAX)
        sign = self.fval(exact=True)
        return self.op("math2", [a, sign], "f", "copysign", a.bound,
                       a.exact and sign.exact)

    # ------------------------------------------------------------- integers
    def new_i32(self):
        r = self.r
        kind = r.choice(["arith", "arith", "arith", "shift", "div", "cast",
                         "select", "const", "fptosi", "ext"])
        if kind == "fptosi" and self.diff:
            kind = "arith"
        if kind == "arith":
            a = self.pick("i32")
            b = self.pick("i32", other=a)
            name = r.choice(["addi", "subi", "muli", "andi", "ori", "xori",
                             "maxsi", "minsi", "maxui", "minui"])
            return self.op("bin", [a, b], "i32", name)
        if kind == "shift":
            a = self.pick("i32")
            if self.chance(0.5):
                s = self.const("i32", r.randint(0, 31))
            else:
                mask = self.const("i32", 31)
                s = self.op("bin", [self.pick("i32"), mask], "i32", "andi",
                            keep=False)
            return self.op("bin", [a, s], "i32",
                           r.choice(["shli", "shrsi", "shrui"]))
        if kind == "div":
            a, b = self.pick("i32"), self.pick("i32")
            mask = self.const("i32", 15)
            m = self.op("bin", [b, mask], "i32", "andi", keep=False)
            one = self.const("i32", 1)
            d = self.op("bin", [m, one], "i32", "ori", keep=False)
            name = self.choose(["divsi", "remsi", "divui", "remui",
                                "ceildivsi", "floordivsi", "ceildivui"])
            return self.op("bin", [a, d], "i32", name)
        if kind == "cast":
            return self.op("cast", [self.pick("index")], "i32",
                           [r.choice(["index_cast", "index_castui"]),
                            "index"])
        if kind == "select":
            c = self.new_cond()
            return self.op("select", [c, self.pick("i32"), self.pick("i32")],
                           "i32")
        if kind == "fptosi":
            f = self.fval(exact=True)
            return self.op("cast", [f], "i32", ["fptosi", "f"])
        if kind == "ext":
            # Through i8/i16/i64 and back: truncation and both extensions.
            a = self.pick("i32")
            t = r.choice(["i8", "i16"])
            n = self.op("cast", [a], t, ["trunci", "i32"], keep=False)
            e = self.op("cast", [n], "i32", [r.choice(["extsi", "extui"]), t],
                        keep=False)
            w = self.op("cast", [e], "i64", ["extsi", "i32"], keep=False)
            c = self.const("i64", r.randint(-9, 9))
            s = self.op("bin", [w, c], "i64", r.choice(["addi", "muli"]),
                        keep=False)
            return self.op("cast", [s], "i32", ["trunci", "i64"])
        return self.const("i32", r.randint(-300, 300))

    def new_index(self):
        r = self.r
        kind = self.choose(["id", "id", "arith", "arith", "cast", "const",
                            "select", "dim"])
        if kind == "id":
            if self.chance(0.3):
                # A fresh id op inside the region (not only the prologue's).
                which = r.choice(["thread_id", "block_id", "block_dim",
                                  "grid_dim", "global_id"])
                return self.op("id", [], "index", [which, "x"], IMAX)
            return self.r.choice(self.ids)
        if kind == "arith":
            a = self.pick("index")
            name = r.choice(["addi", "muli", "divui", "remui", "maxui",
                             "minui", "subi"])
            if name == "addi":
                b = self.pick("index")
                return self.index_bounded(
                    self.op("bin", [a, b], "index", "addi",
                            a.bound + b.bound))
            if name == "subi":
                # max(a, b) - b >= 0
                b = self.pick("index")
                m = self.op("bin", [a, b], "index", "maxui",
                            max(a.bound, b.bound), keep=False)
                return self.op("bin", [m, b], "index", "subi", m.bound)
            if name in ("maxui", "minui"):
                b = self.pick("index")
                return self.op("bin", [a, b], "index", name,
                               max(a.bound, b.bound))
            c = self.const("index", r.randint(1, 9))
            if name == "muli":
                return self.index_bounded(
                    self.op("bin", [a, c], "index", "muli",
                            a.bound * c.bound))
            if name == "divui":
                return self.op("bin", [a, c], "index", "divui", a.bound)
            return self.op("bin", [a, c], "index", "remui", c.bound - 1)
        if kind == "cast":
            i = self.pick("i32")
            mask = self.const("i32", 255)
            m = self.op("bin", [i, mask], "i32", "andi", keep=False)
            return self.op("cast", [m], "index",
                           [r.choice(["index_cast", "index_castui"]), "i32"],
                           255)
        if kind == "select":
            c = self.new_cond()
            a, b = self.pick("index"), self.pick("index")
            return self.op("select", [c, a, b], "index", None,
                           max(a.bound, b.bound))
        if kind == "dim":
            buf = r.choice(self.kernel_buffers)
            return self.op("dim", [], "index", buf.name, IMAX)
        return self.const("index", r.randint(0, 12))

    def index_bounded(self, v):
        if v.bound <= IMAX:
            return v
        c = self.const("index", r_prime := self.r.choice([97, 61, 1021]))
        return self.op("bin", [v, c], "index", "remui", r_prime - 1)

    def new_cond(self):
        r = self.r
        kind = r.choice(["cmpi", "cmpi", "cmpindex", "cmpindex", "cmpf",
                         "logic", "bounds"])
        if kind == "cmpi":
            a, b = self.pick("i32"), self.pick("i32")
            return self.op("cmpi", [a, b], "i1", [r.choice(CMPI), "i32"])
        if kind == "cmpindex":
            a = self.pick("index")
            b = (self.pick("index") if self.chance(0.5)
                 else self.const("index", r.randint(0, 8)))
            return self.op("cmpi", [a, b], "i1", [r.choice(CMPI), "index"])
        if kind == "cmpf":
            a = self.fval(exact=True)
            b = (self.fval(exact=True) if self.chance(0.5)
                 else self.const("f", self.dyadic(1.0) + 1.0 / 64))
            return self.op("cmpf", [a, b], "i1", [r.choice(CMPF), "f"])
        if kind == "logic":
            a = self.pick("i1", make=False)
            if a is None:
                return self.new_cond_simple()
            b = self.new_cond_simple()
            return self.op("bin", [a, b], "i1", r.choice(["andi", "ori",
                                                         "xori"]))
        return self.bounds_check()

    def new_cond_simple(self):
        a, b = self.pick("index"), self.const("index", self.r.randint(0, 8))
        return self.op("cmpi", [a, b], "i1", [self.r.choice(CMPI), "index"])

    def bounds_check(self):
        n = self.scalar("index", "n")
        if n is None:
            return self.new_cond_simple()
        return self.op("cmpi", [self.lg, n], "i1", ["ult", "index"])

    def scalar(self, ty, prefix):
        for v in self.scope:
            if v.uniform and v.ty == ty and v.name.startswith("%" + prefix):
                return v
        return None

    # ------------------------------------------------------------ addresses
    def size_const(self, buf):
        return self.op("const", [], "index", "size:" + buf.name, keep=False,
                       prefix="c")

    def addr_any(self, buf):
        v = self.pick("index")
        if buf.role != "own" and v.bound < buf.size and self.chance(0.5):
            return v
        size = self.size_const(buf)
        return self.op("bin", [v, size], "index", "remui", keep=False)

    def addr_own(self, buf):
        base = self.lt if buf.space == "wg" else self.lg
        k = self.const("index", self.K)
        m = self.op("bin", [base, k], "index", "muli", keep=False)
        loop_ivs = [v for v in self.scope if v.name.startswith("%iv")]
        if loop_ivs and self.chance(0.3):
            iv = self.r.choice(loop_ivs)
            slot = self.op("bin", [iv, k], "index", "remui", keep=False)
        else:
            slot = self.const("index", self.r.randrange(self.K))
        return self.op("bin", [m, slot], "index", "addi", keep=False)

    # ---------------------------------------------------------- statements
    def loadable(self, ctx):
        out = []
        for b in self.kernel_buffers:
            mode = ctx.modes.get(b.name)
            if b.space == "global" and b.role in ("in", "own"):
                out.append(b)
            elif b.space == "wg" and b.role == "own" and mode in ("read",
                                                                   "write"):
                out.append(b)
            elif b.space == "wg" and b.role == "acc" and mode == "read":
                out.append(b)
        return out

    def load_value(self, elem, exact_only=False, ctx=None):
        ctx = ctx or self.ctx
        cands = [b for b in self.loadable(ctx) if b.elem == elem
                 and (not exact_only or b.exact)]
        if not cands:
            return None
        return self.load_from(self.r.choice(cands), ctx)

    def load_from(self, buf, ctx):
        mode = ctx.modes.get(buf.name)
        if buf.role == "own" and (buf.space == "global" or mode == "write"):
            idx = self.addr_own(buf)
        else:
            idx = self.addr_any(buf)
        name = self.fresh("l")
        self.emit(Load(name, buf.name, idx.name, buf.elem))
        if buf.elem == "i32":
            v = Val(name, "i32")
        elif buf.role == "in":
            v = Val(name, "f", 2.0, True)
        elif buf.role == "own":
            v = Val(name, "f", STB, buf.exact)
        elif buf.acc in ("maximumf", "minimumf"):
            v = Val(name, "f", STB + 4, buf.exact)
        else:   # workgroup addf: many contributions
            v = Val(name, "f", STB * self.max_contributions, buf.exact)
        self.scope.append(v)
        return self.squash(v, FMAX) if v.ty == "f" else v

    def gen_load(self, ctx):
        cands = self.loadable(ctx)
        if cands:
            self.load_from(self.r.choice(cands), ctx)

    def gen_store(self, ctx, prefer=None):
        cands = [b for b in self.kernel_buffers if b.role == "own" and
                 (b.space == "global" or ctx.modes.get(b.name) == "write")]
        if not cands:
            return
        buf = self.r.choice(cands)
        if buf.elem == "i32":
            val = self.pick("i32")
        else:
            if buf.exact:
                val = self.squash(self.fval(exact=True), STB)
            else:
                src = prefer if prefer is not None and prefer.ty == "f" \
                    else self.fval()
                val = self.squash(src, STB)
        self.store_own(buf, val)

    def store_own(self, buf, val):
        """Stores val to one of this thread's slots of buf; most of the time
        combined with the slot's old value, so that a later store to the slot
        does not hide this one."""
        idx = self.addr_own(buf)
        if self.chance(0.6):
            old = self.fresh("l")
            self.emit(Load(old, buf.name, idx.name, buf.elem))
            oldv = Val(old, buf.elem, STB, buf.exact)
            if buf.elem == "i32":
                val = self.op("bin", [oldv, val], "i32",
                              self.r.choice(["xori", "addi"]), keep=False)
            elif buf.exact:
                val = self.op("bin", [oldv, val], "f",
                              self.r.choice(["maximumf", "minimumf"]), STB,
                              True, keep=False)
            else:
                half = self.const("f", 0.5)
                h = self.op("bin", [oldv, half], "f", "mulf", STB / 2,
                            keep=False)
                q = self.squash(val, STB / 2)
                val = self.op("bin", [h, q], "f", "addf", STB, keep=False)
        self.emit(Store(val.name, buf.name, idx.name))

    def gen_atomic(self, ctx):
        cands = [b for b in self.kernel_buffers if b.role == "acc" and
                 (b.space == "global" or ctx.modes.get(b.name) == "atomic")]
        if not cands:
            return
        buf = self.r.choice(cands)
        if buf.elem == "i32":
            val = self.pick("i32")
        elif buf.exact and buf.acc == "addf":
            val = self.int_to_float(self.pick("i32"))
        elif buf.exact:
            val = self.squash(self.fval(exact=True), STB)
        else:
            val = self.squash(self.fval(), STB)
        idx = self.addr_any(buf)
        self.emit(Atomic(self.fresh("a"), buf.acc, val.name, buf.name,
                         idx.name, buf.elem))

    def gen_if(self, ctx, budget):
        cond = self.new_cond()
        nres = self.r.choice([0, 0, 1, 1, 2])
        tys = [self.r.choice(["f", "f", "i32"]) for _ in range(nres)]
        then, then_vals = self.region(lambda: self.gen_stmts(budget, ctx),
                                      tys, ctx=ctx)
        has_else = nres > 0 or self.chance(0.5)
        els, else_vals = ([], [])
        if has_else:
            els, else_vals = self.region(
                lambda: self.gen_stmts(max(1, budget // 2), ctx), tys,
                ctx=ctx)
        results = []
        for ty, a, b in zip(tys, then_vals, else_vals):
            name = self.fresh("r")
            results.append([name, ty])
            if ty == "f":
                self.scope.append(Val(name, "f", max(a.bound, b.bound),
                                      a.exact and b.exact))
            else:
                self.scope.append(Val(name, ty))
        self.emit(If(cond.name, results, then, [v.name for v in then_vals],
                     els, [v.name for v in else_vals]))

    def region(self, body, yield_tys, sink=True, ctx=None):
        """Runs body() in a nested region (generation context ctx); returns
        its statements and one value per yield type, picked at the end of
        the region."""
        saved_out, saved_scope = self.out, list(self.scope)
        saved_ctx = self.ctx
        if ctx is not None:
            self.ctx = ctx
        self.out = []
        body()
        if sink:
            self.sink(saved_scope)
        self.ctx = saved_ctx
        vals = []
        for ty in yield_tys:
            v = self.pick(ty)
            if ty == "f":
                v = self.squash(v, FMAX)
            vals.append(v)
        stmts = self.out
        self.out, self.scope = saved_out, saved_scope
        return stmts, vals

    def sink(self, outer_scope):
        """Makes the values this region defined and nothing used reach a
        buffer: floats summed (contracted) into an own float buffer or a
        float atomic, integers xor-ed into an int buffer or atomic."""
        outer = {v.name for v in outer_scope}
        used = all_uses(self.out)
        dead = [v for v in self.scope if v.name not in outer
                and v.name not in used and not v.uniform]
        ctx = self.ctx
        floats = [v for v in dead if v.ty == "f"][-5:]
        ints = [v for v in dead if v.ty in ("i32", "index", "i1")][-5:]
        if floats:
            acc = None
            for v in floats:
                q = self.squash(v, STB)
                acc = q if acc is None else self.squash(
                    self.op("bin", [acc, q], "f", "addf", acc.bound + q.bound,
                            keep=False), STB)
            self.sink_value(acc, ctx)
        if ints:
            acc = None
            for v in ints:
                if v.ty == "index":
                    v = self.op("cast", [v], "i32", ["index_cast", "index"],
                                keep=False)
                elif v.ty == "i1":
                    v = self.op("cast", [v], "i32", ["extui", "i1"],
                                keep=False)
                acc = v if acc is None else self.op(
                    "bin", [acc, v], "i32", "xori", keep=False)
            self.sink_value(acc, ctx)

    def sink_value(self, val, ctx):
        stores = [b for b in self.kernel_buffers if b.role == "own"
                  and b.elem == val.ty and not (b.elem == "f" and b.exact)
                  and (b.space == "global" or ctx.modes.get(b.name) == "write")]
        atomics = [b for b in self.kernel_buffers if b.role == "acc"
                   and b.elem == val.ty and not (b.elem == "f" and b.exact)
                   and (b.space == "global"
                        or ctx.modes.get(b.name) == "atomic")]
        if stores and (not atomics or self.chance(0.7)):
            self.store_own(self.r.choice(stores), val)
        elif atomics:
            buf = self.r.choice(atomics)
            self.emit(Atomic(self.fresh("a"), buf.acc, val.name, buf.name,
                             self.addr_any(buf).name, buf.elem))

    def trip_bounds(self, ctx, uniform):
        """lb, ub, step values and a bound on the trip count."""
        r = self.r
        lb_value = r.choice([0, 0, 0, 0, 0, 0, 1, 2, 5])
        step = self.const("index", r.choice([1, 1, 1, 2, 3]))
        ms = [v for v in self.scope if v.uniform and v.ty == "index"
              and v.name.startswith("%m")]
        choice = r.random()
        if uniform or choice < 0.4:
            if ms and self.chance(0.8):
                ub = r.choice(ms)
            else:
                ub = self.const("index", r.choice([0, 1, 2, 3, 4]))
        elif choice < 0.7:
            base = self.r.choice([self.lt, self.lg] + self.ids)
            c = self.const("index", r.choice([2, 3, 4, 5]))
            ub = self.op("bin", [base, c], "index", "remui", c.bound - 1,
                         keep=False)
        else:
            i = self.pick("i32")
            mask = self.const("i32", 7)
            m = self.op("bin", [i, mask], "i32", "andi", keep=False)
            ub = self.op("cast", [m], "index", ["index_cast", "i32"], 7,
                         keep=False)
        lb = self.const("index", lb_value)
        trips = max(0, int(ub.bound))
        return lb, ub, step, trips

    def gen_for(self, ctx, budget, phase_items=None):
        r = self.r
        lb, ub, step, trips = self.trip_bounds(ctx, phase_items is not None)
        iv = self.fresh("iv")
        # A uniform loop holding barriers may carry values across them too.
        niters = r.choice([0, 0, 1, 2] if phase_items is not None
                          else [0, 1, 1, 2])
        tys = [r.choice(["f", "f", "i32"]) for _ in range(niters)]
        inits = []
        for ty in tys:
            v = self.pick(ty)
            inits.append(self.squash(v, LOOPB) if ty == "f" else v)
        iter_names = [self.fresh("it") for _ in tys]

        def before():
            self.scope.append(Val(iv, "index", max(ub.bound, 1)))
            for name, ty in zip(iter_names, tys):
                self.scope.append(Val(name, ty, LOOPB))

        def body():
            if phase_items is not None:
                phase_items()
            else:
                self.gen_stmts(budget, ctx.nested(loop=True))

        body_stmts, vals = self.region(
            lambda: (before(), body(), self.loop_updates(iter_names, tys)),
            [], sink=phase_items is None, ctx=ctx.nested(loop=True))
        results = [self.fresh("r") for _ in tys]
        hint = None
        if self.diff and (phase_items is not None or self.chance(0.5)):
            hint = max(1, trips)
        self.emit(For(iv, lb.name, ub.name, step.name,
                      [[n, t, v.name] for n, t, v in zip(iter_names, tys,
                                                         inits)],
                      body_stmts, self.last_yields, results, hint,
                      phase_items is not None, max(1, trips)))
        for name, ty in zip(results, tys):
            self.scope.append(Val(name, ty, LOOPB))
        # Use the results (a zero-trip loop must give its inits).
        for name, ty in zip(results, tys):
            if self.chance(0.7):
                self.gen_store(ctx, prefer=Val(name, ty, LOOPB))

    def loop_updates(self, iter_names, tys):
        """Yields of a loop body: each carried value combined with a value of
        the body and contracted back to its bound."""
        yields = []
        for name, ty in zip(iter_names, tys):
            carried = Val(name, ty, LOOPB)
            if ty == "i32":
                v = self.pick("i32")
                y = self.op("bin", [carried, v], "i32",
                            self.r.choice(["addi", "xori", "muli", "maxsi"]))
                yields.append(y.name)
                continue
            v = self.fval()
            form = self.r.choice(["affine", "max", "replace"] if self.f64
                                 else ["affine", "max", "tanh", "replace"])
            if form == "affine":
                half = self.const("f", 0.5)
                a = self.op("bin", [carried, half], "f", "mulf", 2.0,
                            keep=False)
                q = self.squash(v, 2.0)
                y = self.op("bin", [a, q], "f", "addf", 4.0)
            elif form == "max":
                q = self.squash(v, LOOPB)
                y = self.op("bin", [carried, q], "f",
                            self.r.choice(["maximumf", "minimumf"]), LOOPB)
            elif form == "tanh":
                q = self.squash(v, 8.0)
                s = self.op("bin", [carried, q], "f", "addf", 12.0,
                            keep=False)
                t = self.op("un", [s], "f", "math.tanh", 1.0, keep=False)
                c = self.const("f", LOOPB)
                y = self.op("bin", [t, c], "f", "mulf", LOOPB)
            else:
                y = self.squash(v, LOOPB)
            yields.append(y.name)
        self.last_yields = yields

    def gen_stmts(self, budget, ctx):
        saved = getattr(self, "ctx", None)
        self.ctx = ctx
        while budget > 0:
            kinds = [("f", 30), ("i32", 10), ("index", 6), ("load", 12),
                     ("store", 14), ("atomic", 8), ("i1", 3)]
            depth_ok = budget >= 3
            if depth_ok:
                kinds += [("if", 7), ("for", 7 if ctx.loops < 2 else 0)]
            total = sum(w for _, w in kinds)
            x = self.r.uniform(0, total)
            for kind, w in kinds:
                x -= w
                if x <= 0:
                    break
            if kind == "f":
                self.new_f()
                budget -= 1
            elif kind == "i32":
                if self.diff and self.chance(0.5):
                    continue
                self.new_i32()
                budget -= 1
            elif kind == "index":
                self.new_index()
                budget -= 1
            elif kind == "i1":
                self.new_cond()
                budget -= 1
            elif kind == "load":
                self.gen_load(ctx)
                budget -= 1
            elif kind == "store":
                self.gen_store(ctx)
                budget -= 1
            elif kind == "atomic":
                self.gen_atomic(ctx)
                budget -= 1
            elif kind == "if":
                inner = self.r.randint(1, max(1, budget // 2))
                self.gen_if(ctx, inner)
                budget -= inner + 1
            else:
                inner = self.r.randint(1, max(1, budget // 2))
                self.gen_for(ctx, inner)
                budget -= inner + 1
        self.ctx = saved

    # ---------------------------------------------------------------- kernel
    def choose_launch(self):
        r = self.r
        dims = r.choice([1, 1, 1, 1, 2, 3])
        if dims == 1:
            block = [r.choice([1, 2, 3, 7, 16, 32, 33, 64, 64, 100, 128]), 1, 1]
        elif dims == 2:
            block = [r.choice([2, 4, 8, 16]), r.choice([1, 2, 3, 4]), 1]
        else:
            block = [r.choice([2, 4]), r.choice([2, 3]), r.choice([2, 3])]
        gdims = r.choice([1, 1, 1, 2])
        if gdims == 1:
            grid = [r.choice([1, 1, 2, 3, 4]), 1, 1]
        else:
            grid = [r.choice([1, 2]), r.choice([2, 3]), 1]
        return grid, block

    def generate(self):
        r = self.r
        self.diff = (self.force_diff if self.force_diff is not None
                     else self.chance(0.35))
        self.f64 = self.chance(0.15)
        grid, block = self.choose_launch()
        self.K = r.choice([1, 2, 2, 3, 4])
        B = block[0] * block[1] * block[2]
        T = B * grid[0] * grid[1] * grid[2]
        params = []
        bufs = []
        bufs.append(Buffer("%X0", "f", "in", "global",
                           r.randint(max(1, T // 2), 2 * T + 8)))
        if self.chance(0.4):
            bufs.append(Buffer("%X1", "f", "in", "global", r.randint(1, 40)))
        if self.chance(0.8 if not self.diff else 0.5):
            bufs.append(Buffer("%I0", "i32", "in", "global",
                               r.randint(1, 2 * T + 8)))
        bufs.append(Buffer("%Y0", "f", "own", "global", exact=False))
        if self.chance(0.4):
            bufs.append(Buffer("%Y1", "f", "own", "global",
                               exact=self.chance(0.5) and not self.diff))
        if not self.diff and self.chance(0.7):
            bufs.append(Buffer("%J0", "i32", "own", "global"))
        if self.chance(0.6):
            kinds = ["addf"] if self.diff else ["addf", "addf", "maximumf",
                                                "minimumf"]
            bufs.append(Buffer("%A0", "f", "acc", "global", r.randint(1, 4),
                               acc=r.choice(kinds), exact=False))
        if not self.diff and self.chance(0.5):
            bufs.append(Buffer("%B0", "i32", "acc", "global", r.randint(1, 4),
                               acc=r.choice(INT_ACC_KINDS)))
        wg = []
        if self.chance(0.7):
            wg.append(Buffer("%W0", "f", "own", "wg",
                             exact=self.chance(0.4) and not self.diff))
        if not self.diff and self.chance(0.3):
            wg.append(Buffer("%WI", "i32", "own", "wg"))
        if self.chance(0.45):
            kinds = (["addf", "maximumf", "minimumf"])
            kind = r.choice(kinds)
            wg.append(Buffer("%WA", "f", "acc", "wg", r.randint(1, 4),
                             acc=kind, exact=not self.diff))
        if not self.diff and self.chance(0.3):
            wg.append(Buffer("%WB", "i32", "acc", "wg", r.randint(1, 4),
                             acc=r.choice(INT_ACC_KINDS)))
        scalars = [Scalar("%n", "index",
                          r.choice([T, T, T - 1, max(0, T - 5), T // 2, 0])),
                   Scalar("%m0", "index", r.choice([0, 1, 1, 2, 3, 4, 5, 6])),
                   Scalar("%m1", "index", r.choice([0, 1, 2, 3, 5]))]
        if self.chance(0.5):
            scalars.append(Scalar("%s", "f", self.dyadic(2.0)))
        if self.chance(0.5):
            scalars.append(Scalar("%k", "i32", r.randint(-50, 50)))
        params = bufs + scalars
        r.shuffle(params)
        self.kernel_buffers = bufs + wg
        self.max_contributions = B * 256
        for s in scalars:
            if s.ty == "f":
                self.scope.append(Val(s.name, "f", abs(s.value), True, True))
            elif s.ty == "index":
                bound = s.value if s.name == "%n" else 6
                self.scope.append(Val(s.name, "index", bound, uniform=True))
            else:
                self.scope.append(Val(s.name, "i32", uniform=True))

        self.out = []
        body = self.out
        self.gen_prologue(grid, block)
        # Phase 0: every thread fills its tile slots, thread 0 the
        # accumulators; other statements see tiles in 'write' mode.
        modes = {b.name: ("write" if b.role == "own" else "none") for b in wg}
        self.ctx = Ctx(modes)
        for b in wg:
            if b.role == "own":
                for c in range(self.K):
                    self.init_tile_slot(b, c)
        first = self.op("cmpi", [self.lt, self.const("index", 0)], "i1",
                        ["eq", "index"], keep=False)
        inits = [b for b in wg if b.role == "acc"]
        if inits:
            then, _ = self.region(lambda: [self.init_acc(b) for b in inits],
                                  [])
            self.emit(If(first.name, [], then, [], [], [], keep=True))
        self.gen_phase(Ctx(modes))
        items = r.choice([0, 1, 1, 2, 2, 3])
        for _ in range(items):
            self.emit(Barrier())
            if self.chance(0.4):
                self.gen_phase_loop(wg)
            else:
                self.gen_phase(Ctx(self.random_modes(wg)))
        if self.diff and wg and not isinstance(body[-1], Barrier):
            self.emit(Barrier())
        return Kernel(params, wg, grid, block, self.K, body, self.diff,
                      r.randrange(2 ** 31), self.seed,
                      "f64" if self.f64 else "f32",
                      r.choice(["kernel_adjoint", "autodiff"]))

    def random_modes(self, wg, fixed=None):
        """Modes of the workgroup buffers in one phase. In differentiable
        kernels a float min/max accumulator is never atomically updated
        after a phase read it: reverse mode finds the winners from the final
        value and refuses a read between same-kind atomics (docs/AD.md, seed
        1026). `fixed` holds the modes a loop of phases keeps throughout."""
        modes = {}
        for b in wg:
            if b.role == "own":
                modes[b.name] = self.r.choice(["read", "write"])
            elif fixed and b.name in fixed:
                modes[b.name] = fixed[b.name]
            elif b.name in self.minmax_read:
                modes[b.name] = "read"
            else:
                modes[b.name] = self.r.choice(["atomic", "atomic", "read"])
            if self.is_minmax_acc(b) and modes[b.name] == "read":
                self.minmax_read.add(b.name)
        return modes

    def is_minmax_acc(self, b):
        return (self.diff and b.role == "acc"
                and b.acc in ("maximumf", "minimumf"))

    def gen_phase(self, ctx):
        self.phase_scope = list(self.scope)
        self.ctx = ctx
        budget = max(2, int(self.r.randint(4, 14) * self.budget_scale))
        if self.chance(0.35):
            cond = self.bounds_check()
            then, _ = self.region(lambda: self.gen_stmts(budget, ctx), [])
            self.emit(If(cond.name, [], then, [], [], []))
        else:
            self.gen_stmts(budget, ctx)
        # Keep the phase's last values alive.
        self.sink(self.phase_scope)

    def gen_phase_loop(self, wg):
        phases = self.r.choice([1, 2, 2])

        # A loop repeats its phases: a min/max accumulator is either only
        # read or only updated in it (see random_modes).
        fixed = {b.name: ("read" if b.name in self.minmax_read else
                          self.r.choice(["atomic", "atomic", "read"]))
                 for b in wg if self.is_minmax_acc(b)}

        def items():
            for p in range(phases):
                self.gen_phase(Ctx(self.random_modes(wg, fixed)))
                self.emit(Barrier())

        self.gen_for(Ctx({}), 0, phase_items=items)

    def init_tile_slot(self, buf, c):
        idx_base = self.const("index", self.K)
        m = self.op("bin", [self.lt, idx_base], "index", "muli", keep=False)
        cc = self.const("index", c)
        idx = self.op("bin", [m, cc], "index", "addi", keep=False)
        if buf.elem == "i32":
            val = self.pick("i32")
        else:
            x = self.load_value("f", exact_only=True,
                                ctx=Ctx({buf.name: "none"}))
            if x is None:
                x = self.const("f", self.dyadic(2.0))
            val = x if buf.exact else self.squash(self.fval(), STB)
            val = self.squash(val, STB)
        self.emit(Store(val.name, buf.name, idx.name, keep=True))

    def init_acc(self, buf):
        for slot in range(buf.size):
            idx = self.const("index", slot)
            if buf.elem == "i32":
                val = self.const("i32", INT_ACC_INIT[buf.acc])
            elif buf.acc == "addf":
                val = self.const("f", self.dyadic(1.0))
            elif buf.acc == "maximumf":
                val = self.const("f", -self.r.choice([1.0, 2.0, 8.0]))
            else:
                val = self.const("f", self.r.choice([1.0, 2.0, 8.0]))
            self.emit(Store(val.name, buf.name, idx.name, keep=True))

    def gen_prologue(self, grid, block):
        ids = []
        names = {}
        for which in ("thread_id", "block_id", "block_dim", "grid_dim"):
            for d in "xyz":
                size = block if which in ("thread_id", "block_dim") else grid
                k = "xyz".index(d)
                bound = size[k] if "dim" in which else size[k] - 1
                v = self.op("id", [], "index", [which, d], max(bound, 0))
                names[which + d] = v
                ids.append(v)
        g = self.op("id", [], "index", ["global_id", "x"],
                    grid[0] * block[0] - 1)
        ids.append(g)
        bd = [names["block_dim" + d] for d in "xyz"]
        gd = [names["grid_dim" + d] for d in "xyz"]
        B = block[0] * block[1] * block[2]
        T = B * grid[0] * grid[1] * grid[2]
        # lt = tx + bdx * (ty + bdy * tz)
        t = self.op("bin", [bd[1], names["thread_idz"]], "index", "muli",
                    keep=False)
        t = self.op("bin", [names["thread_idy"], t], "index", "addi",
                    keep=False)
        t = self.op("bin", [bd[0], t], "index", "muli", keep=False)
        self.lt = self.op("bin", [names["thread_idx"], t], "index", "addi",
                          B - 1)
        b = self.op("bin", [gd[1], names["block_idz"]], "index", "muli",
                    keep=False)
        b = self.op("bin", [names["block_idy"], b], "index", "addi",
                    keep=False)
        b = self.op("bin", [gd[0], b], "index", "muli", keep=False)
        lb = self.op("bin", [names["block_idx"], b], "index", "addi",
                     keep=False)
        nt = self.op("bin", [bd[0], bd[1]], "index", "muli", keep=False)
        nt = self.op("bin", [nt, bd[2]], "index", "muli", keep=False)
        m = self.op("bin", [lb, nt], "index", "muli", keep=False)
        self.lg = self.op("bin", [m, self.lt], "index", "addi", T - 1)
        self.ids = ids + [self.lt, self.lg]


def generate(seed, diff=None, size="normal", known_failures=False):
    return Generator(seed, diff, size, known_failures).generate()
