// nabla-to-rocdl: the math lowering does not depend on what else the context
// has loaded. The nvvm.* attribute loads the NVVM dialect; before
// nabla-rocdl-math-to-ocml, convert-gpu-to-rocdl then emitted llvm.intr.atan2,
// acos, tan and tanh, and the AMDGPU back end stopped with an unlocated
// "no libcall available for fatan2" (found by nabla-fuzz-rocdl: the dialect
// stayed loaded from an earlier input in the same context).
// RUN: nabla-opt %s --pass-pipeline="builtin.module(nabla-to-rocdl{chip=gfx90a})" | FileCheck %s
// RUN: nabla-compile %s --target=rocdl -o %t && FileCheck %s --check-prefix=MANIFEST < %t/manifest.json

// CHECK: gpu.binary @kernels [#gpu.object<#rocdl.target<chip = "gfx90a">, bin = "\7FELF
// MANIFEST: "name": "k"
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>, %B: memref<?xf64>) kernel attributes {nvvm.maxntid = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %a = memref.load %A[%c0] : memref<?xf32>
      %b = memref.load %B[%c0] : memref<?xf64>
      %0 = math.atan2 %a, %a : f32
      %1 = math.acos %0 : f32
      %2 = math.tanh %1 : f32
      %3 = math.tan %2 : f32
      %4 = math.sinh %b : f64
      %5 = math.cosh %4 : f64
      memref.store %3, %A[%c0] : memref<?xf32>
      memref.store %5, %B[%c0] : memref<?xf64>
      gpu.return
    }
  }
}
