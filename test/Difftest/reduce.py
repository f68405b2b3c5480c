# ===- reduce.py - Delta debugging of a failing random kernel ------------=== #
#
# minimize(kernel, interesting) shrinks a kernel while interesting(kernel)
# stays true (the same failure class shows). Edits, tried in this order and
# repeated until none applies:
# - the launch: one block, then smaller blocks;
# - scalar parameters: trip counts to 0 or 1, the bounds check n to all
#   threads;
# - chunks of each statement list (halves, quarters, ... single statements)
#   replaced by constants for the values they define (so later uses stay
#   valid SSA); stores, atomics and whole loops/branches without results are
#   dropped; barriers are kept (dropping one would add a race, a different
#   failure);
# - an scf.if replaced by one of its branches, an scf.for by one iteration
#   of its body or by its initial values (zero trips);
# - a whole buffer and every access to it; a barrier next to another one
#   or at either end of the kernel; a uniform loop holding barriers by one
#   copy of its body;
# - dead code (unused pure values, effect-free regions) and unused
#   parameters removed.
# Values that address 'own' slots are never replaced: a constant address
# would make threads write the same element, a race that fails on its own.
# ===----------------------------------------------------------------------=== #
import copy
import time

from kernel_ast import (Atomic, Barrier, Buffer, For, If, Load, Op, Scalar,
                        Store, all_uses, buffers_used, defs, walk)


def protected_names(k):
    """Names in the backward slice of an own-slot or workgroup address."""
    own = {b.name for b in k.params + k.wg
           if isinstance(b, Buffer) and (b.role == "own" or b.space == "wg")}
    producers = {}
    for s in walk(k.body):
        if isinstance(s, Op):
            producers[s.res] = s.args
    work = [s.idx for s in walk(k.body)
            if isinstance(s, (Load, Store, Atomic)) and s.buf in own]
    seen = set()
    while work:
        n = work.pop()
        if n in seen:
            continue
        seen.add(n)
        work.extend(producers.get(n, []))
    return seen


def const_for(name, ty):
    value = {"f": 0.5, "i32": 1, "index": 0, "i1": True}.get(ty, 1)
    return Op(name, "const", [], ty, value)


def types_of(stmt):
    if isinstance(stmt, (Op, Load, Atomic)):
        return [(stmt.res, stmt.ty)]
    if isinstance(stmt, If):
        return [(r[0], r[1]) for r in stmt.results]
    if isinstance(stmt, For):
        return [(r, it[1]) for r, it in zip(stmt.results, stmt.iters)]
    return []


def replacement(stmt, protected, races_ok=False):
    """What a removed statement leaves behind, or None if it must stay."""
    if isinstance(stmt, Barrier) or getattr(stmt, "keep", False):
        return [] if races_ok else None
    if isinstance(stmt, Op) and stmt.kind == "const":
        return None
    if any(n in protected for n in defs(stmt)):
        return None
    return [const_for(n, t) for n, t in types_of(stmt)]


def lists(stmts, path=()):
    """Paths of every statement list (the body and nested regions)."""
    yield path
    for i, s in enumerate(stmts):
        if isinstance(s, If):
            yield from lists(s.then, path + ((i, "then"),))
            yield from lists(s.els, path + ((i, "els"),))
        elif isinstance(s, For):
            yield from lists(s.body, path + ((i, "body"),))


def get_list(k, path):
    stmts = k.body
    for i, sel in path:
        stmts = getattr(stmts[i], sel)
    return stmts


def remove_chunk(k, path, start, end, races_ok=False):
    k = copy.deepcopy(k)
    stmts = get_list(k, path)
    protected = set() if races_ok else protected_names(k)
    out, changed = [], False
    for i, s in enumerate(stmts):
        if start <= i < end:
            rep = replacement(s, protected, races_ok)
            if rep is not None:
                out.extend(rep)
                changed = True
                continue
        out.append(s)
    if not changed:
        return None
    stmts[:] = out
    return k


def alias(name, src, ty):
    return Op(name, "alias", [src], ty)


