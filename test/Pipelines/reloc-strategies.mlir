// The pipelines lower records with the ABI's strategy, on every target:
// abi=v1 bakes the pointer record and materializes the table; abi=v2 patches
// (NVVM, ROCDL) or binds a table (SPIR-V, Metal); reloc-strategy=defer leaves
// external symbols. Under v2 the artifacts and manifest are byte-identical
// across runs.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 --abi=v1 -o %t.v1nvvm && FileCheck %s --check-prefix=V1PTX < %t.v1nvvm/kernels.ptx
// RUN: nabla-compile %s --target=rocdl --abi=v1 -o %t.v1rocdl
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-nvvm{chip=sm_90 reloc-strategy=defer cubin=false})" | FileCheck %s --check-prefix=DEFER
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.a && nabla-compile %s --target=nvvm --chip=sm_90 -o %t.b
// RUN: cmp %t.a/kernels.ptx %t.b/kernels.ptx && cmp %t.a/manifest.json %t.b/manifest.json
// RUN: FileCheck %s --check-prefix=V2PTX < %t.a/kernels.ptx
// V1PTX: 4096
// V1PTX-NOT: __reloc_
// V2PTX-DAG: .visible .global .align 8 .u64 __reloc_Main__x_{{[0-9a-f]+}};
// V2PTX-DAG: .visible .global .align 4 .b8 __reloc_host_w_{{[0-9a-f]+}}[8];
// DEFER: gpu.binary @kernels
module attributes {gpu.container_module} {
  gpu.module @kernels {
    reloc.global @sym : !llvm.ptr<1> {key = "Main.:x", constant, address = 4096}
    reloc.global @w : memref<2xf32> {key = "host.w", constant, value = dense<[1.0, 2.0]> : tensor<2xf32>}
    gpu.func @k(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %p = reloc.addressof @sym : !llvm.ptr<1>
      %x = llvm.load %p : !llvm.ptr<1> -> f32
      %t = reloc.get_global @w : memref<2xf32>
      %y = memref.load %t[%c1] : memref<2xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
