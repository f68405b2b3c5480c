# ===- emit.py - Print a random kernel for the GPU and for the host ------=== #
#
# gpu_module(k): the kernel as Nabla's target-neutral input (a gpu.func in a
# gpu.module, memref<?xT> parameters, workgroup attributions), plus
# `nabla.kernel_adjoint @k -> @dk` when k.diff.
#
# host_module(k, inputs, ...): the same computation as a host program for
# upstream mlir-opt + mlir-runner, sharing nothing with Nabla's pipelines.
# Threads become loops: for each block (in order), every barrier-separated
# phase is its own loop nest over the block's threads; workgroup memory is an
# allocation per block; per-thread values that live across a barrier are
# kept in per-thread host arrays ("spills"); uniform loops holding barriers
# stay loops around the phases. Atomics become plain read-modify-writes (the
# host runs one thread at a time); a float add atomic also adds |value| into
# a host-only magnitude buffer that bounds its rounding error. The body is
# emitted twice, with f32 and with f64 floats; main() runs both, prints every
# buffer as bit patterns (printMemrefI32/I64, exact), and for differentiable
# kernels central finite differences in f64 of <M(x), w> for every element
# of every float buffer.
# ===----------------------------------------------------------------------=== #
from kernel_ast import (Atomic, Barrier, Buffer, For, If, Load, Op, Store,
                        defs, uses, walk)

HOST_ATOMIC = {"addf": "addf", "maximumf": "maximumf", "minimumf": "minimumf",
               "addi": "addi", "maxs": "maxsi", "mins": "minsi",
               "maxu": "maxui", "minu": "minui", "andi": "andi", "ori": "ori"}
FD_EPS = 1e-6


def fmt_float(v):
    r = repr(float(v))
    if "e" in r or "inf" in r or "nan" in r:
        return f"{float(v):.17e}"
    return r if "." in r else r + ".0"


