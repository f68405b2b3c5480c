// nabla-assemble-cubin on its own: each PTX object gets a cubin (an ELF)
// beside it, from ptxas; PTX that ptxas rejects is a located error with its
// output.
// REQUIRES: ptxas
// RUN: nabla-opt %s --split-input-file --nabla-assemble-cubin -verify-diagnostics | FileCheck %s
// PTX longer than large-ptx-lines is assembled with ptxas -O0, with a warning
// (ptxas's optimizer takes minutes on a gradient of thousands of ops).
// RUN: not nabla-opt %s --split-input-file --nabla-assemble-cubin="large-ptx-lines=5" 2>&1 >/dev/null | FileCheck %s --check-prefix=LARGE
// LARGE: warning: PTX of 9 lines: assembled with ptxas -O0 (its optimizer{{.*}} beyond 5 lines

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