def structural_edits(k, path, i, races_ok=False):
    """Kernels where statement i of the list at path is simplified."""
    s = get_list(k, path)[i]
    out = []
    types = types_table(k)
    protected = set() if races_ok else protected_names(k)
    if isinstance(s, Op) and s.kind not in ("const", "alias") and \
            s.res not in protected and s.ty == "f":
        # Bypass: the result becomes one of its operands of the same type.
        # Floats only: integer ops guard shifts, divisors and addresses
        # (x & 31, (b & 15) | 1, x % size), and a bypass would leave
        # undefined behaviour that a later replay could not compare.
        for a in dict.fromkeys(s.args):
            if types.get(a) == s.ty:
                k2 = copy.deepcopy(k)
                get_list(k2, path)[i] = alias(s.res, a, s.ty)
                out.append(k2)
    if isinstance(s, If):
        for branch, yields in (("then", s.then_yield), ("els", s.else_yield)):
            k2 = copy.deepcopy(k)
            lst = get_list(k2, path)
            s2 = lst[i]
            body = getattr(s2, branch)
            tail = [alias(r[0], y, r[1]) for r, y in zip(s2.results,
                                                        yields)]
            lst[i:i + 1] = body + tail
            out.append(k2)
    elif isinstance(s, For) and s.phase:
        # The uniform loop's body once, at top level (its barriers stay).
        k2 = copy.deepcopy(k)
        lst = get_list(k2, path)
        s2 = lst[i]
        head = [alias(s2.iv, s2.lb, "index")] + [
            alias(it[0], it[2], it[1]) for it in s2.iters]
        tail = [alias(r, y, it[1]) for r, y, it in zip(s2.results, s2.yields,
                                                       s2.iters)]
        lst[i:i + 1] = head + s2.body + tail
        out.append(k2)
    elif isinstance(s, For):
        # Zero trips: the results are the initial values.
        k2 = copy.deepcopy(k)
        lst = get_list(k2, path)
        s2 = lst[i]
        lst[i:i + 1] = [alias(r, it[2], it[1])
                        for r, it in zip(s2.results, s2.iters)]
        out.append(k2)
        # One trip: the body once, with iv = lb.
        k3 = copy.deepcopy(k)
        lst = get_list(k3, path)
        s3 = lst[i]
        head = [alias(s3.iv, s3.lb, "index")] + [
            alias(it[0], it[2], it[1]) for it in s3.iters]
        tail = [alias(r, y, it[1]) for r, y, it in zip(s3.results, s3.yields,
                                                       s3.iters)]
        lst[i:i + 1] = head + s3.body + tail
        out.append(k3)
    return out


def drop_buffer(k, name):
    """Removes a buffer and every access to it (loads become constants)."""
    k = copy.deepcopy(k)

    def strip(stmts):
        out = []
        for s in stmts:
            if isinstance(s, Load) and s.buf == name:
                out.append(const_for(s.res, s.ty))
                continue
            if isinstance(s, Atomic) and s.buf == name:
                continue
            if isinstance(s, Store) and s.buf == name:
                continue
            if isinstance(s, Op) and s.kind == "dim" and s.attr == name:
                out.append(const_for(s.res, s.ty))
                continue
            if isinstance(s, If):
                s.then, s.els = strip(s.then), strip(s.els)
            elif isinstance(s, For):
                s.body = strip(s.body)
            out.append(s)
        return out

    k.body = strip(k.body)
    k.params = [p for p in k.params if p.name != name]
    k.wg = [b for b in k.wg if b.name != name]
    return k


def barrier_edits(k):
    """Drops a barrier next to another one or at either end of a list."""
    out = []
    for path in lists(k.body):
        stmts = get_list(k, path)
        for i, s in enumerate(stmts):
            if not isinstance(s, Barrier):
                continue
            redundant = (i == 0 or i == len(stmts) - 1 or
                         isinstance(stmts[i - 1], Barrier))
            if redundant and path == ():
                k2 = copy.deepcopy(k)
                del get_list(k2, path)[i]
                out.append(k2)
    return out


