// A two-layer MLP trained by host-level AD (docs/HostAD.md): forward kernels
// and one host function, @loss_fn, computing the mean softmax cross-entropy
//   H = gelu(X W1 + b1),  logits = H W2 + b2,  loss = mean_b -log softmax(logits_b)[y_b]
// and @train, which runs `steps` steps of SGD: each step zeroes the
// gradients, asks for nabla.autodiff of @loss_fn (one request, which
// nabla-differentiate turns into a host function launching the kernels'
// adjoints in reverse order), records the loss and updates the parameters.
// train.py runs it on the default device and plots the loss curve.
//
// Shapes: X [batch, inputs], y [batch] (class indices, i32), W1 [inputs,
// hidden], b1 [hidden], W2 [hidden, classes], b2 [classes]; the host code
// reads them from the buffers (memref.dim) and passes them to the kernels
// (SPIR-V kernels do not receive buffer sizes), so any sizes work.
module attributes {gpu.container_module} {
  gpu.module @mlp {
    // C[r, c] = sum_k A[r, k] B[k, c] (+ bias[c]); one thread per element,
    // 16x16 blocks.
    gpu.func @matmul_bias(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %bias: memref<?xf32>,
                          %C: memref<?x?xf32>, %rows: index, %cols: index, %depth: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %dx = gpu.block_dim x
      %dy = gpu.block_dim y
      %c0x = arith.muli %bx, %dx : index
      %col = arith.addi %c0x, %tx : index
      %r0 = arith.muli %by, %dy : index
      %row = arith.addi %r0, %ty : index
      %in_rows = arith.cmpi ult, %row, %rows : index
      %in_cols = arith.cmpi ult, %col, %cols : index
      %inside = arith.andi %in_rows, %in_cols : i1
      scf.if %inside {
        %b = memref.load %bias[%col] : memref<?xf32>
        %sum = scf.for %k = %c0 to %depth step %c1 iter_args(%acc = %b) -> f32 {
          %a = memref.load %A[%row, %k] : memref<?x?xf32>
          %w = memref.load %B[%k, %col] : memref<?x?xf32>
          %p = arith.mulf %a, %w : f32
          %s = arith.addf %acc, %p : f32
          scf.yield %s : f32
        }
        memref.store %sum, %C[%row, %col] : memref<?x?xf32>
      }
      gpu.return
    }

    // H = gelu(Z), tanh approximation, elementwise over a 16x16 grid.
    gpu.func @gelu(%Z: memref<?x?xf32>, %H: memref<?x?xf32>, %rows: index, %cols: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %k0 = arith.constant 0.7978845608 : f32
      %k1 = arith.constant 0.044715 : f32
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %dx = gpu.block_dim x
      %dy = gpu.block_dim y
      %c0x = arith.muli %bx, %dx : index
      %col = arith.addi %c0x, %tx : index
      %r0 = arith.muli %by, %dy : index
      %row = arith.addi %r0, %ty : index
      %in_rows = arith.cmpi ult, %row, %rows : index
      %in_cols = arith.cmpi ult, %col, %cols : index
      %inside = arith.andi %in_rows, %in_cols : i1
      scf.if %inside {
        %z = memref.load %Z[%row, %col] : memref<?x?xf32>
        %z2 = arith.mulf %z, %z : f32
        %z3 = arith.mulf %z2, %z : f32
        %c = arith.mulf %k1, %z3 : f32
        %inner = arith.addf %z, %c : f32
        %arg = arith.mulf %k0, %inner : f32
        %t = math.tanh %arg : f32
        %onep = arith.addf %one, %t : f32
        %hz = arith.mulf %half, %z : f32
        %h = arith.mulf %hz, %onep : f32
        memref.store %h, %H[%row, %col] : memref<?x?xf32>
      }
      gpu.return
    }

    // loss += (log sum_c exp(logits[b, c]) - logits[b, y[b]]) / batch, one
    // thread per row (max subtracted first).
    gpu.func @softmax_xent(%logits: memref<?x?xf32>, %y: memref<?xi32>, %loss: memref<1xf32>,
                           %batch: index, %classes: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %ninf = arith.constant 0xFF800000 : f32
      %zero = arith.constant 0.0 : f32
      %bx = gpu.block_id x
      %dx = gpu.block_dim x
      %tx = gpu.thread_id x
      %b0 = arith.muli %bx, %dx : index
      %b = arith.addi %b0, %tx : index
      %inside = arith.cmpi ult, %b, %batch : index
      scf.if %inside {
        %m = scf.for %c = %c0 to %classes step %c1 iter_args(%acc = %ninf) -> f32 {
          %l = memref.load %logits[%b, %c] : memref<?x?xf32>
          %n = arith.maximumf %acc, %l : f32
          scf.yield %n : f32
        }
        %s = scf.for %c = %c0 to %classes step %c1 iter_args(%acc = %zero) -> f32 {
          %l = memref.load %logits[%b, %c] : memref<?x?xf32>
          %d = arith.subf %l, %m : f32
          %e = math.exp %d : f32
          %n = arith.addf %acc, %e : f32
          scf.yield %n : f32
        }
        %label = memref.load %y[%b] : memref<?xi32>
        %li = arith.index_cast %label : i32 to index
        %ly = memref.load %logits[%b, %li] : memref<?x?xf32>
        %lse = math.log %s : f32
        %lse_m = arith.addf %lse, %m : f32
        %nll = arith.subf %lse_m, %ly : f32
        %batch_i = arith.index_cast %batch : index to i32
        %batch_f = arith.sitofp %batch_i : i32 to f32
        %mean = arith.divf %nll, %batch_f : f32
        %old = memref.atomic_rmw addf %mean, %loss[%c0] : (f32, memref<1xf32>) -> f32
      }
      gpu.return
    }

    // w -= lr * dw over a flat view.
    gpu.func @sgd(%w: memref<?xf32>, %dw: memref<?xf32>, %lr: f32, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %bx = gpu.block_id x
      %dx = gpu.block_dim x
      %tx = gpu.thread_id x
      %i0 = arith.muli %bx, %dx : index
      %i = arith.addi %i0, %tx : index
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %a = memref.load %w[%i] : memref<?xf32>
        %g = memref.load %dw[%i] : memref<?xf32>
        %step = arith.mulf %lr, %g : f32
        %b = arith.subf %a, %step : f32
        memref.store %b, %w[%i] : memref<?xf32>
      }
      gpu.return
    }

