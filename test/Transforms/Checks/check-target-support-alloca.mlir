// nabla-check-target-support: a run-time-sized memref.alloca is a located
// error on every target (SPIR-V has no such variable, PTX needs ISA 7.3,
// AMDGPU a dynamic scratch stack), and f64 versions of the inverse
// trigonometric/hyperbolic functions and erfc have no SPIR-V lowering.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-check-target-support=target=rocdl
// RUN: not nabla-opt %s -split-input-file --nabla-check-target-support=target=nvvm 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: not nabla-opt %s -split-input-file --nabla-check-target-support=target=spirv 2>&1 | FileCheck %s --check-prefix=SPIRV
// RUN: not nabla-opt %s -split-input-file --nabla-check-target-support=target=metal 2>&1 | FileCheck %s --check-prefix=METAL
// nabla-compile takes one module: the first case, lines kept.
// RUN: awk '/^\/\/ -----/{exit} {print}' %s > %t.first.mlir
// RUN: %expect_exit 1 nabla-compile %t.first.mlir --target=rocdl -o %t.rocdl 2>&1 | FileCheck %s --check-prefix=COMPILE
// NVVM: check-target-support-alloca.mlir:[[# @LINE + 11]]:12: error: 'memref.alloca' op has a dynamic size, which the nvvm target cannot allocate; give the private buffer a static shape
// SPIRV: check-target-support-alloca.mlir:[[# @LINE + 10]]:12: error: 'memref.alloca' op has a dynamic size, which the spirv target cannot allocate
// METAL: check-target-support-alloca.mlir:[[# @LINE + 9]]:12: error: 'memref.alloca' op has a dynamic size, which the metal target cannot allocate
// COMPILE: .first.mlir:[[# @LINE + 8]]:12: error: 'memref.alloca' op has a dynamic size, which the rocdl target cannot allocate

// A private buffer sized by a kernel parameter.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%X: memref<?xf32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{'memref.alloca' op has a dynamic size, which the rocdl target cannot allocate; give the private buffer a static shape}}
      %p = memref.alloca(%n) : memref<?xf32>
      %x = memref.load %X[%c0] : memref<?xf32>
      memref.store %x, %p[%c0] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// The new math ops on f64: fine on rocdl (ocml), errors on SPIR-V.
// SPIRV: error: 'math.asin' op on f64 has no lowering for the spirv target
// SPIRV: error: 'math.acosh' op on f64 has no lowering for the spirv target
// SPIRV: error: 'math.erfc' op on f64 has no lowering for the spirv target
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: f64) kernel {
      %a = math.asin %x : f64
      %b = math.acosh %x : f64
      %c = math.erfc %x : f64
      gpu.return
    }
  }
}
