// nabla-rocdl-math-to-ocml: math ops with an OCML function become calls to it
// before convert-gpu-to-rocdl, whatever else the context has loaded. The
// nvvm.* attribute loads the NVVM dialect, whose conversion patterns made
// upstream's convert-gpu-to-rocdl emit llvm.intr.atan2 (which the AMDGPU back
// end cannot select) and llvm.intr.log for log1p.
// RUN: nabla-opt %s --pass-pipeline="builtin.module(gpu.module(nabla-rocdl-math-to-ocml{chip=gfx90a}))" | FileCheck %s
// RUN: nabla-opt %s --pass-pipeline="builtin.module(gpu.module(nabla-rocdl-math-to-ocml,convert-gpu-to-rocdl))" | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: gpu.func @k
// CHECK: llvm.call @__ocml_atan2_f32
// CHECK: llvm.call @__ocml_acos_f32
// CHECK: llvm.call @__ocml_tanh_f32
// CHECK: llvm.call @__ocml_log1p_f32
// CHECK: llvm.call @__ocml_expm1_f64
// CHECK: llvm.call @__ocml_rsqrt_f64
// CHECK: llvm.call @__ocml_tan_f16
// Ops without an OCML function are left for convert-gpu-to-rocdl.
// CHECK: math.fma
// CHECK: math.ctlz
// CHECK: arith.addf
// CHECK: gpu.return

// LLVM-NOT: llvm.intr.atan2
// LLVM-NOT: llvm.intr.acos
// LLVM-NOT: llvm.intr.tanh
// LLVM-NOT: llvm.intr.tan
// LLVM-NOT: llvm.intr.log
// LLVM-NOT: llvm.intr.sqrt
// LLVM-LABEL: llvm.func @k
// LLVM: llvm.call @__ocml_atan2_f32
// LLVM: llvm.call @__ocml_log1p_f32
// LLVM: llvm.intr.fma
gpu.module @kernels {
  gpu.func @k(%a: f32, %b: f32, %d: f64, %h: f16, %i: i32,
              %p: memref<f32>, %q: memref<f64>, %r: memref<f16>,
              %s: memref<i32>) kernel attributes {nvvm.maxntid = array<i32: 64, 1, 1>} {
    %0 = math.atan2 %a, %b : f32
    %1 = math.acos %0 : f32
    %2 = math.tanh %1 : f32
    %3 = math.log1p %2 : f32
    %4 = math.expm1 %d : f64
    %5 = math.rsqrt %4 : f64
    %6 = math.tan %h : f16
    %7 = math.fma %3, %a, %b : f32
    %8 = math.ctlz %i : i32
    %9 = arith.addf %7, %a : f32
    memref.store %9, %p[] : memref<f32>
    memref.store %5, %q[] : memref<f64>
    memref.store %6, %r[] : memref<f16>
    memref.store %8, %s[] : memref<i32>
    gpu.return
  }
}
