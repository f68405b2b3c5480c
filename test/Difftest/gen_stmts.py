# ===- gen_stmts.py - Random statements of the kernel generator --------=== #
#
# StmtGen: loads, stores and atomics that respect each buffer's mode in the
# current phase, scf.if and scf.for (run-time and zero trip counts,
# iter_args, values sunk out of regions) and statement lists.
# ===----------------------------------------------------------------------=== #
from kernel_ast import Atomic, For, If, Load, Store, all_uses
from gen_base import FMAX, LOOPB, STB, GenBase, Val


class StmtGen(GenBase):
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
