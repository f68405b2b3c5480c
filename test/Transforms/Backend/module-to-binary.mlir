// nabla-module-to-binary (in nabla-to-nvvm): a libdevice function called from
// more places than outline-calls (16) stays one out-of-line .func the call
// sites call; a function called from a few places is inlined at each, as
// upstream's gpu-module-to-binary does for all (libdevice is alwaysinline).
// REQUIRES: ptxas
// RUN: nabla-opt %s --nabla-to-nvvm="cubin=false" | FileCheck %s
// CHECK-LABEL: gpu.binary @many
// CHECK-SAME: .func (.param .b32 func_retval0) __nv_sinf
// CHECK-COUNT-20: call.uni (retval0), __nv_sinf
// CHECK-LABEL: gpu.binary @few
// CHECK-NOT: call.uni
// CHECK-NOT: gpu.binary
module attributes {gpu.container_module} {
  gpu.module @many {
    gpu.func @sines(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x0 = memref.load %A[%c0] : memref<?xf32>
      %x1 = math.sin %x0 : f32
      %x2 = math.sin %x1 : f32
      %x3 = math.sin %x2 : f32
      %x4 = math.sin %x3 : f32
      %x5 = math.sin %x4 : f32
      %x6 = math.sin %x5 : f32
      %x7 = math.sin %x6 : f32
      %x8 = math.sin %x7 : f32
      %x9 = math.sin %x8 : f32
      %x10 = math.sin %x9 : f32
      %x11 = math.sin %x10 : f32
      %x12 = math.sin %x11 : f32
      %x13 = math.sin %x12 : f32
      %x14 = math.sin %x13 : f32
      %x15 = math.sin %x14 : f32
      %x16 = math.sin %x15 : f32
      %x17 = math.sin %x16 : f32
      %x18 = math.sin %x17 : f32
      %x19 = math.sin %x18 : f32
      %x20 = math.sin %x19 : f32
      memref.store %x20, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @few {
    gpu.func @sines(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x0 = memref.load %A[%c0] : memref<?xf32>
      %x1 = math.sin %x0 : f32
      %x2 = math.sin %x1 : f32
      %x3 = math.sin %x2 : f32
      memref.store %x3, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
