// Every pipeline refuses what it cannot lower with a located error: here the
// seed kernel's unexpanded derivative request.
// RUN: not nabla-opt %nabla_src_root/examples/mul_kernel.mlir --pass-pipeline="builtin.module(nabla-to-nvvm)" 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: not nabla-opt %nabla_src_root/examples/mul_kernel.mlir --pass-pipeline="builtin.module(nabla-to-spirv{workgroup-size=64})" 2>&1 | FileCheck %s --check-prefix=SPIRV
// NVVM: mul_kernel.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'nabla.autodiff' op cannot be lowered by the nvvm target
// SPIRV: mul_kernel.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'nabla.autodiff' op cannot be lowered by the spirv target
