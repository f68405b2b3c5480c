// nabla-assemble-cubin on its own: each PTX object gets a cubin (an ELF)
// beside it, from ptxas; PTX that ptxas rejects is a located error with its
// output.
// REQUIRES: ptxas
// RUN: nabla-opt %s --split-input-file --nabla-assemble-cubin -verify-diagnostics | FileCheck %s

// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = "
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_80">, bin = "\7FELF
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = "//\0A.version 7.0\0A.target sm_80\0A.address_size 64\0A\0A.visible .entry k()\0A{\0A\09ret;\0A}\0A">]
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{ptxas}}
  gpu.binary @broken [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 7.0\0A.target sm_80\0A.address_size 64\0A.visible .entry k()\0A{\0A\09not_an_instruction;\0A}\0A">]
}
