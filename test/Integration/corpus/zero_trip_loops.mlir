// Corpus: loop and branch results when a loop runs zero times. An scf.for
// whose trip count m comes from a parameter (m = 0 must give the init
// values), a nested loop whose first inner loop has no trip, an scf.while
// whose condition fails at once, and an scf.if with a result.
// RUN: nabla-compile %s --target=nvvm --chip=sm_80 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl && llvm-readelf -h %t.rocdl/kernels.hsaco | FileCheck %s --check-prefix=HSACO
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=spirv --block=64 --opt-level=0 -o %t.spirv0 && spirv-val --target-env vulkan1.1 %t.spirv0/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal && FileCheck %s --check-prefix=MSL < %t.metal/kernels.metal
// HSACO: Machine: EM_AMDGPU
// MSL: kernel void loops(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Y[i] = for^m(a -> a/2 + 1) from X[i]; K[i] = 7 + 3m;
    // Y[n + i] = while^m(a -> a + 1) from X[i];
    // Y[2n + i] = m > 0 ? 2 X[i] : X[i] - 1;
    // Y[3n + i] = X[i] + sum_{k < m} k (inner loops of k trips).
    gpu.func @loops(%X: memref<?xf32>, %Y: memref<?xf32>, %K: memref<?xi32>, %m: index, %n: index) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%i] : memref<?xf32>
        %half = arith.constant 0.5 : f32
        %one = arith.constant 1.0 : f32
        %seven = arith.constant 7 : i32
        %three = arith.constant 3 : i32
        %r:2 = scf.for %k = %c0 to %m step %c1 iter_args(%a = %x, %c = %seven) -> (f32, i32) {
          %h = arith.mulf %a, %half : f32
          %a1 = arith.addf %h, %one : f32
          %c3 = arith.addi %c, %three : i32
          scf.yield %a1, %c3 : f32, i32
        }
        memref.store %r#0, %Y[%i] : memref<?xf32>
        memref.store %r#1, %K[%i] : memref<?xi32>

        %w:2 = scf.while (%j = %c0, %acc = %x) : (index, f32) -> (index, f32) {
          %more = arith.cmpi ult, %j, %m : index
          scf.condition(%more) %j, %acc : index, f32
        } do {
        ^bb0(%j: index, %acc: f32):
          %acc1 = arith.addf %acc, %one : f32
          %j1 = arith.addi %j, %c1 : index
          scf.yield %j1, %acc1 : index, f32
        }
        %i1 = arith.addi %i, %n : index
        memref.store %w#1, %Y[%i1] : memref<?xf32>

        %positive = arith.cmpi ugt, %m, %c0 : index
        %q = scf.if %positive -> f32 {
          %twice = arith.addf %x, %x : f32
          scf.yield %twice : f32
        } else {
          %less = arith.subf %x, %one : f32
          scf.yield %less : f32
        }
        %i2 = arith.addi %i1, %n : index
        memref.store %q, %Y[%i2] : memref<?xf32>

        %t = scf.for %k = %c0 to %m step %c1 iter_args(%s = %x) -> (f32) {
          %u = scf.for %j = %c0 to %k step %c1 iter_args(%v = %s) -> (f32) {
            %v1 = arith.addf %v, %one : f32
            scf.yield %v1 : f32
          }
          scf.yield %u : f32
        }
        %i3 = arith.addi %i2, %n : index
        memref.store %t, %Y[%i3] : memref<?xf32>
      }
      gpu.return
    }
  }
}
