# ===- kernel_ast.py - The AST of a random kernel ------------------------=== #
#
# A generated kernel is a small tree of statements over SSA names, printed
# twice by emit.py: as a target-neutral gpu.func for Nabla, and as a host
# func.func (threads become loops) for upstream mlir-opt/mlir-runner. The
# tree is plain data (dataclasses) so that the minimizer can edit it and a
# regression can be stored as JSON.
#
# Types: 'f' is the float type (f32 on the GPU, f32 or f64 on the host),
# 'i32', 'index' and 'i1'.
# ===----------------------------------------------------------------------=== #
from dataclasses import dataclass, fields
from typing import List, Optional


@dataclass
class Buffer:
    """A kernel buffer: a memref<?xT> parameter or a workgroup attribution.

    role 'in': read anywhere, never written; 'own': thread t reads and writes
    only its slots t*K .. t*K+K-1 (t linear in the grid, or in the block for
    workgroup memory); 'acc': only atomics of kind `acc` (workgroup: read in
    phases without atomics)."""
    name: str
    elem: str            # 'f' or 'i32'
    role: str            # 'in' | 'own' | 'acc'
    space: str           # 'global' | 'wg'
    size: int = 0        # 'in' and 'acc' buffers; 'own' ones are K * threads
    acc: str = ""        # atomic kind of an 'acc' buffer
    exact: bool = True   # float workgroup addf: contributions are exact


@dataclass
class Scalar:
    name: str
    ty: str              # 'index' | 'i32' | 'f'
    value: float


@dataclass
class Op:
    """A pure op defining `res` (see emit.py for the spelling of each kind)."""
    res: str
    kind: str
    args: List[str]
    ty: str
    attr: object = None


@dataclass
class Load:
    res: str
    buf: str
    idx: str
    ty: str


@dataclass
class Store:
    val: str
    buf: str
    idx: str
    keep: bool = False           # initializes workgroup memory: never reduced


@dataclass
class Atomic:
    res: str
    kind: str
    val: str
    buf: str
    idx: str
    ty: str


@dataclass
class If:
    cond: str
    results: List[list]          # [name, type]
    then: list
    then_yield: List[str]
    els: list
    else_yield: List[str]
    keep: bool = False


@dataclass
class For:
    iv: str
    lb: str
    ub: str
    step: str
    iters: List[list]            # [name, type, init]
    body: list
    yields: List[str]
    results: List[str]
    hint: Optional[int] = None   # nabla.max_trip_count (gradient kernels)
    phase: bool = False          # uniform loop holding barriers (top level)
    max_trips: int = 0           # bound on the trip count (for hints)


@dataclass
class Barrier:
    pass


@dataclass
class Kernel:
    params: list                 # Buffer (global) and Scalar, in order
    wg: List[Buffer]
    grid: List[int]
    block: List[int]
    slots: int
    body: list
    diff: bool = False           # also checked in reverse mode
    input_seed: int = 0
    seed: int = 0
    fty: str = "f32"             # the GPU's float type: f32 or f64
    ad_form: str = "kernel_adjoint"  # or "autodiff" (of a device function)

    @property
    def threads_per_block(self):
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self):
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads(self):
        return self.threads_per_block * self.blocks

    def size(self, buf):
        if buf.role != "own":
            return buf.size
        per = self.threads_per_block if buf.space == "wg" else self.threads
        return self.slots * per

    def buffer(self, name):
        for b in self.params + self.wg:
            if isinstance(b, Buffer) and b.name == name:
                return b
        return None

    def buffers(self):
        return [p for p in self.params if isinstance(p, Buffer)]


NODES = {c.__name__: c for c in
         (Buffer, Scalar, Op, Load, Store, Atomic, If, For, Barrier, Kernel)}


def to_json(node):
    if isinstance(node, list):
        return [to_json(x) for x in node]
    if type(node).__name__ in NODES:
        out = {"node": type(node).__name__}
        for f in fields(node):
            out[f.name] = to_json(getattr(node, f.name))
        return out
    return node


def from_json(data):
    if isinstance(data, list):
        return [from_json(x) for x in data]
    if isinstance(data, dict) and "node" in data:
        cls = NODES[data["node"]]
        return cls(**{k: from_json(v) for k, v in data.items() if k != "node"})
    return data


def walk(stmts):
    """Every statement, nested ones after their parent."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from walk(s.then)
            yield from walk(s.els)
        elif isinstance(s, For):
            yield from walk(s.body)


def defs(s):
    """Names a statement defines in its enclosing region."""
    if isinstance(s, (Op, Load, Atomic)):
        return [s.res]
    if isinstance(s, If):
        return [r[0] for r in s.results]
    if isinstance(s, For):
        return list(s.results)
    return []


def inner_defs(s):
    """Names defined inside a statement's regions (including its own)."""
    names = list(defs(s))
    if isinstance(s, For):
        names += [s.iv] + [it[0] for it in s.iters]
    for sub in walk(children(s)):
        names += defs(sub)
        if isinstance(sub, For):
            names += [sub.iv] + [it[0] for it in sub.iters]
    return names


def children(s):
    if isinstance(s, If):
        return s.then + s.els
    if isinstance(s, For):
        return s.body
    return []


def uses(s):
    """Names a statement reads, itself only (not its regions' statements)."""
    if isinstance(s, Op):
        return list(s.args)
    if isinstance(s, Load):
        return [s.idx]
    if isinstance(s, Store):
        return [s.val, s.idx]
    if isinstance(s, Atomic):
        return [s.val, s.idx]
    if isinstance(s, If):
        return [s.cond] + list(s.then_yield) + list(s.else_yield)
    if isinstance(s, For):
        return [s.lb, s.ub, s.step] + [it[2] for it in s.iters] + list(s.yields)
    return []


def all_uses(stmts):
    names = set()
    for s in walk(stmts):
        names.update(uses(s))
    return names


def buffers_used(stmts):
    names = set()
    for s in walk(stmts):
        if isinstance(s, (Load, Store, Atomic)):
            names.add(s.buf)
        if isinstance(s, Op) and s.kind == "dim":
            names.add(s.attr)
    return names
