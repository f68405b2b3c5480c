# ===- gen_values.py - Random values of the kernel generator -----------=== #
#
# ValueGen: float, integer, index and condition values with the bounds and
# exactness that keep kernels well-conditioned and deterministic (gen.py's
# header), and the addresses of buffer slots.
# ===----------------------------------------------------------------------=== #
import math

from gen_base import CMPF, CMPI, FMAX, IMAX, GenBase, pow2_at_least


class ValueGen(GenBase):
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
