// nabla-wrap-host-objects: SPIR-V objects host code launches from carry the
// launched kernels' parameters ahead of the SPIR-V words.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-wrap-host-objects | FileCheck %s

// CHECK: gpu.binary @kernels
// CHECK-SAME: bin = "NBLAHOST\01\00\00\00
// CHECK-SAME: {\22kernels\22:[{\22name\22:\22k\22,\22params\22:[{\22element\22:\22f32\22,\22kind\22:\22buffer\22,\22shape\22:[-1,4]},{\22kind\22:\22scalar\22,\22type\22:\22index\22}]}]}
// CHECK-SAME: \03\02#\07
// The object of a module nothing launches stays as it is.
// CHECK: gpu.binary @unused {{.*}}bin = "\03\02#\07
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#spirv.target_env<#spirv.vce<v1.0, [Shader], []>, #spirv.resource_limits<>>, bin = "\03\02#\07">]
  gpu.binary @unused [#gpu.object<#spirv.target_env<#spirv.vce<v1.0, [Shader], []>, #spirv.resource_limits<>>, bin = "\03\02#\07">]
  func.func @main(%a: memref<?x4xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?x4xf32>, %n : index)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#spirv.target_env<#spirv.vce<v1.0, [Shader], []>, #spirv.resource_limits<>>, bin = "\03\02#\07">]
  func.func @main(%a: memref<?xf32, strided<[?], offset: ?>>) {
    %c1 = arith.constant 1 : index
    // expected-error @below {{argument #0 has type 'memref<?xf32, strided<[?], offset: ?>>', whose layout a SPIR-V kernel cannot receive}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32, strided<[?], offset: ?>>)
    return
  }
}
