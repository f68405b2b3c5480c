//===- RelocBase.td - The reloc dialect definition ------------*- tablegen -*-===//
//
// The `reloc` dialect makes references from kernel code to host-side objects
// explicit: a `reloc.global` record per object, and typed uses of it.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_RELOC_IR_RELOCBASE_TD
#define NABLA_DIALECT_RELOC_IR_RELOCBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Reloc_Dialect : Dialect {
  let name = "reloc";
  let cppNamespace = "::nabla::reloc";
  let summary = "Explicit relocation of host objects referenced from kernels.";
  let description = [{
    A GPU frontend references host objects (interned symbols, type tags,
    constant tables, runtime globals) from kernel code. Instead of baking an
    address into the IR or leaving an external declaration behind an address
    space cast, Nabla records each such object as a `reloc.global` with a
    deterministic record (stable key, kind, type and size, constness, optional
    known bytes and address, AD shadow pairing) and uses it through
    `reloc.get_global` (memref view) or `reloc.addressof` (LLVM pointer).
    Validation and AD therefore never meet a dangling address cast, and the
    record decides later how the object is relocated (baked address, load-time
    patch, table, materialized copy, or handed back to the frontend).

    ```mlir
    gpu.module @kernels {
      reloc.global @coeffs : memref<8xf32> {constant, key = "host.coeffs"}
      reloc.global @sym_x : !llvm.ptr<1> {constant, key = "Main.:x"}
      func.func @f() {
        %c = reloc.get_global @coeffs : memref<8xf32>
        %p = reloc.addressof @sym_x : !llvm.ptr<1>
        return
      }
    }
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
}

#endif // NABLA_DIALECT_RELOC_IR_RELOCBASE_TD
