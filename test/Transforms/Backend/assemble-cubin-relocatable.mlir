// nabla-assemble-cubin: PTX making more than relocatable-calls calls is
// assembled as relocatable code (ptxas -c) and linked alone by nvlink (a
// whole program's time in ptxas grows with the square of its calls); the
// cubin then records both tools. Below the limit (the default 256), ptxas
// alone writes it.
// REQUIRES: ptxas
// RUN: nabla-opt %s --nabla-assemble-cubin="relocatable-calls=1" | FileCheck %s
// RUN: nabla-opt %s --nabla-assemble-cubin | FileCheck %s --check-prefix=WHOLE
// CHECK: #gpu.object<#nvvm.target<chip = "sm_80">, bin = "\7FELF
// CHECK-SAME: nvlink
// CHECK-SAME: -arch sm_80 -c
// WHOLE: #gpu.object<#nvvm.target<chip = "sm_80">, bin = "\7FELF
// WHOLE-NOT: nvlink
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 7.0\0A.target sm_80\0A.address_size 64\0A.func f()\0A{\0A\09ret;\0A}\0A.visible .entry k()\0A{\0A\09call.uni f;\0A\09call.uni f;\0A\09ret;\0A}\0A">]
}