def types_table(k):
    types = {p.name: p.ty for p in k.params if isinstance(p, Scalar)}
    for s in walk(k.body):
        for name, ty in types_of(s):
            types[name] = ty
        if isinstance(s, For):
            types[s.iv] = "index"
            for it in s.iters:
                types[it[0]] = it[1]
    for name in ("%czero", "%u0", "%u1", "%u2", "%u3"):
        types[name] = "index"
    types["%ctrue"] = "i1"
    return types


def dead_code(k):
    """Drops unused pure values and effect-free regions (no run needed)."""
    k = copy.deepcopy(k)
    changed = True
    while changed:
        changed = False
        used = all_uses(k.body)
        for path in list(lists(k.body)):
            try:
                stmts = get_list(k, path)
            except (IndexError, AttributeError):
                continue
            keep = []
            for s in stmts:
                effect = any(isinstance(x, (Store, Atomic, Barrier))
                             for x in walk([s]))
                if not effect and defs(s) and not any(n in used
                                                      for n in defs(s)):
                    changed = True
                    continue
                if not effect and isinstance(s, (If, For)) and not defs(s):
                    changed = True
                    continue
                keep.append(s)
            stmts[:] = keep
            if changed:
                break
    return k


def drop_unused_params(k):
    k = copy.deepcopy(k)
    used = buffers_used(k.body) | all_uses(k.body)
    k.params = [p for p in k.params if p.name in used]
    k.wg = [b for b in k.wg if b.name in used]
    return k