class Printer:
    """Prints statements for one side ('gpu' or 'host') and float type."""

    def __init__(self, kernel, side, F="f32"):
        self.k = kernel
        self.side = side
        self.F = F
        self.lines = []
        self.n = 0

    def fresh(self, p):
        self.n += 1
        return f"%H_{p}{self.n}"

    def ty(self, t):
        return self.F if t == "f" else t

    def mt(self, name):
        buf = self.k.buffer(name)
        elem = self.ty(buf.elem)
        if buf.space == "wg":
            size = self.k.size(buf)
            if self.side == "gpu":
                return f"memref<{size}x{elem}, #gpu.address_space<workgroup>>"
            return f"memref<{size}x{elem}>"
        return f"memref<?x{elem}>"

    def line(self, depth, text):
        self.lines.append("  " * depth + text)

    def const_value(self, o):
        v = o.attr
        if isinstance(v, str) and v.startswith("size:"):
            return str(self.k.size(self.k.buffer(v[5:])))
        if o.ty == "f":
            return fmt_float(v)
        if o.ty == "i1":
            return "true" if v else "false"
        return str(int(v))

    def op(self, o, d):
        T = self.ty(o.ty)
        a = o.args
        if o.kind == "const":
            self.line(d, f"{o.res} = arith.constant {self.const_value(o)} "
                         f": {T}")
        elif o.kind == "bin":
            self.line(d, f"{o.res} = arith.{o.attr} {a[0]}, {a[1]} : {T}")
        elif o.kind == "un":
            self.line(d, f"{o.res} = {o.attr} {a[0]} : {T}")
        elif o.kind == "math2":
            self.line(d, f"{o.res} = math.{o.attr} {a[0]}, {a[1]} : {T}")
        elif o.kind == "fma":
            self.line(d, f"{o.res} = math.fma {a[0]}, {a[1]}, {a[2]} : {T}")
        elif o.kind == "fpowi":
            self.line(d, f"{o.res} = math.fpowi {a[0]}, {a[1]} : {T}, i32")
        elif o.kind in ("cmpi", "cmpf"):
            pred, oty = o.attr
            self.line(d, f"{o.res} = arith.{o.kind} {pred}, {a[0]}, {a[1]} "
                         f": {self.ty(oty)}")
        elif o.kind == "select":
            self.line(d, f"{o.res} = arith.select {a[0]}, {a[1]}, {a[2]} : {T}")
        elif o.kind == "cast":
            name, from_ty = o.attr
            self.line(d, f"{o.res} = arith.{name} {a[0]} : {self.ty(from_ty)} "
                         f"to {T}")
        elif o.kind == "id":
            which, dim = o.attr
            if self.side == "gpu":
                self.line(d, f"{o.res} = gpu.{which} {dim}")
            else:
                self.line(d, f"{o.res} = arith.addi %H_{which}_{dim}, %czero "
                             f": index")
        elif o.kind == "dim":
            self.line(d, f"{o.res} = memref.dim {o.attr}, %czero : "
                         f"{self.mt(o.attr)}")
        elif o.kind == "alias":
            self.line(d, f"{o.res} = arith.select %ctrue, {a[0]}, {a[0]} : {T}")
        else:
            raise ValueError(o.kind)

    def stmts(self, stmts, d):
        for s in stmts:
            self.stmt(s, d)

    def stmt(self, s, d):
        if isinstance(s, Op):
            self.op(s, d)
        elif isinstance(s, Load):
            self.line(d, f"{s.res} = memref.load {s.buf}[{s.idx}] : "
                         f"{self.mt(s.buf)}")
        elif isinstance(s, Store):
            self.line(d, f"memref.store {s.val}, {s.buf}[{s.idx}] : "
                         f"{self.mt(s.buf)}")
        elif isinstance(s, Atomic):
            self.atomic(s, d)
        elif isinstance(s, If):
            self.if_(s, d)
        elif isinstance(s, For):
            self.for_(s, d)
        elif isinstance(s, Barrier):
            assert self.side == "gpu", "barrier inside a host phase"
            self.line(d, "gpu.barrier")
        else:
            raise ValueError(s)

    def atomic(self, s, d):
        E = self.ty(s.ty)
        mt = self.mt(s.buf)
        if self.side == "gpu":
            self.line(d, f"{s.res} = memref.atomic_rmw {s.kind} {s.val}, "
                         f"{s.buf}[{s.idx}] : ({E}, {mt}) -> {E}")
            return
        old, new = s.res + "_old", s.res + "_new"
        self.line(d, f"{old} = memref.load {s.buf}[{s.idx}] : {mt}")
        self.line(d, f"{new} = arith.{HOST_ATOMIC[s.kind]} {old}, {s.val} "
                     f": {E}")
        self.line(d, f"memref.store {new}, {s.buf}[{s.idx}] : {mt}")
        buf = self.k.buffer(s.buf)
        if buf.space == "global" and s.kind == "addf":
            mag = "%MAG_" + s.buf[1:]
            self.line(d, f"{s.res}_abs = math.absf {s.val} : {E}")
            self.line(d, f"{s.res}_m0 = memref.load {mag}[{s.idx}] : {mt}")
            self.line(d, f"{s.res}_m1 = arith.addf {s.res}_m0, {s.res}_abs "
                         f": {E}")
            self.line(d, f"memref.store {s.res}_m1, {mag}[{s.idx}] : {mt}")

    def results_prefix(self, names):
        return (", ".join(names) + " = ") if names else ""

    def if_(self, s, d):
        names = [r[0] for r in s.results]
        tys = [self.ty(r[1]) for r in s.results]
        arrow = f" -> ({', '.join(tys)})" if tys else ""
        self.line(d, f"{self.results_prefix(names)}scf.if {s.cond}{arrow} {{")
        self.stmts(s.then, d + 1)
        if tys:
            self.line(d + 1, f"scf.yield {', '.join(s.then_yield)} : "
                             f"{', '.join(tys)}")
        if s.els or tys:
            self.line(d, "} else {")
            self.stmts(s.els, d + 1)
            if tys:
                self.line(d + 1, f"scf.yield {', '.join(s.else_yield)} : "
                                 f"{', '.join(tys)}")
        self.line(d, "}")

    def for_(self, s, d, bounds=None):
        lb, ub, step = bounds or (s.lb, s.ub, s.step)
        tys = [self.ty(it[1]) for it in s.iters]
        iters = ""
        if s.iters:
            iters = (" iter_args(" + ", ".join(f"{it[0]} = {it[2]}"
                                                for it in s.iters)
                     + f") -> ({', '.join(tys)})")
        self.line(d, f"{self.results_prefix(s.results)}scf.for {s.iv} = {lb} "
                     f"to {ub} step {step}{iters} {{")
        self.stmts(s.body, d + 1)
        if tys:
            self.line(d + 1, f"scf.yield {', '.join(s.yields)} : "
                             f"{', '.join(tys)}")
        hint = ""
        if self.side == "gpu" and s.hint is not None:
            hint = f" {{nabla.max_trip_count = {s.hint} : i64}}"
        self.line(d, "}" + hint)


def gpu_signature(k):
    out = []
    for p in k.params:
        if isinstance(p, Buffer):
            t = f"memref<?x{k.fty if p.elem == 'f' else 'i32'}>"
        else:
            t = k.fty if p.ty == "f" else p.ty
        out.append(f"{p.name}: {t}")
    return out


