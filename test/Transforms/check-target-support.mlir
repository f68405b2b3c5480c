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
