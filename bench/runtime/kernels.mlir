// Kernels of the runtime benchmark: an empty kernel (launch + sync latency)
// and a copy kernel (bandwidth), both target-neutral.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @empty(%A: memref<?xf32>) kernel {
      gpu.return
    }
    gpu.func @copy(%Src: memref<?xf32>, %Dst: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %Src[%i] : memref<?xf32>
        memref.store %v, %Dst[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
