// RUN: nabla-opt %s --nabla-to-nvvm="chip=sm_80" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-spirv | FileCheck %s --check-prefix=COMPILED
// RUN: nabla-opt %s --nabla-to-metal | FileCheck %s --check-prefix=COMPILED
// COMPILED-NOT: nabla.
// COMPILED: gpu.binary @program_kernel

// A host function whose kernels are gpu.launch regions (outlined before
// host-level AD) and an scf.if choosing between two of them by a runtime
// flag: y = x^3 or y = sin(x) * x, then a second region squares y in place.
module attributes {gpu.container_module} {
  func.func @program(%x: memref<16xf32>, %y: memref<16xf32>, %flag: i32) {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c0_i32 = arith.constant 0 : i32
    %cube = arith.cmpi ne, %flag, %c0_i32 : i32
    scf.if %cube {
      gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                 threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
        %a = memref.load %x[%tx] : memref<16xf32>
        %a2 = arith.mulf %a, %a : f32
        %a3 = arith.mulf %a2, %a : f32
        memref.store %a3, %y[%tx] : memref<16xf32>
        gpu.terminator
      }
    } else {
      gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                 threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
        %a = memref.load %x[%tx] : memref<16xf32>
        %s = math.sin %a : f32
        %p = arith.mulf %s, %a : f32
        memref.store %p, %y[%tx] : memref<16xf32>
        gpu.terminator
      }
    }
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
      %a = memref.load %y[%tx] : memref<16xf32>
      %p = arith.mulf %a, %a : f32
      memref.store %p, %y[%tx] : memref<16xf32>
      gpu.terminator
    }
    return
  }

  // Its gradient and tangent, as a user asks for them.
  func.func @grad(%x: memref<16xf32>, %dx: memref<16xf32>, %y: memref<16xf32>, %dy: memref<16xf32>, %flag: i32) {
    nabla.autodiff @program(%x, %dx, %y, %dy, %flag) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
        ret_activity = []} : (memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>, i32) -> ()
    return
  }
  func.func @tangent(%x: memref<16xf32>, %dx: memref<16xf32>, %y: memref<16xf32>, %dy: memref<16xf32>, %flag: i32) {
    nabla.fwddiff @program(%x, %dx, %y, %dy, %flag) {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>],
        ret_activity = []} : (memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>, i32) -> ()
    return
  }
}
