// nabla-check-input: every module shape or size the pipelines cannot handle
// is a located error (found by fuzzing; each crashed or misbehaved before).
// RUN: nabla-opt %s --nabla-check-input -split-input-file -verify-diagnostics

// A kernel module the pipelines accept passes unchanged.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "private" constant @table : memref<4xf32> = dense<1.0>
    gpu.func @k(%A: memref<?xf32>, %n: index, %x: f32) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @below {{'gpu.barrier' op cannot appear directly in a gpu.module body (only kernels, functions, globals and declarations)}}
    gpu.barrier
  }
}

// -----

module attributes {gpu.container_module} {
  module {
    // A nested gpu.module was silently not compiled (nabla-compile exited 0).
    // expected-error @below {{'gpu.module' op must be a direct child of the top-level module: a nested module is not compiled}}
    gpu.module @m {
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // The name is the output file's name: it must not leave the directory.
  // expected-error @below {{'gpu.module' op name '../../x' cannot name an output file}}
  gpu.module @"../../x" {
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // A tensor parameter crashed the SPIR-V lowering.
    // expected-error @below {{'gpu.func' op parameter #0 has type 'tensor<4xf32>', which no target passes to a kernel}}
    gpu.func @k(%t: tensor<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @below {{'gpu.func' op has known_block_size value 0 out of range (1 to 1024)}}
    gpu.func @k() kernel attributes {known_block_size = array<i32: 0, 1, 1>} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @below {{'gpu.func' op has known_block_size value -4 out of range (1 to 1024)}}
    gpu.func @k() kernel attributes {known_block_size = array<i32: -4, 1, 1>} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // An out-of-range nvvm.maxntid was an error without a location.
    // expected-error @below {{'gpu.func' op has nvvm.maxntid value 4096 out of range (1 to 1024)}}
    gpu.func @k() kernel attributes {nvvm.maxntid = array<i32: 4096, 1, 1>} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // A 16 GiB global exhausted memory in LLVM's constant builder.
    // expected-error @below {{'memref.global' op has a type whose static size exceeds 4294967295 bytes}}
    memref.global "private" constant @g : memref<4294967296xf32> = dense<1.0>
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @below {{'memref.global' op has an initial value larger than 268435456 bytes}}
    memref.global "private" constant @g : memref<268435456xf32> = dense<1.0>
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // A 4 GiB workgroup attribution reached LLVM's type builder.
    // expected-error @below {{'gpu.func' op has a type whose static size exceeds 4294967295 bytes}}
    gpu.func @k() workgroup(%w: memref<2147483648xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    func.func @f(%a: f32) -> f32 {
      // A huge vector hung the ROCDL back end and crashed NVVM's.
      // expected-error @below {{'vector.broadcast' op has vector type with more than 1024 elements}}
      %v = vector.broadcast %a : f32 to vector<16777216xf32>
      %r = vector.reduction <add>, %v : vector<16777216xf32> into f32
      return %r : f32
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    func.func @f(%A: memref<?x?xf32>) -> index {
      %c = arith.constant -1 : index
      // A negative constant index crashed the SPIR-V lowering.
      // expected-error @below {{'memref.dim' op index -1 is not a dimension of a rank-2 memref}}
      %d = memref.dim %A, %c : memref<?x?xf32>
      return %d : index
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    func.func @f(%A: memref<?x?xf32>) -> index {
      %c = arith.constant 2 : index
      // expected-error @below {{'memref.dim' op index 2 is not a dimension of a rank-2 memref}}
      %d = memref.dim %A, %c : memref<?x?xf32>
      return %d : index
    }
  }
}

// -----

// The lowerings copy a function's attributes onto spirv.func/llvm.func, where
// an unprefixed name may be one of theirs with another type (a gpu.func with
// `function_control = array<i32: ...>` crashed the SPIR-V conversion; found
// by fuzzing). Prefixed attributes and the functions' own pass.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{'gpu.func' op has attribute 'function_control' without a dialect prefix}}
    gpu.func @k(%X: memref<?xf32>) kernel attributes {function_control = array<i32: 128, 1, 1>, known_block_size = array<i32: 128, 1, 1>, mine.tag} {
      gpu.return
    }
    // expected-error @below {{'func.func' op has attribute 'linkage' without a dialect prefix}}
    func.func @f() attributes {linkage = 1 : i32, llvm.emit_c_interface} {
      return
    }
  }
}

// -----

// An LLVM-dialect op whose element type is not an LLVM type (a GEP over
// `index`) crashed LLVM IR translation in --nabla-to-nvvm.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @k(%p: !llvm.ptr<1>, %i: i64) attributes {gpu.kernel, nvvm.kernel} {
      // expected-error @below {{'llvm.getelementptr' op has elem_type of type 'index', which is not an LLVM type (use i64 for index)}}
      %q = llvm.getelementptr %p[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, index
      %v = llvm.load %q : !llvm.ptr<1> -> f32
      llvm.store %v, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