    // losses[step] = loss[0]
    gpu.func @record(%loss: memref<1xf32>, %losses: memref<?xf32>, %step: index) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %loss[%c0] : memref<1xf32>
      memref.store %v, %losses[%step] : memref<?xf32>
      gpu.return
    }
  }

  // The mean cross-entropy of the MLP on (X, y), into loss[0].
  func.func @loss_fn(%X: memref<?x?xf32>, %y: memref<?xi32>, %W1: memref<?x?xf32>, %b1: memref<?xf32>,
                     %W2: memref<?x?xf32>, %b2: memref<?xf32>, %loss: memref<1xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %batch = memref.dim %X, %c0 : memref<?x?xf32>
    %inputs = memref.dim %X, %c1 : memref<?x?xf32>
    %hidden = memref.dim %W1, %c1 : memref<?x?xf32>
    %classes = memref.dim %W2, %c1 : memref<?x?xf32>
    %Z = gpu.alloc (%batch, %hidden) : memref<?x?xf32>
    %H = gpu.alloc (%batch, %hidden) : memref<?x?xf32>
    %logits = gpu.alloc (%batch, %classes) : memref<?x?xf32>
    %rows = arith.ceildivui %batch, %c16 : index
    %hcols = arith.ceildivui %hidden, %c16 : index
    %ccols = arith.ceildivui %classes, %c16 : index
    gpu.launch_func @mlp::@matmul_bias blocks in (%hcols, %rows, %c1) threads in (%c16, %c16, %c1)
        args(%X : memref<?x?xf32>, %W1 : memref<?x?xf32>, %b1 : memref<?xf32>, %Z : memref<?x?xf32>,
             %batch : index, %hidden : index, %inputs : index)
    gpu.launch_func @mlp::@gelu blocks in (%hcols, %rows, %c1) threads in (%c16, %c16, %c1)
        args(%Z : memref<?x?xf32>, %H : memref<?x?xf32>, %batch : index, %hidden : index)
    gpu.launch_func @mlp::@matmul_bias blocks in (%ccols, %rows, %c1) threads in (%c16, %c16, %c1)
        args(%H : memref<?x?xf32>, %W2 : memref<?x?xf32>, %b2 : memref<?xf32>, %logits : memref<?x?xf32>,
             %batch : index, %classes : index, %hidden : index)
    gpu.memset %loss, %zero : memref<1xf32>, f32
    %blocks = arith.ceildivui %batch, %c64 : index
    gpu.launch_func @mlp::@softmax_xent blocks in (%blocks, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%logits : memref<?x?xf32>, %y : memref<?xi32>, %loss : memref<1xf32>, %batch : index,
             %classes : index)
    gpu.dealloc %logits : memref<?x?xf32>
    gpu.dealloc %H : memref<?x?xf32>
    gpu.dealloc %Z : memref<?x?xf32>
    return
  }

  // Its gradient with respect to the parameters (X and y const): dloss = 1
  // on entry, the gradients accumulate into dW1, db1, dW2, db2.
  func.func @grad_fn(%X: memref<?x?xf32>, %y: memref<?xi32>, %W1: memref<?x?xf32>, %dW1: memref<?x?xf32>,
                     %b1: memref<?xf32>, %db1: memref<?xf32>, %W2: memref<?x?xf32>, %dW2: memref<?x?xf32>,
                     %b2: memref<?xf32>, %db2: memref<?xf32>, %loss: memref<1xf32>, %dloss: memref<1xf32>) {
    nabla.autodiff @loss_fn(%X, %y, %W1, %dW1, %b1, %db1, %W2, %dW2, %b2, %db2, %loss, %dloss) {
        activity = [#nabla.activity<const>, #nabla.activity<const>, #nabla.activity<dup>,
                    #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>],
        ret_activity = []}
        : (memref<?x?xf32>, memref<?xi32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, memref<?xf32>,
           memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>) -> ()
    return
  }

  // w -= lr * dw for a parameter of any shape (a flat view of it).
  func.func @update(%w: memref<?xf32>, %dw: memref<?xf32>, %lr: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %n = memref.dim %w, %c0 : memref<?xf32>
    %blocks = arith.ceildivui %n, %c256 : index
    gpu.launch_func @mlp::@sgd blocks in (%blocks, %c1, %c1) threads in (%c256, %c1, %c1)
        args(%w : memref<?xf32>, %dw : memref<?xf32>, %lr : f32, %n : index)
    return
  }

  // `steps` steps of SGD with learning rate `lr`; losses[s] is the loss
  // before step s.
  func.func @train(%X: memref<?x?xf32>, %y: memref<?xi32>, %W1: memref<?x?xf32>, %b1: memref<?xf32>,
                   %W2: memref<?x?xf32>, %b2: memref<?xf32>, %losses: memref<?xf32>, %lr: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
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
      gpu.memset %dloss, %one : memref<1xf32>, f32
      func.call @grad_fn(%X, %y, %W1, %dW1, %b1, %db1, %W2, %dW2, %b2, %db2, %loss, %dloss)
          : (memref<?x?xf32>, memref<?xi32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, memref<?xf32>,
             memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, memref<?xf32>, memref<1xf32>, memref<1xf32>) -> ()
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
    return
  }
}