def gpu_module(k, kernel_name="k"):
    """The kernel (and, if k.diff, its gradient kernel d<name>) for Nabla.
    k.ad_form 'kernel_adjoint': `nabla.kernel_adjoint @k -> @dk`; 'autodiff':
    the body is a device function @f (workgroup buffers as parameters),
    @k calls it, and @dk zeroes shadow attributions for the float workgroup
    buffers, then requests `nabla.autodiff @f`; @tk likewise with
    `nabla.fwddiff @f` (forward mode)."""
    p = Printer(k, "gpu", k.fty)
    params = gpu_signature(k)
    wg_params = [f"{b.name}: {p.mt(b.name)}" for b in k.wg]
    wg = ""
    if k.wg:
        wg = " workgroup(" + ", ".join(wg_params) + ")"
    autodiff = k.diff and k.ad_form == "autodiff"
    p.line(0, "module attributes {gpu.container_module} {")
    p.line(1, "gpu.module @m {")
    if autodiff:
        p.line(2, f"func.func @f({', '.join(params + wg_params)}) {{")
        prelude(p, 3)
        p.stmts(k.body, 3)
        p.line(3, "return")
        p.line(2, "}")
        names = [q.name for q in k.params] + [b.name for b in k.wg]
        types = [x.split(": ", 1)[1] for x in params + wg_params]
        p.line(2, f"gpu.func @{kernel_name}({', '.join(params)}){wg} kernel {{")
        p.line(3, f"func.call @f({', '.join(names)}) : "
                  f"({', '.join(types)}) -> ()")
        p.line(3, "gpu.return")
        p.line(2, "}")
        autodiff_kernel(p, k, kernel_name, "autodiff", "d")
        autodiff_kernel(p, k, kernel_name, "fwddiff", "t")
    else:
        p.line(2, f"gpu.func @{kernel_name}({', '.join(params)}){wg} kernel {{")
        prelude(p, 3)
        p.stmts(k.body, 3)
        p.line(3, "gpu.return")
        p.line(2, "}")
        if k.diff:
            acts = ", ".join("#nabla.activity<dup>" if is_dup(q)
                             else "#nabla.activity<const>" for q in k.params)
            p.line(2, f"nabla.kernel_adjoint @{kernel_name} -> "
                      f"@d{kernel_name} {{activity = [{acts}]}}")
    p.line(1, "}")
    p.line(0, "}")
    return "\n".join(p.lines) + "\n"


def autodiff_kernel(p, k, kernel_name, op, prefix):
    """@dk (op 'autodiff') or @tk ('fwddiff'): zeroes the workgroup shadows,
    then nabla.<op> @f."""
    params, args, types, acts = [], [], [], []
    for q, sig in zip(k.params, gpu_signature(k)):
        ty = sig.split(": ", 1)[1]
        params.append(sig)
        args.append(q.name)
        types.append(ty)
        if is_dup(q):
            params.append(f"%d{q.name[1:]}: {ty}")
            args.append(f"%d{q.name[1:]}")
            types.append(ty)
            acts.append("#nabla.activity<dup>")
        else:
            acts.append("#nabla.activity<const>")
    attributions = []
    for b in k.wg:
        ty = p.mt(b.name)
        attributions.append(f"{b.name}: {ty}")
        args.append(b.name)
        types.append(ty)
        if b.elem == "f":
            attributions.append(f"%d{b.name[1:]}: {ty}")
            args.append(f"%d{b.name[1:]}")
            types.append(ty)
            acts.append("#nabla.activity<dup>")
        else:
            acts.append("#nabla.activity<const>")
    wg = f" workgroup({', '.join(attributions)})" if attributions else ""
    p.line(2, f"gpu.func @{prefix}{kernel_name}({', '.join(params)}){wg} "
              f"kernel {{")
    shadows = [b for b in k.wg if b.elem == "f"]
    if shadows:
        # Thread t zeroes elements t, t + T, ... of every shadow (T threads
        # in the block), then a barrier.
        d = 3
        p.line(d, "%zero_z = arith.constant 0.0 : " + k.fty)
        p.line(d, "%zero_tx = gpu.thread_id x")
        p.line(d, "%zero_ty = gpu.thread_id y")
        p.line(d, "%zero_tz = gpu.thread_id z")
        p.line(d, "%zero_bx = gpu.block_dim x")
        p.line(d, "%zero_by = gpu.block_dim y")
        p.line(d, "%zero_bz = gpu.block_dim z")
        p.line(d, "%zero_t0 = arith.muli %zero_by, %zero_tz : index")
        p.line(d, "%zero_t1 = arith.addi %zero_ty, %zero_t0 : index")
        p.line(d, "%zero_t2 = arith.muli %zero_bx, %zero_t1 : index")
        p.line(d, "%zero_t = arith.addi %zero_tx, %zero_t2 : index")
        p.line(d, "%zero_n0 = arith.muli %zero_bx, %zero_by : index")
        p.line(d, "%zero_n = arith.muli %zero_n0, %zero_bz : index")
        for b in shadows:
            short = b.name[1:]
            p.line(d, f"%zero_size_{short} = arith.constant {k.size(b)} "
                      f": index")
            p.line(d, f"scf.for %zero_i_{short} = %zero_t to "
                      f"%zero_size_{short} step %zero_n {{")
            p.line(d + 1, f"memref.store %zero_z, %d{short}[%zero_i_{short}] "
                          f": {p.mt(b.name)}")
            p.line(d, "}")
        p.line(d, "gpu.barrier")
    p.line(3, f"nabla.{op} @f({', '.join(args)}) {{activity = "
              f"[{', '.join(acts)}], ret_activity = []}} : "
              f"({', '.join(types)}) -> ()")
    p.line(3, "gpu.return")
    p.line(2, "}")


def is_dup(param):
    return isinstance(param, Buffer) and param.elem == "f"


