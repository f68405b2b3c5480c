// nabla-spirv-to-binary on its own: a gpu.module holding a spirv.module
// becomes a gpu.binary of the same name holding the validated words (magic
// number first), or MSL with format=msl (spirv-to-binary-invalid.mlir: what
// spirv-val rejects).
// RUN: nabla-opt %s --nabla-spirv-to-binary | FileCheck %s
// RUN: nabla-opt %s --nabla-spirv-to-binary="format=msl" | FileCheck %s --check-prefix=MSL

// CHECK: gpu.binary @kernels [#gpu.object<#spirv.target_env<{{.*}}>, bin = "\03\02#\07
// CHECK-NOT: gpu.module
// MSL: gpu.binary @kernels [#gpu.object<#spirv.target_env<{{.*}}>, properties = {language = "msl"}, assembly = "#include <metal_stdlib>{{.*}}kernel void main0()
module attributes {gpu.container_module,
    spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader], []>, #spirv.resource_limits<>>} {
  gpu.module @kernels {
    spirv.module @__spv__kernels Logical GLSL450 requires #spirv.vce<v1.3, [Shader], []> {
      spirv.func @main() "None" {
        spirv.Return
      }
      spirv.EntryPoint "GLCompute" @main
      spirv.ExecutionMode @main "LocalSize", 64, 1, 1
    }
  }
}
