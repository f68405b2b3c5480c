// A bf16 kernel for the Python tests: y = x^3 with f32 math, bf16 storage
// (test_check_gradient.py, test_torch.py).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @cube(%x: memref<?xbf16>, %y: memref<?xbf16>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %h = memref.load %x[%i] : memref<?xbf16>
        %v = arith.extf %h : bf16 to f32
        %s = arith.mulf %v, %v : f32
        %c = arith.mulf %s, %v : f32
        %r = arith.truncf %c : f32 to bf16
        memref.store %r, %y[%i] : memref<?xbf16>
      }
      gpu.return
    }
  }
}
