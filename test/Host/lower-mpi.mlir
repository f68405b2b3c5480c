// RUN: nabla-opt %s --nabla-lower-host-to-llvm=target=spirv | FileCheck %s

// Host programs may use upstream's mpi dialect, lowered by mpi-to-llvm
// (through convert-to-llvm) for the implementation the DLTI map names.
// MLIR 22 has no pattern for mpi.comm_size; for MPICH the host lowering
// calls MPI_Comm_size itself, the communicator handle the same i32 the
// upstream lowering passes to MPI_Comm_rank.

module attributes {gpu.container_module, dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  gpu.binary @kernels [#gpu.object<#spirv.target_env<#spirv.vce<v1.0, [Shader], []>, #spirv.resource_limits<>>, "">]
  func.func @main(%send: memref<4xf32>, %recv: memref<4xf32>) -> i32 {
    %c1 = arith.constant 1 : index
    mpi.init
    %comm = mpi.comm_world : !mpi.comm
    %rank = mpi.comm_rank(%comm) : i32
    %size = mpi.comm_size(%comm) : i32
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%send : memref<4xf32>)
    mpi.allreduce(%send, %recv, MPI_SUM, %comm) : memref<4xf32>, memref<4xf32>
    mpi.finalize
    %sum = arith.addi %rank, %size : i32
    return %sum : i32
  }
}

// CHECK-LABEL: llvm.func @main(
// CHECK:         %[[WORLD:.*]] = llvm.mlir.constant(1140850688 : i64) : i64
// CHECK:         llvm.call @MPI_Init(
// CHECK:         llvm.call @MPI_Comm_rank(
// CHECK:         %[[HANDLE:.*]] = llvm.trunc %[[WORLD]] : i64 to i32
// CHECK:         %[[SLOT:.*]] = llvm.alloca %{{.*}} x i32 : (i64) -> !llvm.ptr
// CHECK:         llvm.call @MPI_Comm_size(%[[HANDLE]], %[[SLOT]]) : (i32, !llvm.ptr) -> i32
// CHECK:         %[[SIZE:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> i32
// CHECK:         gpu.launch_func <%{{.*}} : !llvm.ptr> @kernels::@k
// CHECK:         llvm.call @MPI_Allreduce(
// CHECK:         llvm.call @MPI_Finalize(
// CHECK:         llvm.add %{{.*}}, %[[SIZE]] : i32
// CHECK-NOT:     mpi.
// CHECK:       llvm.func @MPI_Comm_size(i32, !llvm.ptr) -> i32
