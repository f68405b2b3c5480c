// nabla-check-target-support: located errors naming the op and the target.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-check-target-support=target=nvvm

// A derivative request left unexpanded.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @f(%x: f32) { return }
    gpu.func @k(%x: f32) kernel {
      // expected-error @below {{'nabla.autodiff' op cannot be lowered by the nvvm target: derivative requests must be expanded by --nabla-differentiate first}}
      nabla.autodiff @f(%x) {activity = [#nabla.activity<const>], ret_activity = []} : (f32) -> ()
      gpu.return
    }
  }
}

// -----

// CUDA's __activemask as the raise knows it, outside the raise.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%y: memref<?xi32>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{'nabla.active_lanes' op cannot be lowered by the nvvm target: the LLVM IR frontend resolves it (--nabla-raise-llvm); it has no lowering of its own}}
      %m = nabla.active_lanes : i32
      memref.store %m, %y[%c0] : memref<?xi32>
      gpu.return
    }
  }
}

// -----

// A relocation use left unlowered.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{'reloc.global' op cannot be lowered by the nvvm target: relocation ops must be lowered by --reloc-lower first}}
    reloc.global @g : memref<4xf32> {key = "k"}
    gpu.func @k() kernel {
      // expected-error @below {{'reloc.get_global' op cannot be lowered by the nvvm target: relocation ops must be lowered by --reloc-lower first}}
      %m = reloc.get_global @g : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A dialect the pipeline has no lowering for.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%t: tensor<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{'tensor.extract' op is not supported by the nvvm target}}
      %x = tensor.extract %t[%c0] : tensor<4xf32>
      gpu.return
    }
  }
}

// -----

// RUN: not nabla-opt %s -split-input-file --nabla-check-target-support=target=spirv 2>&1 | FileCheck %s --check-prefix=SPIRV-F64
// SPIRV-F64: error: 'math.sin' op on f64 has no lowering for the spirv target (GLSL.std.450 transcendentals are 32-bit); use f32, or the nvvm/rocdl targets
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: f64) kernel {
      %s = math.sin %x : f64
      gpu.return
    }
  }
}
