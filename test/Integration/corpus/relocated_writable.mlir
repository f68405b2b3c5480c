// Corpus: a kernel writing a writable relocated host object, which the
// loader hands back (DIR/reloc-Main_state.npy, see test_run_kernels.py).
// Patched global on NVVM/ROCDL, table binding on SPIR-V/Metal; abi v1 cannot
// hold a writable object (no address to bake, a copy would lose the writes).
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
// RUN: not nabla-compile %s --target=nvvm --abi=v1 -o %t.v1 2>&1 | FileCheck %s
// CHECK: error: 'reloc.global' op cannot be materialized: it needs a statically shaped memref type and a known 'value'
module attributes {gpu.container_module} {
  gpu.module @kernels {
    reloc.global @state : memref<64xf32> {key = "Main.state"}
    // Writes a writable host object, which the loader hands back.
    gpu.func @publish(%A: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %s = reloc.get_global @state : memref<64xf32>
        %a = memref.load %A[%i] : memref<?xf32>
        %d = arith.addf %a, %a : f32
        memref.store %d, %s[%i] : memref<64xf32>
      }
      gpu.return
    }
  }
}
