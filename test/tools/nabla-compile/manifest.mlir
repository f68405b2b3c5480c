// nabla-compile writes <module>.<ext> and a manifest with the parameter ABI of
// each target; the same input gives byte-identical outputs.
// RUN: rm -rf %t && nabla-compile %s --target=spirv --block=32 -o %t/spirv
// RUN: ls %t/spirv | FileCheck %s --check-prefix=FILES-SPIRV
// RUN: FileCheck %s --check-prefix=SPIRV < %t/spirv/manifest.json
// RUN: nabla-compile %s --target=spirv --block=32 -o %t/again
// RUN: cmp %t/spirv/kernels.spv %t/again/kernels.spv
// RUN: cmp %t/spirv/manifest.json %t/again/manifest.json
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t/nvvm
// RUN: FileCheck %s --check-prefix=NVVM < %t/nvvm/manifest.json
// RUN: nabla-compile %s --target=rocdl -o %t/rocdl
// RUN: ls %t/rocdl | FileCheck %s --check-prefix=FILES-ROCDL
// RUN: nabla-compile %s --target=metal --block=32 -o %t/metal
// RUN: ls %t/metal | FileCheck %s --check-prefix=FILES-METAL

// FILES-SPIRV: kernels.spv
// FILES-SPIRV-NEXT: manifest.json
// FILES-ROCDL: kernels.hsaco
// FILES-METAL: kernels.metal

// SPIRV: "format": "nabla-manifest",
// SPIRV: "kernels": [
// SPIRV: "bindings": [
// SPIRV:      "binding": 0,
// SPIRV-NEXT: "kind": "buffer",
// SPIRV-NEXT: "layout": "runtime_array",
// SPIRV-NEXT: "param": 0,
// SPIRV-NEXT: "set": 0,
// SPIRV-NEXT: "type": "f32"
// SPIRV:      "binding": 1,
// SPIRV-NEXT: "kind": "scalar",
// SPIRV-NEXT: "param": 1,
// SPIRV-NEXT: "set": 0,
// SPIRV-NEXT: "type": "f32"
// SPIRV:      "binding": 2,
// SPIRV-NEXT: "kind": "scalar",
// SPIRV-NEXT: "param": 2,
// SPIRV-NEXT: "set": 0,
// SPIRV-NEXT: "type": "i32"
// SPIRV:      "binding": 3,
// SPIRV-NEXT: "kind": "buffer",
// SPIRV:      "binding": 4,
// SPIRV-NEXT: "dim": 1,
// SPIRV-NEXT: "kind": "size",
// SPIRV-NEXT: "param": 3,
// SPIRV:      "module": "kernels",
// SPIRV-NEXT: "name": "axpy",
// SPIRV:      "type": "memref<?xf32>"
// SPIRV:      "type": "memref<4x?xf32>"
// SPIRV:      "workgroup_size": [
// SPIRV-NEXT:   32,
// SPIRV-NEXT:   1,
// SPIRV-NEXT:   1
// SPIRV:      "modules": {
// SPIRV-NEXT:   "kernels": [
// SPIRV-NEXT:     "kernels.spv"
// SPIRV:      "relocations": [],
// SPIRV-NEXT: "target": "spirv",

// NVVM: "arguments": [
// NVVM:      "field": "allocated",
// NVVM-NEXT: "param": 0,
// NVVM-NEXT: "type": "ptr"
// NVVM:      "field": "aligned",
// NVVM:      "field": "offset",
// NVVM:      "dim": 0,
// NVVM-NEXT: "field": "size",
// NVVM:      "dim": 0,
// NVVM-NEXT: "field": "stride",
// NVVM:      "field": "value",
// NVVM-NEXT: "param": 1,
// NVVM-NEXT: "type": "f32"
// NVVM:      "field": "value",
// NVVM-NEXT: "param": 2,
// NVVM-NEXT: "type": "i64"
// NVVM:      "workgroup_size": null
// NVVM:      "kernels.ptx",
// NVVM-NEXT: "kernels.cubin"
// NVVM:      "target": "nvvm",
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @axpy(%Y: memref<?xf32>, %a: f32, %n: index, %X: memref<4x?xf32>) kernel {
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %X[%c0, %i] : memref<4x?xf32>
        %y = memref.load %Y[%i] : memref<?xf32>
        %ax = arith.mulf %a, %x : f32
        %r = arith.addf %ax, %y : f32
        memref.store %r, %Y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
