// Static workgroup memory over what a kernel may declare: 48 KiB on NVVM
// (ptxas refuses more, naming no source), 64 KiB on ROCDL; an adjoint's
// message says its shadows double its primal's. 32 KiB passes.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-check-target-support=target=nvvm
// RUN: nabla-opt %s -split-input-file --nabla-check-target-support=target=rocdl

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tiles() workgroup(%a: memref<4096xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
    // expected-error @below {{'gpu.func' op declares 65536 bytes of static workgroup memory, over the 49152 a kernel may declare on nvvm (an adjoint holds a shadow of each of its primal's workgroup arrays): use smaller tiles}}
    gpu.func @__nabla_adjoint_tiles() workgroup(%a: memref<8192xf32, #gpu.address_space<workgroup>>, %b: memref<8192xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}