def prelude(p, d):
    """Names every printed body may use: %czero, %ctrue, %u0..%u3."""
    p.line(d, "%czero = arith.constant 0 : index")
    p.line(d, "%ctrue = arith.constant true")
    for i in range(4):
        p.line(d, f"%u{i} = arith.constant {i} : index")


# ------------------------------------------------------------------ host side
def type_table(k):
    types = {}
    for s in walk(k.body):
        if isinstance(s, (Op, Load)):
            types[s.res] = s.ty
        elif isinstance(s, If):
            for name, ty in s.results:
                types[name] = ty
        elif isinstance(s, For):
            types[s.iv] = "index"
            for (name, ty, _), res in zip(s.iters, s.results):
                types[name] = ty
                types[res] = ty
    return types


def segments(stmts):
    """Top-level items: ('phase', stmts) between barriers, ('loop', For)."""
    items, cur = [], []
    for s in stmts:
        if isinstance(s, Barrier):
            items.append(("phase", cur))
            cur = []
        elif isinstance(s, For) and s.phase:
            items.append(("phase", cur))
            items.append(("loop", s))
            cur = []
        else:
            cur.append(s)
    items.append(("phase", cur))
    return [it for it in items if it[0] == "loop" or it[1]]


def all_phases(stmts):
    for kind, item in segments(stmts):
        if kind == "phase":
            yield item
        else:
            yield from all_phases(item.body)


def phase_free_vars(stmts):
    defined, used = set(), set()
    for s in walk(stmts):
        defined.update(defs(s))
        if isinstance(s, For):
            defined.add(s.iv)
            defined.update(it[0] for it in s.iters)
        used.update(uses(s))
    return used - defined


def uniform_names(k):
    names = {"%czero", "%ctrue", "%u0", "%u1", "%u2", "%u3"}
    names.update(p.name for p in k.params)
    names.update(b.name for b in k.wg)
    for s in walk(k.body):
        if isinstance(s, For) and s.phase:
            names.add(s.iv)
    return names


