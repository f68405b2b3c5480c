// Data-parallel training of mlp.mlir's MLP across MPI ranks: train.py
// --ranks N appends these host functions and kernels to mlp.mlir's module
// (with the module attribute naming the MPI implementation) and runs @train_dp
// under `mpirun -np N nabla-run ... --entry=train_dp`. Every rank gets the
// whole batch and the same initial parameters, takes its shard of the rows,
// and asks for the gradient of @loss_fn_dp: its shard's loss (mlp.mlir's
// @loss_fn), summed over ranks by mpi.allreduce and divided by the rank count.
// Host-level AD differentiates through the allreduce (the adjoint of a sum
// over ranks is a sum over ranks of the cotangents), so each rank's seed of
// 1/N makes its parameter shadows hold its shard's share of the gradient; the
// step then sums the shares over ranks (mpi.allreduce) and updates the
// replicated parameters, as data-parallel training does. The loss curve is
// the single-process run's on the same global batch.
module {
  gpu.module @shard {
    // Xs[r, c] = X[first + r, c]
    gpu.func @rows(%X: memref<?x?xf32>, %Xs: memref<?x?xf32>, %first: index, %count: index,
                   %cols: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bx = gpu.block_id x
      %dx = gpu.block_dim x
      %tx = gpu.thread_id x
      %r0 = arith.muli %bx, %dx : index
      %r = arith.addi %r0, %tx : index
      %inside = arith.cmpi ult, %r, %count : index
      scf.if %inside {
        %src = arith.addi %first, %r : index
        scf.for %c = %c0 to %cols step %c1 {
          %v = memref.load %X[%src, %c] : memref<?x?xf32>
          memref.store %v, %Xs[%r, %c] : memref<?x?xf32>
        }
      }
      gpu.return
    }
    // ys[r] = y[first + r]
    gpu.func @labels(%y: memref<?xi32>, %ys: memref<?xi32>, %first: index, %count: index) kernel {
      %bx = gpu.block_id x
      %dx = gpu.block_dim x
      %tx = gpu.thread_id x
      %r0 = arith.muli %bx, %dx : index
      %r = arith.addi %r0, %tx : index
      %inside = arith.cmpi ult, %r, %count : index
      scf.if %inside {
        %src = arith.addi %first, %r : index
        %v = memref.load %y[%src] : memref<?xi32>
        memref.store %v, %ys[%r] : memref<?xi32>
      }
      gpu.return
    }
    // loss[0] *= factor
    gpu.func @scale(%loss: memref<1xf32>, %factor: f32) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %loss[%c0] : memref<1xf32>
      %s = arith.mulf %v, %factor : f32
      memref.store %s, %loss[%c0] : memref<1xf32>
      gpu.return
    }
  }

  // The mean cross-entropy over the whole batch, computed as the mean over
  // ranks of each rank's shard mean.
  func.func @loss_fn_dp(%X: memref<?x?xf32>, %y: memref<?xi32>, %W1: memref<?x?xf32>, %b1: memref<?xf32>,
                        %W2: memref<?x?xf32>, %b2: memref<?xf32>, %loss: memref<1xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %one = arith.constant 1.0 : f32
    %comm = mpi.comm_world : !mpi.comm
    %rank_i32 = mpi.comm_rank(%comm) : i32
    %size_i32 = mpi.comm_size(%comm) : i32
    %rank = arith.index_cast %rank_i32 : i32 to index
    %size = arith.index_cast %size_i32 : i32 to index
    %batch = memref.dim %X, %c0 : memref<?x?xf32>
    %inputs = memref.dim %X, %c1 : memref<?x?xf32>
    %count = arith.divui %batch, %size : index
    %first = arith.muli %rank, %count : index
    %Xs = gpu.alloc (%count, %inputs) : memref<?x?xf32>
    %ys = gpu.alloc (%count) : memref<?xi32>
    %blocks = arith.ceildivui %count, %c64 : index
    gpu.launch_func @shard::@rows blocks in (%blocks, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%X : memref<?x?xf32>, %Xs : memref<?x?xf32>, %first : index, %count : index, %inputs : index)
    gpu.launch_func @shard::@labels blocks in (%blocks, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%y : memref<?xi32>, %ys : memref<?xi32>, %first : index, %count : index)
    %local = gpu.alloc () : memref<1xf32>
    func.call @loss_fn(%Xs, %ys, %W1, %b1, %W2, %b2, %local)
        : (memref<?x?xf32>, memref<?xi32>, memref<?x?xf32>, memref<?xf32>, memref<?x?xf32>, memref<?xf32>,
           memref<1xf32>) -> ()
    // Summed over ranks through host memory (MPI's buffers).
    %sent = memref.alloc () : memref<1xf32>
    %summed = memref.alloc () : memref<1xf32>
    gpu.memcpy %sent, %local : memref<1xf32>, memref<1xf32>
    mpi.allreduce(%sent, %summed, MPI_SUM, %comm) : memref<1xf32>, memref<1xf32>
    gpu.memcpy %loss, %summed : memref<1xf32>, memref<1xf32>
    %size_f = arith.sitofp %size_i32 : i32 to f32
    %inverse = arith.divf %one, %size_f : f32
    gpu.launch_func @shard::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%loss : memref<1xf32>, %inverse : f32)
    memref.dealloc %summed : memref<1xf32>
    memref.dealloc %sent : memref<1xf32>
    gpu.dealloc %local : memref<1xf32>
    gpu.dealloc %ys : memref<?xi32>
    gpu.dealloc %Xs : memref<?x?xf32>
    return
  }

  func.func @grad_dp(%X: memref<?x?xf32>, %y: memref<?xi32>, %W1: memref<?x?xf32>, %dW1: memref<?x?xf32>,
                     %b1: memref<?xf32>, %db1: memref<?xf32>, %W2: memref<?x?xf32>, %dW2: memref<?x?xf32>,
                     %b2: memref<?xf32>, %db2: memref<?xf32>, %loss: memref<1xf32>, %dloss: memref<1xf32>) {
    nabla.autodiff @loss_fn_dp(%X, %y, %W1, %dW1, %b1, %db1, %W2, %dW2, %b2, %db2, %loss, %dloss) {
        activity = [#nabla.activity<const>, #nabla.activity<const>, #nabla.activity<dup>,
                    #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []}
        : (memref<?x?xf32>, memref<?xi32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, memref<?xf32>,
           memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>) -> ()
    return
  }

  // Sums a device buffer over ranks, in place, through host memory.
  func.func @sum_over_ranks(%buffer: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %n = memref.dim %buffer, %c0 : memref<?xf32>
    %comm = mpi.comm_world : !mpi.comm
    %sent = memref.alloc (%n) : memref<?xf32>
    %summed = memref.alloc (%n) : memref<?xf32>
    gpu.memcpy %sent, %buffer : memref<?xf32>, memref<?xf32>
    mpi.allreduce(%sent, %summed, MPI_SUM, %comm) : memref<?xf32>, memref<?xf32>
    gpu.memcpy %buffer, %summed : memref<?xf32>, memref<?xf32>
    memref.dealloc %summed : memref<?xf32>
    memref.dealloc %sent : memref<?xf32>
    return
  }

  // mlp.mlir's @train, data parallel: the gradient of @loss_fn_dp with a seed
  // of 1/ranks, its shares summed over ranks, then the same SGD step on every
  // rank.
  func.func @train_dp(%X: memref<?x?xf32>, %y: memref<?xi32>, %W1: memref<?x?xf32>, %b1: memref<?xf32>,
                      %W2: memref<?x?xf32>, %b2: memref<?xf32>, %losses: memref<?xf32>, %lr: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    mpi.init
    %comm = mpi.comm_world : !mpi.comm
    %size_i32 = mpi.comm_size(%comm) : i32
    %size_f = arith.sitofp %size_i32 : i32 to f32
    %seed = arith.divf %one, %size_f : f32
    %steps = memref.dim %losses, %c0 : memref<?xf32>
    %inputs = memref.dim %W1, %c0 : memref<?x?xf32>
    %hidden = memref.dim %W1, %c1 : memref<?x?xf32>
    %classes = memref.dim %W2, %c1 : memref<?x?xf32>
    %dW1 = gpu.alloc (%inputs, %hidden) : memref<?x?xf32>
    %db1 = gpu.alloc (%hidden) : memref<?xf32>
    %dW2 = gpu.alloc (%hidden, %classes) : memref<?x?xf32>
    %db2 = gpu.alloc (%classes) : memref<?xf32>
    %loss = gpu.alloc () : memref<1xf32>
    %dloss = gpu.alloc () : memref<1xf32>
    %W1f = memref.collapse_shape %W1 [[0, 1]] : memref<?x?xf32> into memref<?xf32>
    %W2f = memref.collapse_shape %W2 [[0, 1]] : memref<?x?xf32> into memref<?xf32>
    %dW1f = memref.collapse_shape %dW1 [[0, 1]] : memref<?x?xf32> into memref<?xf32>
    %dW2f = memref.collapse_shape %dW2 [[0, 1]] : memref<?x?xf32> into memref<?xf32>
    scf.for %s = %c0 to %steps step %c1 {
      gpu.memset %dW1, %zero : memref<?x?xf32>, f32
      gpu.memset %db1, %zero : memref<?xf32>, f32
      gpu.memset %dW2, %zero : memref<?x?xf32>, f32
      gpu.memset %db2, %zero : memref<?xf32>, f32
      gpu.memset %dloss, %seed : memref<1xf32>, f32
      func.call @grad_dp(%X, %y, %W1, %dW1, %b1, %db1, %W2, %dW2, %b2, %db2, %loss, %dloss)
          : (memref<?x?xf32>, memref<?xi32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, memref<?xf32>,
             memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>) -> ()
      func.call @sum_over_ranks(%dW1f) : (memref<?xf32>) -> ()
      func.call @sum_over_ranks(%db1) : (memref<?xf32>) -> ()
      func.call @sum_over_ranks(%dW2f) : (memref<?xf32>) -> ()
      func.call @sum_over_ranks(%db2) : (memref<?xf32>) -> ()
      gpu.launch_func @mlp::@record blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
          args(%loss : memref<1xf32>, %losses : memref<?xf32>, %s : index)
      func.call @update(%W1f, %dW1f, %lr) : (memref<?xf32>, memref<?xf32>, f32) -> ()
      func.call @update(%b1, %db1, %lr) : (memref<?xf32>, memref<?xf32>, f32) -> ()
      func.call @update(%W2f, %dW2f, %lr) : (memref<?xf32>, memref<?xf32>, f32) -> ()
      func.call @update(%b2, %db2, %lr) : (memref<?xf32>, memref<?xf32>, f32) -> ()
    }
    gpu.dealloc %dloss : memref<1xf32>
    gpu.dealloc %loss : memref<1xf32>
    gpu.dealloc %db2 : memref<?xf32>
    gpu.dealloc %dW2 : memref<?x?xf32>
    gpu.dealloc %db1 : memref<?xf32>
    gpu.dealloc %dW1 : memref<?x?xf32>
    mpi.finalize
    return
  }
}
