// Float atomic add without SPV_EXT_shader_atomic_float_add (forced with
// emulate-float-atomics, or because the target environment lacks it): the
// buffer is retyped to integers of the same width, loads and stores bitcast,
// and the add is a compare-exchange loop.
// RUN: nabla-opt %s -split-input-file --nabla-convert-gpu-to-spirv="workgroup-size=64 emulate-float-atomics=true" -verify-diagnostics | FileCheck %s
// RUN: nabla-opt %s -split-input-file --nabla-convert-gpu-to-spirv="workgroup-size=64" -verify-diagnostics | FileCheck %s --check-prefix=ENV

// CHECK-LABEL: gpu.module @kernels
// CHECK: spirv.func @k(%[[A:.*]]: !spirv.ptr<!spirv.struct<(!spirv.rtarray<i32, stride=4> [0])>, StorageBuffer>
// CHECK-NOT: spirv.EXT.AtomicFAdd
// CHECK: spirv.Bitcast %{{.*}} : i32 to f32
// CHECK: spirv.mlir.loop
// CHECK: ^bb1(%[[CUR:.*]]: i32):
// CHECK: %[[F:.*]] = spirv.Bitcast %[[CUR]] : i32 to f32
// CHECK: %[[S:.*]] = spirv.FAdd %[[F]], %{{.*}} : f32
// CHECK: %[[N:.*]] = spirv.Bitcast %[[S]] : f32 to i32
// CHECK: %[[SEEN:.*]] = spirv.AtomicCompareExchange <Device> <None> <None> %{{.*}}, %[[N]], %[[CUR]]
// CHECK: spirv.IEqual %[[SEEN]], %[[CUR]]
// CHECK: spirv.mlir.merge %[[CUR]] : i32
// Workgroup memory: i32 Workgroup variable, workgroup scope, result unused.
// CHECK: spirv.AtomicCompareExchange <Workgroup>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>, %s: f32)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %a = memref.load %A[%c0] : memref<?xf32>
      %old = memref.atomic_rmw addf %s, %A[%c0] : (f32, memref<?xf32>) -> f32
      %sum = arith.addf %a, %old : f32
      memref.store %sum, %A[%c0] : memref<?xf32>
      %w = memref.atomic_rmw addf %s, %tile[%c0] : (f32, memref<64xf32, #gpu.address_space<workgroup>>) -> f32
      gpu.return
    }
  }
}

// -----

// f64 uses 64-bit compare-exchange.
// CHECK-LABEL: gpu.module @doubles
// CHECK: spirv.rtarray<i64, stride=8>
// CHECK: spirv.AtomicCompareExchange <Device> <None> <None> %{{.*}}, %{{.*}}, %{{.*}} : !spirv.ptr<i64, StorageBuffer>
module attributes {gpu.container_module} {
  gpu.module @doubles {
    gpu.func @k(%A: memref<?xf64>, %s: f64) kernel {
      %c0 = arith.constant 0 : index
      %old = memref.atomic_rmw addf %s, %A[%c0] : (f64, memref<?xf64>) -> f64
      gpu.return
    }
  }
}

// -----

// A target environment without the extension emulates too.
// CHECK-LABEL: gpu.module @plain_env
// CHECK: spirv.AtomicCompareExchange
// ENV-LABEL: gpu.module @plain_env
// ENV: spirv.AtomicCompareExchange
module attributes {gpu.container_module} {
  gpu.module @plain_env attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader, Int64], [SPV_KHR_storage_buffer_storage_class]>, #spirv.resource_limits<>>} {
    gpu.func @k(%A: memref<?xf32>, %s: f32) kernel {
      %c0 = arith.constant 0 : index
      %old = memref.atomic_rmw addf %s, %A[%c0] : (f32, memref<?xf32>) -> f32
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @views attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader, Int64], [SPV_KHR_storage_buffer_storage_class]>, #spirv.resource_limits<>>} {
    gpu.func @k(%A: memref<?xf32>, %s: f32) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %v = memref.subview %A[%c4] [%c4] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
      // expected-error @below {{'memref.atomic_rmw' op needs a float atomic emulation (min/max, or an add without SPV_EXT_shader_atomic_float_add), which works on kernel parameters and allocations, not on views of them}}
      %old = memref.atomic_rmw addf %s, %v[%c0] : (f32, memref<?xf32, strided<[1], offset: ?>>) -> f32
      gpu.return
    }
  }
}

// -----

// The extension with only the f32 capability: f32 stays native, f64 emulates.
// ENV-LABEL: gpu.module @f32_only
// ENV: spirv.EXT.AtomicFAdd <Device> <None> %{{.*}}, %{{.*}} : !spirv.ptr<f32, StorageBuffer>
// ENV: spirv.AtomicCompareExchange <Device> <None> <None> %{{.*}}, %{{.*}}, %{{.*}} : !spirv.ptr<i64, StorageBuffer>
module attributes {gpu.container_module} {
  gpu.module @f32_only attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader, Int64, Float64, AtomicFloat32AddEXT], [SPV_KHR_storage_buffer_storage_class, SPV_EXT_shader_atomic_float_add]>, #spirv.resource_limits<>>} {
    gpu.func @k(%A: memref<?xf32>, %s: f32, %B: memref<?xf64>, %t: f64) kernel {
      %c0 = arith.constant 0 : index
      %a = memref.atomic_rmw addf %s, %A[%c0] : (f32, memref<?xf32>) -> f32
      %b = memref.atomic_rmw addf %t, %B[%c0] : (f64, memref<?xf64>) -> f64
      gpu.return
    }
  }
}