class HostPrinter(Printer):
    def __init__(self, kernel, F):
        super().__init__(kernel, "host", F)
        self.types = type_table(kernel)
        uniform = uniform_names(kernel)
        self.spilled = set()
        for ph in all_phases(kernel.body):
            self.spilled |= phase_free_vars(ph) - uniform
        # Values a uniform loop carries across its barriers live in spills
        # too: its inits, yields, iter_args and results.
        for s in walk(kernel.body):
            if isinstance(s, For) and s.phase and s.iters:
                self.spilled |= ({it[2] for it in s.iters} | set(s.yields)
                                 | {it[0] for it in s.iters}
                                 | set(s.results)) - uniform
        self.spilled = sorted(self.spilled)
        self.consts = {s.res: s for s in walk(kernel.body)
                       if isinstance(s, Op) and s.kind == "const"}

    def spill_ty(self, name):
        t = self.types[name]
        return "i32" if t == "i1" else self.ty(t)

    def compute(self, name):
        k = self.k
        args = []
        for p in k.params:
            if isinstance(p, Buffer):
                args.append(f"{p.name}: memref<?x{self.ty(p.elem)}>")
            else:
                args.append(f"{p.name}: {self.ty(p.ty)}")
        for b in mag_buffers(k):
            args.append(f"%MAG_{b.name[1:]}: memref<?x{self.F}>")
        self.line(1, f"func.func @{name}({', '.join(args)}) {{")
        prelude(self, 2)
        self.line(2, "%H_one = arith.constant 1 : index")
        for which, dims in (("block_dim", k.block), ("grid_dim", k.grid)):
            for d, v in zip("xyz", dims):
                self.line(2, f"%H_{which}_{d} = arith.constant {v} : index")
        for b in k.wg:
            self.line(2, f"%H_size_{b.name[1:]} = arith.constant "
                         f"{k.size(b)} : index")
        d = 2
        for dim in "zyx":
            self.line(d, f"scf.for %H_block_id_{dim} = %czero to "
                         f"%H_grid_dim_{dim} step %H_one {{")
            d += 1
        for b in k.wg:
            self.line(d, f"{b.name} = memref.alloc() : {self.mt(b.name)}")
            # Workgroup memory starts undefined: poison it (NaN, or a
            # sentinel integer) so that a read before the first write shows.
            poison = {"f32": "0x7FC00000 : f32",
                      "f64": "0x7FF8000000000000 : f64"}.get(
                          self.ty(b.elem), "-559038737 : i32")
            self.line(d, f"%H_poison_{b.name[1:]} = arith.constant {poison}")
            self.line(d, f"scf.for %H_p_{b.name[1:]} = %czero to "
                         f"%H_size_{b.name[1:]} step %H_one {{")
            self.line(d + 1, f"memref.store %H_poison_{b.name[1:]}, "
                             f"{b.name}[%H_p_{b.name[1:]}] : "
                             f"{self.mt(b.name)}")
            self.line(d, "}")
        B = k.threads_per_block
        for name in self.spilled:
            self.line(d, f"%S{name[1:]} = memref.alloc() : "
                         f"memref<{B}x{self.spill_ty(name)}>")
        self.items(k.body, d)
        for b in k.wg:
            self.line(d, f"memref.dealloc {b.name} : {self.mt(b.name)}")
        for name in self.spilled:
            self.line(d, f"memref.dealloc %S{name[1:]} : "
                         f"memref<{B}x{self.spill_ty(name)}>")
        for _ in range(3):
            d -= 1
            self.line(d, "}")
        self.line(2, "return")
        self.line(1, "}")

    def items(self, stmts, d):
        for kind, item in segments(stmts):
            if kind == "phase":
                self.phase(item, d)
            else:
                bounds = []
                for name in (item.lb, item.ub, item.step):
                    if name in self.consts:
                        fresh = self.fresh("b")
                        self.line(d, f"{fresh} = arith.constant "
                                     f"{self.const_value(self.consts[name])} "
                                     f": index")
                        name = fresh
                    bounds.append(name)
                # Carried values: inits into the iter_args' spills before the
                # loop, yields after each iteration, results after the loop.
                self.copy_spills(d, [(it[0], it[2]) for it in item.iters])
                self.line(d, f"scf.for {item.iv} = {bounds[0]} to {bounds[1]} "
                             f"step {bounds[2]} {{")
                self.items(item.body, d + 1)
                self.copy_spills(d + 1, [(it[0], y) for it, y in
                                         zip(item.iters, item.yields)])
                self.line(d, "}")
                self.copy_spills(d, [(r, it[0]) for r, it in
                                     zip(item.results, item.iters)])

    def copy_spills(self, d, pairs):
        """For every thread: spill[dst] = value of src (a spill or a
        uniform name), all at once (yields may swap iter_args)."""
        if not pairs:
            return
        B = self.k.threads_per_block
        d = self.open_threads(d)
        values = []
        for dst, src in pairs:
            value = src
            if src in self.spilled:
                value = self.fresh("cp")
                self.line(d, f"{value} = memref.load %S{src[1:]}[%H_lt] : "
                             f"memref<{B}x{self.spill_ty(dst)}>")
            values.append(value)
        for (dst, src), value in zip(pairs, values):
            self.line(d, f"memref.store {value}, %S{dst[1:]}[%H_lt] : "
                         f"memref<{B}x{self.spill_ty(dst)}>")
        self.close_threads(d)

    def open_threads(self, d):
        for dim in "zyx":
            self.line(d, f"scf.for %H_thread_id_{dim} = %czero to "
                         f"%H_block_dim_{dim} step %H_one {{")
            d += 1
        self.line(d, "%H_t0 = arith.muli %H_block_dim_y, %H_thread_id_z "
                     ": index")
        self.line(d, "%H_t1 = arith.addi %H_thread_id_y, %H_t0 : index")
        self.line(d, "%H_t2 = arith.muli %H_block_dim_x, %H_t1 : index")
        self.line(d, "%H_lt = arith.addi %H_thread_id_x, %H_t2 : index")
        return d

    def close_threads(self, d):
        for _ in range(3):
            d -= 1
            self.line(d, "}")

    def phase(self, stmts, d):
        k = self.k
        B = k.threads_per_block
        d = self.open_threads(d)
        # Global id x, as the GPU has it.
        self.line(d, "%H_g0 = arith.muli %H_block_id_x, %H_block_dim_x : index")
        self.line(d, "%H_global_id_x = arith.addi %H_g0, %H_thread_id_x "
                     ": index")
        free = phase_free_vars(stmts)
        for name in self.spilled:
            if name not in free:
                continue
            t = self.spill_ty(name)
            if self.types[name] == "i1":
                self.line(d, f"{name}_w = memref.load %S{name[1:]}[%H_lt] : "
                             f"memref<{B}xi32>")
                self.line(d, f"{name} = arith.trunci {name}_w : i32 to i1")
            else:
                self.line(d, f"{name} = memref.load %S{name[1:]}[%H_lt] : "
                             f"memref<{B}x{t}>")
        self.stmts(stmts, d)
        for s in stmts:
            for name in defs(s):
                if name not in self.spilled:
                    continue
                t = self.spill_ty(name)
                value = name
                if self.types[name] == "i1":
                    value = name + "_ext"
                    self.line(d, f"{value} = arith.extui {name} : i1 to i32")
                self.line(d, f"memref.store {value}, %S{name[1:]}[%H_lt] : "
                             f"memref<{B}x{t}>")
        for _ in range(3):
            d -= 1
            self.line(d, "}")


def mag_buffers(k):
    return [b for b in k.buffers()
            if b.role == "acc" and b.elem == "f" and b.acc == "addf"]


def dense(arr):
    return f'dense<"0x{arr.tobytes().hex().upper()}">'