def launch_edits(k):
    out = []
    if k.blocks > 1:
        k2 = copy.deepcopy(k)
        k2.grid = [1, 1, 1]
        out.append(k2)
    for dim in range(3):
        if k.block[dim] > 1:
            for size in (1, k.block[dim] // 2):
                if size >= 1:
                    k2 = copy.deepcopy(k)
                    k2.block[dim] = size
                    out.append(k2)
    return out


def scalar_edits(k):
    out = []
    for i, p in enumerate(k.params):
        if not isinstance(p, Scalar):
            continue
        # Only towards simpler values, so that edits cannot cycle.
        if p.name == "%n":
            values = [k.threads] if p.value < k.threads else []
        elif p.ty in ("index", "i32"):
            values = [v for v in (0, 1) if abs(v) < abs(p.value)]
        else:
            values = [1.0] if p.value != 1.0 else []
        for v in values:
            if True:
                k2 = copy.deepcopy(k)
                k2.params[i].value = v
                out.append(k2)
    return out


def size_of(k):
    return sum(1 for _ in walk(k.body))


def rename_uses(stmts, m):
    r = lambda n: m.get(n, n)
    for s in walk(stmts):
        if isinstance(s, Op):
            s.args = [r(a) for a in s.args]
        elif isinstance(s, Load):
            s.idx = r(s.idx)
        elif isinstance(s, (Store, Atomic)):
            s.val, s.idx = r(s.val), r(s.idx)
        elif isinstance(s, If):
            s.cond = r(s.cond)
            s.then_yield = [r(y) for y in s.then_yield]
            s.else_yield = [r(y) for y in s.else_yield]
        elif isinstance(s, For):
            s.lb, s.ub, s.step = r(s.lb), r(s.ub), r(s.step)
            s.iters = [[n, t, r(i)] for n, t, i in s.iters]
            s.yields = [r(y) for y in s.yields]


def collapse_aliases(k):
    """Uses of an alias (left by branch/loop inlining and bypasses) read its
    source directly; the aliases go."""
    k = copy.deepcopy(k)
    m = {}
    for s in walk(k.body):
        if isinstance(s, Op) and s.kind == "alias":
            m[s.res] = s.args[0]
    if not m:
        return None
    for name in list(m):
        while m[name] in m:
            m[name] = m[m[name]]
    rename_uses(k.body, m)

    def strip(stmts):
        out = []
        for s in stmts:
            if isinstance(s, Op) and s.kind == "alias":
                continue
            for sel in ("then", "els", "body"):
                if hasattr(s, sel):
                    setattr(s, sel, strip(getattr(s, sel)))
            out.append(s)
        return out

    k.body = strip(k.body)
    return k


def minimize(k, interesting, deadline_s=900, log=print, races_ok=False):
    """Greedy delta debugging; returns the smallest interesting kernel
    found within the deadline. races_ok: the failure does not depend on
    the kernel's results (a compile error), so barriers and the address
    computations of own slots may go too."""
    start = time.time()
    tries = [0]

    def attempt(cand):
        if cand is None or time.time() - start > deadline_s:
            return False
        tries[0] += 1
        try:
            return interesting(cand)
        except Exception as e:  # an edit the printers cannot handle
            log(f"edit skipped ({type(e).__name__}: {e})")
            return False

    for cand in (dead_code(k),):
        if attempt(cand):
            k = cand
    progress = True
    while progress and time.time() - start < deadline_s:
        progress = False
        buffers = [b.name for b in k.buffers()] + [b.name for b in k.wg]
        for cand in (launch_edits(k) + scalar_edits(k) +
                     [dead_code(drop_buffer(k, b)) for b in buffers] +
                     barrier_edits(k)):
            if attempt(cand):
                k, progress = cand, True
                break
        if progress:
            continue
        # Chunks of every statement list, coarse to fine.
        for path in list(lists(k.body)):
            try:
                n = len(get_list(k, path))
            except (IndexError, AttributeError):
                break
            chunk = max(1, n // 2)
            while chunk >= 1:
                start_i = 0
                while True:
                    try:
                        n = len(get_list(k, path))
                    except (IndexError, AttributeError):
                        break
                    if start_i >= n:
                        break
                    cand = remove_chunk(k, path, start_i, start_i + chunk,
                                        races_ok)
                    # With dead code removed, else as is (the failing op
                    # may be one whose result nothing uses any more).
                    if cand is not None and attempt(dead_code(cand)):
                        k, progress = dead_code(cand), True
                    elif attempt(cand):
                        k, progress = cand, True
                    else:
                        start_i += chunk
                chunk //= 2
        for path in list(lists(k.body)):
            i = 0
            while True:
                try:
                    stmts = get_list(k, path)
                except (IndexError, AttributeError):
                    break
                if i >= len(stmts):
                    break
                for cand in structural_edits(k, path, i, races_ok):
                    if attempt(dead_code(cand)):
                        k, progress = dead_code(cand), True
                        break
                    if attempt(cand):
                        k, progress = cand, True
                        break
                i += 1
        cand = drop_unused_params(k)
        if (len(cand.params) != len(k.params) or len(cand.wg) != len(k.wg)) \
                and attempt(cand):
            k, progress = cand, True
    cand = collapse_aliases(k)
    if cand is not None and attempt(cand):
        k = cand
    log(f"minimized to {size_of(k)} statements in {tries[0]} runs, "
        f"{time.time() - start:.0f}s")
    return k


def inject_zero_trip_bug(k):
    """Simulates a past SPIR-V miscompile: an scf.for that runs zero times
    gives 0 (what lavapipe's unwritten variables hold) instead of its init
    values. Returns None if the kernel has no loop results."""
    k = copy.deepcopy(k)
    count = [0]

    def visit(stmts):
        out = []
        for s in stmts:
            for sel in ("then", "els", "body"):
                if hasattr(s, sel):
                    setattr(s, sel, visit(getattr(s, sel)))
            out.append(s)
            if isinstance(s, For) and s.results:
                count[0] += 1
                runs = s.results[0] + "_runs"
                out.append(Op(runs, "cmpi", [s.lb, s.ub], "i1",
                              ["slt", "index"]))
                raw = [r + "_raw" for r in s.results]
                for r, w, it in zip(s.results, raw, s.iters):
                    zero = r + "_zero"
                    out.append(Op(zero, "const", [], it[1],
                                  0.0 if it[1] == "f" else 0))
                    out.append(Op(r, "select", [runs, w, zero], it[1]))
                s.results = raw
        return out

    k.body = visit(k.body)
    return k if count[0] else None
