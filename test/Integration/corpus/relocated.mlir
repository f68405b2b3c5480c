// Corpus: a kernel reading a relocated constant host table (no contents in the
// IR: the loader provides them, see test_run_kernels.py). Under abi v2 (the
// default) every target compiles it: NVVM and ROCDL as a patched global named
// from the key, SPIR-V and Metal as an extra buffer binding (table) listed in
// the manifest. Under abi v1 the contents must be known at compile time.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: cat %t.nvvm/kernels.ptx %t.nvvm/manifest.json | FileCheck %s --check-prefix=PTX
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -s %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: FileCheck %s --check-prefix=TABLE < %t.spirv/manifest.json
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv2 && cmp %t.spirv/kernels.spv %t.spirv2/kernels.spv && cmp %t.spirv/manifest.json %t.spirv2/manifest.json
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal && FileCheck %s --check-prefix=MSL < %t.metal/kernels.metal
// RUN: nabla-opt %s --pass-pipeline="builtin.module(reloc-lower{strategy=defer})" -o %t.deferred.mlir
// RUN: not nabla-compile %s --target=spirv --block=64 --abi=v1 -o %t.v1 2>&1 | FileCheck %s --check-prefix=V1
// PTX: .visible .global .align 4 .b8 __reloc_host_coeffs_[[HASH:[0-9a-f]+]][16];
// PTX: "strategy": "patch",
// PTX-NEXT: "symbol": "__reloc_host_coeffs_[[HASH]]",
// HSACO: OBJECT GLOBAL DEFAULT {{.*}} __reloc_host_coeffs_
// TABLE: "index": 2,
// TABLE-NEXT: "kind": "buffer",
// TABLE-NEXT: "reloc": "host.coeffs",
// TABLE: "key": "host.coeffs",
// TABLE: "strategy": "table",
// MSL: kernel void scale(
// V1: error: 'reloc.global' op cannot be materialized: it needs a statically shaped memref type and a known 'value'
module attributes {gpu.container_module} {
  gpu.module @kernels {
    reloc.global @coeffs : memref<4xf32> {key = "host.coeffs", constant}
    gpu.func @scale(%A: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c4 = arith.constant 4 : index
        %k = arith.remui %i, %c4 : index
        %t = reloc.get_global @coeffs : memref<4xf32>
        %c = memref.load %t[%k] : memref<4xf32>
        %a = memref.load %A[%i] : memref<?xf32>
        %p = arith.mulf %a, %c : f32
        memref.store %p, %A[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