def host_module(k, inputs, weights=None, tangents=None):
    """The host program. `inputs`: initial contents of every buffer parameter
    (numpy arrays of the kernel's float type or i32, by name); `weights`: the
    cotangents w of the float buffers (given for differentiable kernels:
    main then prints the finite differences). Returns (text, list of printed
    outputs in order as (tag, buffer, element type)): tag 'lo' is the run in
    the kernel's float type, 'hi' the run in f64, 'mag' the magnitudes of
    float atomic adds, 'fd' the finite differences of <M(x), w>, 'jvp'
    those of M(x) along the tangents v (given for forward mode)."""
    lines = ["module {",
             "  func.func private @printMemrefI32(memref<*xi32>)",
             "  func.func private @printMemrefI64(memref<*xi64>)"]
    bufs = k.buffers()
    for b in bufs:
        a = inputs[b.name]
        lines.append(f'  memref.global "private" constant @in_{b.name[1:]} : '
                     f"memref<{a.size}x{k.fty if b.elem == 'f' else 'i32'}> = "
                     f"{dense(a)}")
    if weights:
        for name, w in weights.items():
            lines.append(f'  memref.global "private" constant @w_{name[1:]} : '
                         f"memref<{w.size}x{k.fty}> = {dense(w)}")
    if tangents:
        for name, v in tangents.items():
            lines.append(f'  memref.global "private" constant @v_{name[1:]} : '
                         f"memref<{v.size}x{k.fty}> = {dense(v)}")
    runs = (("lo", k.fty), ("hi", "f64"))
    for tag, F in runs:
        hp = HostPrinter(k, F)
        hp.compute(f"compute_{tag}")
        lines += hp.lines
    lines += HELPERS.splitlines()
    printed = []
    main = ["  func.func @main() {",
            "    %czero = arith.constant 0 : index",
            "    %cone = arith.constant 1 : index"]
    for tag, F in runs:
        names = load_buffers(main, k, inputs, F, tag)
        margs = []
        for b in mag_buffers(k):
            n = f"%MAG{tag}_{b.name[1:]}"
            main.append(f"    {n}_n = arith.constant {inputs[b.name].size} "
                        f": index")
            main.append(f"    {n} = call @zeros_{F}({n}_n) : (index) -> "
                        f"memref<?x{F}>")
            margs.append(n)
        call_compute(main, k, names, margs, F, tag)
        for b in bufs:
            E = F if b.elem == "f" else "i32"
            main.append(f"    call @print_{E}({names[b.name]}) : "
                        f"(memref<?x{E}>) -> ()")
            printed.append((tag, b.name, E))
        if tag == "lo":
            for b, n in zip(mag_buffers(k), margs):
                main.append(f"    call @print_{F}({n}) : (memref<?x{F}>) -> ()")
                printed.append(("mag", b.name, F))
    if weights:
        lines += objective(k, inputs, weights)
        fbufs = [b for b in bufs if b.elem == "f"]
        main.append(f"    %eps = arith.constant {fmt_float(FD_EPS)} : f64")
        main.append(f"    %neps = arith.constant {fmt_float(-FD_EPS)} : f64")
        main.append(f"    %twoeps = arith.constant {fmt_float(2 * FD_EPS)} "
                    f": f64")
        for which, b in enumerate(fbufs):
            n = inputs[b.name].size
            g = f"%FD_{b.name[1:]}"
            main += [f"    {g}_n = arith.constant {n} : index",
                     f"    {g}_w = arith.constant {which} : index",
                     f"    {g} = call @zeros_f64({g}_n) : (index) -> "
                     f"memref<?xf64>",
                     f"    scf.for %i = %czero to {g}_n step %cone {{",
                     f"      %p = func.call @objective({g}_w, %i, %eps) : "
                     f"(index, index, f64) -> f64",
                     f"      %m = func.call @objective({g}_w, %i, %neps) : "
                     f"(index, index, f64) -> f64",
                     "      %dif = arith.subf %p, %m : f64",
                     "      %q = arith.divf %dif, %twoeps : f64",
                     f"      memref.store %q, {g}[%i] : memref<?xf64>",
                     "    }",
                     f"    call @print_f64({g}) : (memref<?xf64>) -> ()"]
            printed.append(("fd", b.name, "f64"))
    if tangents:
        main += jvp(k, inputs, printed)
    main += ["    return", "  }"]
    lines += main
    lines.append("}")
    return "\n".join(lines) + "\n", printed


def init_helper(src, dst):
    """The helper copying a global of type src into a new buffer of dst."""
    return f"copy_{src}" if src == dst else f"ext_{src}_{dst}"


def load_buffers(out, k, inputs, F, tag, indent="    "):
    """Fresh copies of the initial buffers (floats as F). Returns names."""
    names = {}
    for b in k.buffers():
        a = inputs[b.name]
        g = f"%G{tag}_{b.name[1:]}"
        elem = k.fty if b.elem == "f" else "i32"
        out.append(f"{indent}{g}_s = memref.get_global @in_{b.name[1:]} : "
                   f"memref<{a.size}x{elem}>")
        out.append(f"{indent}{g}_d = memref.cast {g}_s : memref<{a.size}x"
                   f"{elem}> to memref<?x{elem}>")
        init = F if b.elem == "f" else "i32"
        out.append(f"{indent}{g} = call @{init_helper(elem, init)}({g}_d) : "
                   f"(memref<?x{elem}>) -> memref<?x{init}>")
        names[b.name] = g
    return names


