// nabla-check-target-support: symbols of a gpu.module become assembler names
// on NVVM and ROCDL. A '-' aborted LLVM's NVPTX printer ("Symbol name with
// unsupported characters", found by fuzzing LLVM IR), a '.' or a leading
// digit failed in ptxas or the AMDGPU assembler without a location.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-check-target-support="target=nvvm"
// RUN: nabla-opt %s -split-input-file --nabla-check-target-support="target=spirv" -o /dev/null

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{'gpu.func' op is named 'tile-sum', which the nvvm target cannot emit: its symbols are letters, digits, '_' and '$', not starting with a digit (rename it in the frontend)}}
    gpu.func @"tile-sum"(%A: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{'func.func' op is named 'helper.1', which the nvvm target cannot emit}}
    func.func @"helper.1"() {
      return
    }
    // expected-error @below {{'memref.global' op is named '9table', which the nvvm target cannot emit}}
    memref.global "private" constant @"9table" : memref<2xf32> = dense<[1.0, 2.0]>
    gpu.func @_Z3sumPf$ok(%A: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
