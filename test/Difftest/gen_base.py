# ===- gen_base.py - Shared state of the random kernel generator -------=== #
#
# The bounds and constants of gen.py's invariants (see its header), the
# value and context records, and GenBase: the generator's state and the
# basic operations (fresh names, emitting, picking values in scope) that
# the value (gen_values.py), statement (gen_stmts.py) and kernel (gen.py)
# parts build on.
# ===----------------------------------------------------------------------=== #
import math
import random
from dataclasses import dataclass

from kernel_ast import Op

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
# documented limit, Targets.md; a located error, class gpu-unsupported).
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


class GenBase:
    """The generator's state (random stream, scope of values, statements
    emitted) and the operations every part uses."""

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