def jvp(k, inputs, printed):
    """main's lines printing (M(x + eps v) - M(x - eps v)) / (2 eps) in f64
    for every float buffer."""
    out = [f"    %jeps = arith.constant {fmt_float(FD_EPS)} : f64",
           f"    %jneps = arith.constant {fmt_float(-FD_EPS)} : f64",
           f"    %jtwoeps = arith.constant {fmt_float(2 * FD_EPS)} : f64"]
    fbufs = [b for b in k.buffers() if b.elem == "f"]
    runs = {}
    for tag, eps in (("jp", "%jeps"), ("jm", "%jneps")):
        names = load_buffers(out, k, inputs, "f64", tag)
        for b in fbufs:
            v = f"%V{tag}_{b.name[1:]}"
            size = inputs[b.name].size
            out += [f"    {v}_s = memref.get_global @v_{b.name[1:]} : "
                    f"memref<{size}x{k.fty}>",
                    f"    {v}_d = memref.cast {v}_s : memref<{size}x{k.fty}> "
                    f"to memref<?x{k.fty}>",
                    f"    {v} = call @{init_helper(k.fty, 'f64')}({v}_d) : "
                    f"(memref<?x{k.fty}>) -> memref<?xf64>",
                    f"    call @axpy({names[b.name]}, {v}, {eps}) : "
                    f"(memref<?xf64>, memref<?xf64>, f64) -> ()"]
        margs = []
        for b in mag_buffers(k):
            m = f"%MAG{tag}_{b.name[1:]}"
            out.append(f"    {m}_n = arith.constant {inputs[b.name].size} "
                       f": index")
            out.append(f"    {m} = call @zeros_f64({m}_n) : (index) -> "
                       f"memref<?xf64>")
            margs.append(m)
        call_compute(out, k, names, margs, "f64", tag, fn="hi")
        runs[tag] = names
    for b in fbufs:
        out.append(f"    call @central({runs['jp'][b.name]}, "
                   f"{runs['jm'][b.name]}, %jtwoeps) : (memref<?xf64>, "
                   f"memref<?xf64>, f64) -> ()")
        out.append(f"    call @print_f64({runs['jp'][b.name]}) : "
                   f"(memref<?xf64>) -> ()")
        printed.append(("jvp", b.name, "f64"))
    return out


def call_compute(out, k, names, margs, F, tag, indent="    ", fn=None):
    args, tys = [], []
    for p in k.params:
        if isinstance(p, Buffer):
            args.append(names[p.name])
            tys.append(f"memref<?x{F if p.elem == 'f' else 'i32'}>")
        else:
            c = f"%SC{tag}_{p.name[1:]}"
            T = F if p.ty == "f" else p.ty
            v = fmt_float(p.value) if p.ty == "f" else str(int(p.value))
            out.append(f"{indent}{c} = arith.constant {v} : {T}")
            args.append(c)
            tys.append(T)
    for n in margs:
        args.append(n)
        tys.append(f"memref<?x{F}>")
    out.append(f"{indent}call @compute_{fn or tag}({', '.join(args)}) : "
               f"({', '.join(tys)}) -> ()")


def objective(k, inputs, weights):
    """objective(which, i, delta) = <M(x + delta e_i of float buffer
    #which), w> in f64."""
    out = ["  func.func @objective(%which: index, %i: index, %delta: f64) "
           "-> f64 {",
           "    %czero = arith.constant 0 : index",
           "    %cone = arith.constant 1 : index",
           "    %total0 = arith.constant 0.0 : f64"]
    names = load_buffers(out, k, inputs, "f64", "o")
    fbufs = [b for b in k.buffers() if b.elem == "f"]
    for which, b in enumerate(fbufs):
        n = names[b.name]
        out += [f"    %is{which} = arith.constant {which} : index",
                f"    %c{which} = arith.cmpi eq, %which, %is{which} : index",
                f"    scf.if %c{which} {{",
                f"      %v = memref.load {n}[%i] : memref<?xf64>",
                "      %v1 = arith.addf %v, %delta : f64",
                f"      memref.store %v1, {n}[%i] : memref<?xf64>",
                "    }"]
    margs = []
    for b in mag_buffers(k):
        m = f"%MAGo_{b.name[1:]}"
        out.append(f"    {m}_n = arith.constant {inputs[b.name].size} : index")
        out.append(f"    {m} = call @zeros_f64({m}_n) : (index) -> "
                   f"memref<?xf64>")
        margs.append(m)
    call_compute(out, k, names, margs, "f64", "hi")
    total = "%total0"
    for j, b in enumerate(fbufs):
        w = f"%W_{b.name[1:]}"
        size = weights[b.name].size
        out += [f"    {w}_s = memref.get_global @w_{b.name[1:]} : "
                f"memref<{size}x{k.fty}>",
                f"    {w}_d = memref.cast {w}_s : memref<{size}x{k.fty}> to "
                f"memref<?x{k.fty}>",
                f"    {w} = call @{init_helper(k.fty, 'f64')}({w}_d) : "
                f"(memref<?x{k.fty}>) -> memref<?xf64>",
                f"    %dot{j} = call @dot({names[b.name]}, {w}) : "
                f"(memref<?xf64>, memref<?xf64>) -> f64",
                f"    %total{j + 1} = arith.addf {total}, %dot{j} : f64",
                f"    memref.dealloc {w} : memref<?xf64>"]
        total = f"%total{j + 1}"
    for b in k.buffers():
        t = "f64" if b.elem == "f" else "i32"
        out.append(f"    memref.dealloc {names[b.name]} : memref<?x{t}>")
    for m in margs:
        out.append(f"    memref.dealloc {m} : memref<?xf64>")
    out += [f"    return {total} : f64", "  }"]
    return out