// -----

// Float min/max atomics have no Vulkan instruction: always emulated, and the
// buffer's add is emulated with them (the buffer is retyped as a whole).
// CHECK-LABEL: gpu.module @maxima
// CHECK: spirv.GL.FMax
// CHECK: spirv.AtomicCompareExchange <Workgroup>
// CHECK: spirv.GL.FMin
// CHECK: spirv.AtomicCompareExchange <Device>
// ENV-LABEL: gpu.module @maxima
// ENV-NOT: spirv.EXT.AtomicFAdd
// ENV: spirv.GL.FMax
module attributes {gpu.container_module} {
  gpu.module @maxima {
    gpu.func @k(%A: memref<?xf32>, %s: f32)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %m = memref.atomic_rmw maximumf %s, %tile[%c0] : (f32, memref<64xf32, #gpu.address_space<workgroup>>) -> f32
      %n = memref.atomic_rmw minnumf %s, %A[%c0] : (f32, memref<?xf32>) -> f32
      %a = memref.atomic_rmw addf %s, %A[%c0] : (f32, memref<?xf32>) -> f32
      gpu.return
    }
  }
}

// -----

// 16-bit elements (bf16 bits after nabla-emulate-bf16, f16): Vulkan has no
// 16-bit atomics, so the buffer becomes the 32-bit words holding two
// elements. A load extracts its half, a store clears and sets it with two
// word atomics (the other half may be another thread's), and an atomic is a
// compare-exchange loop on the word whose body combines the extracted half.
// CHECK-LABEL: gpu.module @halves
// CHECK: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<32 x i32>)>, Workgroup>
// CHECK: spirv.func @k(%arg0: !spirv.ptr<!spirv.struct<(!spirv.rtarray<i32, stride=4> [0])>, StorageBuffer> {{.*}}, %arg1: !spirv.ptr<!spirv.struct<(!spirv.rtarray<i32, stride=4> [0])>, StorageBuffer>
// CHECK: spirv.UDiv
// CHECK: spirv.UMod
// CHECK: spirv.ShiftRightLogical
// CHECK: spirv.SConvert %{{.*}} : i32 to i16
// CHECK: spirv.AtomicAnd <Device> <None>
// CHECK: spirv.AtomicOr <Device> <None>
// CHECK: spirv.mlir.loop
// CHECK: spirv.SConvert %{{.*}} : i32 to i16
// CHECK: spirv.FAdd %{{.*}}, %{{.*}} : f32
// CHECK: spirv.ShiftLeftLogical
// CHECK: spirv.AtomicCompareExchange <Device> <None> <None> %{{.*}}, %{{.*}}, %{{.*}} : !spirv.ptr<i32, StorageBuffer>
// f16: the bits in the loop's body are the f16 the add takes.
// CHECK: spirv.mlir.loop
// CHECK: spirv.Bitcast %{{.*}} : i16 to f16
// CHECK: spirv.FAdd %{{.*}}, %{{.*}} : f16
// CHECK: spirv.AtomicCompareExchange <Device>
// Workgroup memory (64 halves in the 32 words above).
// CHECK: spirv.AtomicCompareExchange <Workgroup>
module attributes {gpu.container_module} {
  gpu.module @halves {
    gpu.func @k(%H: memref<?xi16>, %F: memref<?xf16>, %i: index, %v: i16, %s: f16)
        workgroup(%tile: memref<64xi16, #gpu.address_space<workgroup>>) kernel {
      %c1 = arith.constant 1 : index
      %h = memref.load %H[%i] : memref<?xi16>
      memref.store %v, %H[%c1] : memref<?xi16>
      %old = memref.generic_atomic_rmw %H[%i] : memref<?xi16> {
      ^bb0(%cur: i16):
        %c16 = arith.constant 16 : i32
        %w = arith.extui %cur : i16 to i32
        %f = arith.shli %w, %c16 : i32
        %x = arith.bitcast %f : i32 to f32
        %y = arith.extui %h : i16 to i32
        %g = arith.shli %y, %c16 : i32
        %z = arith.bitcast %g : i32 to f32
        %sum = arith.addf %x, %z : f32
        %b = arith.bitcast %sum : f32 to i32
        %t = arith.shrui %b, %c16 : i32
        %r = arith.trunci %t : i32 to i16
        memref.atomic_yield %r : i16
      }
      %a = memref.atomic_rmw addf %s, %F[%i] : (f16, memref<?xf16>) -> f16
      %m = memref.atomic_rmw addi %v, %tile[%i] : (i16, memref<64xi16, #gpu.address_space<workgroup>>) -> i16
      gpu.return
    }
  }
}
