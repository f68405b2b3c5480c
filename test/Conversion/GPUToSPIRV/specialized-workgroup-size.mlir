// A kernel without known_block_size or workgroup-size gets its workgroup size
// at launch: gpu.block_dim reads a composite of specialization constants
// (SpecIds 100-102), which the binary decorates BuiltIn WorkgroupSize.
// RUN: nabla-opt %s --nabla-convert-gpu-to-spirv | FileCheck %s
// RUN: nabla-opt %s --nabla-to-spirv="host-lowering=false" -o /dev/null
// RUN: nabla-compile %s --target=spirv -o %t && spirv-val --target-env vulkan1.1 %t/kernels.spv
// RUN: spirv-dis %t/kernels.spv | FileCheck %s --check-prefix=BINARY
// RUN: FileCheck %s --input-file=%t/manifest.json --check-prefix=MANIFEST
// Metal: the same constants become function constants the host sets.
// RUN: nabla-compile %s --target=metal -o %t.metal && FileCheck %s --input-file=%t.metal/kernels.metal --check-prefix=MSL

// CHECK: spirv.SpecConstant @nabla_workgroup_size_x spec_id(100) = 1 : i32
// CHECK: spirv.SpecConstant @nabla_workgroup_size_y spec_id(101) = 1 : i32
// CHECK: spirv.SpecConstant @nabla_workgroup_size_z spec_id(102) = 1 : i32
// CHECK: spirv.SpecConstantComposite @nabla_workgroup_size (@nabla_workgroup_size_x, @nabla_workgroup_size_y, @nabla_workgroup_size_z) : vector<3xi32>
// CHECK-LABEL: spirv.func @k
// CHECK: spirv.mlir.referenceof @nabla_workgroup_size : vector<3xi32>
// CHECK-NOT: built_in = "WorkgroupSize"
// BINARY-DAG: OpDecorate %[[X:.*]] SpecId 100
// BINARY-DAG: OpDecorate %[[WG:.*]] BuiltIn WorkgroupSize
// BINARY-DAG: %[[WG]] = OpSpecConstantComposite
// BINARY-NOT: LocalSize
// MANIFEST: "workgroup_size": null
// MSL: constant uint nabla_workgroup_size_x_tmp {{\[\[}}function_constant(100)]];
// MSL: constant uint3 gl_WorkGroupSize {{.*}} = uint3(nabla_workgroup_size_x, nabla_workgroup_size_y, nabla_workgroup_size_z);
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %n = gpu.block_dim x
      %b = gpu.block_id x
      %base = arith.muli %b, %n : index
      %i = arith.addi %base, %t : index
      %v = memref.load %A[%i] : memref<?xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %A[%i] : memref<?xf32>
      gpu.return
    }
  }
}
