// nabla-spirv-to-binary: SPIR-V that spirv-val rejects for Vulkan is a
// located error at its gpu.module, with the validator's message.
// RUN: nabla-opt %s --nabla-spirv-to-binary -verify-diagnostics

module attributes {gpu.container_module,
    spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader], []>, #spirv.resource_limits<>>} {
  // A compute entry point without a workgroup size: Vulkan requires one.
  // expected-error @below {{generated SPIR-V failed validation: [VUID-StandaloneSpirv-LocalSize-06426]}}
  gpu.module @invalid {
    spirv.module @__spv__invalid Logical GLSL450 requires #spirv.vce<v1.3, [Shader], []> {
      spirv.func @main() "None" {
        spirv.Return
      }
      spirv.EntryPoint "GLCompute" @main
    }
  }
}
