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
#
# The generator is split by concept: gen_base.py (bounds, state, basics),
# gen_values.py (values and addresses), gen_stmts.py (memory accesses and
# control flow), this file (launch shape, buffers, phases, the kernel).
# ===----------------------------------------------------------------------=== #
from kernel_ast import Barrier, Buffer, If, Kernel, Scalar, Store
from gen_base import INT_ACC_INIT, INT_ACC_KINDS, STB, Ctx, Val
from gen_stmts import StmtGen
from gen_values import ValueGen


class Generator(StmtGen, ValueGen):
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