HELPERS = """
  func.func @copy_f64(%g: memref<?xf64>) -> memref<?xf64> {
    %c0 = arith.constant 0 : index
    %n = memref.dim %g, %c0 : memref<?xf64>
    %b = memref.alloc(%n) : memref<?xf64>
    memref.copy %g, %b : memref<?xf64> to memref<?xf64>
    return %b : memref<?xf64>
  }
  func.func @copy_f32(%g: memref<?xf32>) -> memref<?xf32> {
    %c0 = arith.constant 0 : index
    %n = memref.dim %g, %c0 : memref<?xf32>
    %b = memref.alloc(%n) : memref<?xf32>
    memref.copy %g, %b : memref<?xf32> to memref<?xf32>
    return %b : memref<?xf32>
  }
  func.func @copy_i32(%g: memref<?xi32>) -> memref<?xi32> {
    %c0 = arith.constant 0 : index
    %n = memref.dim %g, %c0 : memref<?xi32>
    %b = memref.alloc(%n) : memref<?xi32>
    memref.copy %g, %b : memref<?xi32> to memref<?xi32>
    return %b : memref<?xi32>
  }
  func.func @ext_f32_f64(%g: memref<?xf32>) -> memref<?xf64> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %g, %c0 : memref<?xf32>
    %b = memref.alloc(%n) : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %g[%i] : memref<?xf32>
      %w = arith.extf %v : f32 to f64
      memref.store %w, %b[%i] : memref<?xf64>
    }
    return %b : memref<?xf64>
  }
  func.func @zeros_f32(%n: index) -> memref<?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0.0 : f32
    %b = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      memref.store %z, %b[%i] : memref<?xf32>
    }
    return %b : memref<?xf32>
  }
  func.func @zeros_f64(%n: index) -> memref<?xf64> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0.0 : f64
    %b = memref.alloc(%n) : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      memref.store %z, %b[%i] : memref<?xf64>
    }
    return %b : memref<?xf64>
  }
  func.func @axpy(%x: memref<?xf64>, %v: memref<?xf64>, %a: f64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %x, %c0 : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      %xi = memref.load %x[%i] : memref<?xf64>
      %vi = memref.load %v[%i] : memref<?xf64>
      %p = arith.mulf %a, %vi : f64
      %s = arith.addf %xi, %p : f64
      memref.store %s, %x[%i] : memref<?xf64>
    }
    return
  }
  func.func @central(%p: memref<?xf64>, %m: memref<?xf64>, %h: f64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %p, %c0 : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.load %p[%i] : memref<?xf64>
      %b = memref.load %m[%i] : memref<?xf64>
      %d = arith.subf %a, %b : f64
      %q = arith.divf %d, %h : f64
      memref.store %q, %p[%i] : memref<?xf64>
    }
    return
  }
  func.func @dot(%a: memref<?xf64>, %b: memref<?xf64>) -> f64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0.0 : f64
    %n = memref.dim %a, %c0 : memref<?xf64>
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
      %x = memref.load %a[%i] : memref<?xf64>
      %y = memref.load %b[%i] : memref<?xf64>
      %p = arith.mulf %x, %y : f64
      %t = arith.addf %acc, %p : f64
      scf.yield %t : f64
    }
    return %s : f64
  }
  func.func @print_f32(%b: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %b, %c0 : memref<?xf32>
    %o = memref.alloc(%n) : memref<?xi32>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %b[%i] : memref<?xf32>
      %w = arith.bitcast %v : f32 to i32
      memref.store %w, %o[%i] : memref<?xi32>
    }
    %u = memref.cast %o : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    memref.dealloc %o : memref<?xi32>
    return
  }
  func.func @print_f64(%b: memref<?xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %b, %c0 : memref<?xf64>
    %o = memref.alloc(%n) : memref<?xi64>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %b[%i] : memref<?xf64>
      %w = arith.bitcast %v : f64 to i64
      memref.store %w, %o[%i] : memref<?xi64>
    }
    %u = memref.cast %o : memref<?xi64> to memref<*xi64>
    call @printMemrefI64(%u) : (memref<*xi64>) -> ()
    memref.dealloc %o : memref<?xi64>
    return
  }
  func.func @print_i32(%b: memref<?xi32>) {
    %u = memref.cast %b : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
"""
