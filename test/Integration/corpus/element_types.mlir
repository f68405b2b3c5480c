// Buffers of every element type a kernel can take: i8 (int8, uint8 and bool
// buffers), i16, f16, f32, i32, i64. test_element_types.py runs @widen and
// @flags on lavapipe with .npy buffers of each dtype, against NumPy.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// RUN: nabla-compile %s --target=metal --block=64 -o %t.metal
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // out[i] = a[i] + b[i] + h[i] (signed i8 and i16, f16), widened to f32;
    // big[i] = a[i] as i64.
    gpu.func @widen(%a: memref<?xi8>, %b: memref<?xi16>, %h: memref<?xf16>,
                    %out: memref<?xf32>, %big: memref<?xi64>, %n: index) kernel {
      %i = gpu.global_id x
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %x = memref.load %a[%i] : memref<?xi8>
        %y = memref.load %b[%i] : memref<?xi16>
        %z = memref.load %h[%i] : memref<?xf16>
        %fx = arith.sitofp %x : i8 to f32
        %fy = arith.sitofp %y : i16 to f32
        %fz = arith.extf %z : f16 to f32
        %s = arith.addf %fx, %fy : f32
        %t = arith.addf %s, %fz : f32
        memref.store %t, %out[%i] : memref<?xf32>
        %w = arith.extsi %x : i8 to i64
        memref.store %w, %big[%i] : memref<?xi64>
      }
      gpu.return
    }
    // flags[i] = (v[i] > 0) as a byte, counts[i] = bytes[i] + 1 (unsigned
    // wrap-around), halves[i] = v[i] / 2 as f16.
    gpu.func @flags(%v: memref<?xf32>, %flags: memref<?xi8>, %bytes: memref<?xi8>,
                    %halves: memref<?xf16>, %n: index) kernel {
      %i = gpu.global_id x
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %x = memref.load %v[%i] : memref<?xf32>
        %zero = arith.constant 0.0 : f32
        %pos = arith.cmpf ogt, %x, %zero : f32
        %flag = arith.extui %pos : i1 to i8
        memref.store %flag, %flags[%i] : memref<?xi8>
        %b = memref.load %bytes[%i] : memref<?xi8>
        %one = arith.constant 1 : i8
        %b1 = arith.addi %b, %one : i8
        memref.store %b1, %bytes[%i] : memref<?xi8>
        %half = arith.constant 0.5 : f32
        %hx = arith.mulf %x, %half : f32
        %h = arith.truncf %hx : f32 to f16
        memref.store %h, %halves[%i] : memref<?xf16>
      }
      gpu.return
    }
    // A char parameter (a one-element i8 storage buffer on SPIR-V, which
    // needs SPV_KHR_8bit_storage): compiled for every target by the RUN
    // lines above.
    gpu.func @fill_bytes(%out: memref<?xi8>, %c: i8, %n: index) kernel {
      %i = gpu.global_id x
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        memref.store %c, %out[%i] : memref<?xi8>
      }
      gpu.return
    }
  }
}
