// Gradient benchmark corpus (f32): each primal kernel next to its reverse-mode
// gradient kernel (shadows after each dup buffer). bench/gradients/run.py
// times them side by side on the default device; bench/run.py times the
// kernels that have a hand-written adjoint (bench/handwritten/adjoints.mlir)
// next to both: saxpy, poly, stencil, and from `histogram` on. Their outputs
// are requested `dupnoneed` (saxpy, poly, stencil, histogram, rloop): like
// the hand-written adjoints, the gradients then skip the primal's writes
// (docs/AD.md).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // y = a x + y
    func.func @saxpy(%x: memref<?xf32>, %y: memref<?xf32>, %a: f32, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %xv = memref.load %x[%i] : memref<?xf32>
        %yv = memref.load %y[%i] : memref<?xf32>
        %ax = arith.mulf %a, %xv : f32
        %r = arith.addf %ax, %yv : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @saxpy_primal(%x: memref<?xf32>, %y: memref<?xf32>, %a: f32, %n: index) kernel {
      func.call @saxpy(%x, %y, %a, %n) : (memref<?xf32>, memref<?xf32>, f32, index) -> ()
      gpu.return
    }
    gpu.func @saxpy_grad(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %a: f32, %n: index) kernel {
      nabla.autodiff @saxpy(%x, %dx, %y, %dy, %a, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, f32, index) -> ()
      gpu.return
    }

    // The seed: A = A^2
    func.func @seed(%A: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %A[%i] : memref<?xf32>
        %sq = arith.mulf %a, %a : f32
        memref.store %sq, %A[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @seed_primal(%A: memref<?xf32>, %n: index) kernel {
      func.call @seed(%A, %n) : (memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @seed_grad(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @seed(%A, %dA, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }

    // y = p(x), a degree-8 polynomial by Horner's rule
    func.func @poly(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %c0 = arith.constant 0.5 : f32
        %c1 = arith.constant -1.25 : f32
        %p1 = arith.mulf %c0, %v : f32
        %p2 = arith.addf %p1, %c1 : f32
        %p3 = arith.mulf %p2, %v : f32
        %p4 = arith.addf %p3, %c0 : f32
        %p5 = arith.mulf %p4, %v : f32
        %p6 = arith.addf %p5, %c1 : f32
        %p7 = arith.mulf %p6, %v : f32
        %p8 = arith.addf %p7, %c0 : f32
        %p9 = arith.mulf %p8, %v : f32
        %p10 = arith.addf %p9, %c1 : f32
        %p11 = arith.mulf %p10, %v : f32
        %p12 = arith.addf %p11, %c0 : f32
        %p13 = arith.mulf %p12, %v : f32
        %p14 = arith.addf %p13, %c1 : f32
        %p15 = arith.mulf %p14, %v : f32
        %p16 = arith.addf %p15, %c0 : f32
        memref.store %p16, %y[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @poly_primal(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      func.call @poly(%x, %y, %n) : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @poly_grad(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @poly(%x, %dx, %y, %dy, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }

    // y[i] = 0.25 x[i-1] + 0.5 x[i] + 0.25 x[i+1] (interior points)
    func.func @stencil(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %c1 = arith.constant 1 : index
      %last = arith.subi %n, %c1 : index
      %lo = arith.cmpi uge, %i, %c1 : index
      %hi = arith.cmpi ult, %i, %last : index
      %in = arith.andi %lo, %hi : i1
      scf.if %in {
        %im = arith.subi %i, %c1 : index
        %ip = arith.addi %i, %c1 : index
        %a = memref.load %x[%im] : memref<?xf32>
        %b = memref.load %x[%i] : memref<?xf32>
        %c = memref.load %x[%ip] : memref<?xf32>
        %q = arith.constant 0.25 : f32
        %h = arith.constant 0.5 : f32
        %qa = arith.mulf %q, %a : f32
        %hb = arith.mulf %h, %b : f32
        %qc = arith.mulf %q, %c : f32
        %s1 = arith.addf %qa, %hb : f32
        %s2 = arith.addf %s1, %qc : f32
        memref.store %s2, %y[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @stencil_primal(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      func.call @stencil(%x, %y, %n) : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @stencil_grad(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @stencil(%x, %dx, %y, %dy, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }

    // 16 in-place steps A[i] = sin(A[i]) * 0.9 + 0.1 A[i]
    func.func @loop(%A: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c16 = arith.constant 16 : index
        scf.for %k = %c0 to %c16 step %c1 {
          %a = memref.load %A[%i] : memref<?xf32>
          %s = math.sin %a : f32
          %f = arith.constant 0.9 : f32
          %g = arith.constant 0.1 : f32
          %sf = arith.mulf %s, %f : f32
          %ag = arith.mulf %a, %g : f32
          %r = arith.addf %sf, %ag : f32
          memref.store %r, %A[%i] : memref<?xf32>
        }
      }
      return
    }
    gpu.func @loop_primal(%A: memref<?xf32>, %n: index) kernel {
      func.call @loop(%A, %n) : (memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @loop_grad(%A: memref<?xf32>, %dA: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @loop(%A, %dA, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }

    // y = x > 0 ? sqrt(x) * exp(-x) : tanh(x) * x
    func.func @branchy(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %zero = arith.constant 0.0 : f32
        %pos = arith.cmpf ogt, %v, %zero : f32
        %r = scf.if %pos -> (f32) {
          %s = math.sqrt %v : f32
          %nv = arith.negf %v : f32
          %e = math.exp %nv : f32
          %p = arith.mulf %s, %e : f32
          scf.yield %p : f32
        } else {
          %t = math.tanh %v : f32
          %q = arith.mulf %t, %v : f32
          scf.yield %q : f32
        }
        memref.store %r, %y[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @branchy_primal(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      func.call @branchy(%x, %y, %n) : (memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }
    gpu.func @branchy_grad(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %n: index) kernel {
      nabla.autodiff @branchy(%x, %dx, %y, %dy, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
      gpu.return
    }

    // A histogram/scatter: bins[k(x)] += s x with k(x) = min(uint(16 |x|), 63)
    // (the bin is integer computation: inactive), by a primal atomic add.
    func.func @histogram(%x: memref<?xf32>, %bins: memref<?xf32>, %s: f32, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %sixteen = arith.constant 16.0 : f32
        %c63 = arith.constant 63 : i32
        %av = math.absf %v : f32
        %scaled = arith.mulf %av, %sixteen : f32
        %bin = arith.fptoui %scaled : f32 to i32
        %clamped = arith.minui %bin, %c63 : i32
        %k = arith.index_cast %clamped : i32 to index
        %sv = arith.mulf %v, %s : f32
        %old = memref.atomic_rmw addf %sv, %bins[%k] : (f32, memref<?xf32>) -> f32
      }
      return
    }
    gpu.func @histogram_primal(%x: memref<?xf32>, %bins: memref<?xf32>, %s: f32, %n: index) kernel {
      func.call @histogram(%x, %bins, %s, %n) : (memref<?xf32>, memref<?xf32>, f32, index) -> ()
      gpu.return
    }
    gpu.func @histogram_grad(%x: memref<?xf32>, %dx: memref<?xf32>, %bins: memref<?xf32>, %dbins: memref<?xf32>, %s: f32, %n: index) kernel {
      nabla.autodiff @histogram(%x, %dx, %bins, %dbins, %s, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, f32, index) -> ()
      gpu.return
    }

    // A runtime-bounded loop (bench/loops' kernel): m steps of
    // a = 0.5 a + 0.4 x a / (1 + a^2) from a = x, m a kernel parameter;
    // reversed by binomial checkpointing (no static bound).
    func.func @rloop(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index, %m: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f32
        %k = arith.constant 0.4 : f32
        %one = arith.constant 1.0 : f32
        %x = memref.load %X[%i] : memref<?xf32>
        %r = scf.for %j = %c0 to %m step %c1 iter_args(%a = %x) -> (f32) {
          %q = arith.mulf %a, %a : f32
          %p = arith.addf %q, %one : f32
          %s = arith.divf %a, %p : f32
          %t = arith.mulf %s, %x : f32
          %u = arith.mulf %t, %k : f32
          %h = arith.mulf %a, %half : f32
          %v = arith.addf %h, %u : f32
          scf.yield %v : f32
        }
        memref.store %r, %Y[%i] : memref<?xf32>
      }
      return
    }
    gpu.func @rloop_primal(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index, %m: index) kernel {
      func.call @rloop(%X, %Y, %n, %m) : (memref<?xf32>, memref<?xf32>, index, index) -> ()
      gpu.return
    }
    gpu.func @rloop_grad(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>, %n: index, %m: index) kernel {
      nabla.autodiff @rloop(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
          : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index, index) -> ()
      gpu.return
    }

    // Block-level kernels, differentiated as whole kernels (one block of 64
    // threads per row or block; the workgroup tiles get zeroed shadows).

    // Out[block] = sum of the block's X, by a tree in workgroup memory.
    gpu.func @blocksum(%X: memref<?xf32>, %Out: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %blk = gpu.block_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %c32 = arith.constant 32 : index
      %x = memref.load %X[%i] : memref<?xf32>
      memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k = %c0 to %c6 step %c1 {
        %s = arith.shrui %c32, %k : index
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %j = arith.addi %t, %s : index
          %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %sum = arith.addf %a, %b : f32
          memref.store %sum, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %r = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
        memref.store %r, %Out[%blk] : memref<?xf32>
      }
      gpu.return
    }
    // The outputs are dupnoneed, as the hand-written adjoints (which do not
    // recompute them) and the elementwise kernels' requests.
    nabla.kernel_adjoint @blocksum -> @blocksum_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>]}

    // Y = softmax(X) along each row of 64 (block-wide max and sum trees).
    gpu.func @softmax(%X: memref<?xf32>, %Y: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %c32 = arith.constant 32 : index
      %x = memref.load %X[%i] : memref<?xf32>
      memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k = %c0 to %c6 step %c1 {
        %s = arith.shrui %c32, %k : index
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %j = arith.addi %t, %s : index
          %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %m = arith.maximumf %a, %b : f32
          memref.store %m, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %max = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %d = arith.subf %x, %max : f32
      %e = math.exp %d : f32
      memref.store %e, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k = %c0 to %c6 step %c1 {
        %s = arith.shrui %c32, %k : index
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %j = arith.addi %t, %s : index
          %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %sum = arith.addf %a, %b : f32
          memref.store %sum, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %total = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %y = arith.divf %e, %total : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @softmax -> @softmax_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>]}

    // Y = (X - mean) / sqrt(var + 1e-5) along each row of 64 (two tree sums).
    gpu.func @layernorm(%X: memref<?xf32>, %Y: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %c32 = arith.constant 32 : index
      %inv = arith.constant 0.015625 : f32
      %x = memref.load %X[%i] : memref<?xf32>
      memref.store %x, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k1 = %c0 to %c6 step %c1 {
        %s1 = arith.shrui %c32, %k1 : index
        %active1 = arith.cmpi ult, %t, %s1 : index
        scf.if %active1 {
          %j1 = arith.addi %t, %s1 : index
          %a1 = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b1 = memref.load %tile[%j1] : memref<64xf32, #gpu.address_space<workgroup>>
          %r1 = arith.addf %a1, %b1 : f32
          memref.store %r1, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %sum = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %mean = arith.mulf %sum, %inv : f32
      gpu.barrier
      %d = arith.subf %x, %mean : f32
      %d2 = arith.mulf %d, %d : f32
      memref.store %d2, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k2 = %c0 to %c6 step %c1 {
        %s2 = arith.shrui %c32, %k2 : index
        %active2 = arith.cmpi ult, %t, %s2 : index
        scf.if %active2 {
          %j2 = arith.addi %t, %s2 : index
          %a2 = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b2 = memref.load %tile[%j2] : memref<64xf32, #gpu.address_space<workgroup>>
          %r2 = arith.addf %a2, %b2 : f32
          memref.store %r2, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %ssq = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %var = arith.mulf %ssq, %inv : f32
      %eps = arith.constant 1.0e-5 : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %y = arith.mulf %d, %rs : f32
      memref.store %y, %Y[%i] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @layernorm -> @layernorm_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dupnoneed>]}

    // C = A B for n x n row-major matrices (n a multiple of 16, n <= 256:
    // the tile loop's hint), 16 x 16 workgroup tiles and 16 x 16 blocks.
    gpu.func @matmul(%A: memref<?xf32>, %B: memref<?xf32>, %C: memref<?xf32>, %n: index)
        workgroup(%As: memref<16x16xf32, #gpu.address_space<workgroup>>,
                  %Bs: memref<16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %steps = arith.divui %n, %c16 : index
      %row0 = arith.muli %by, %c16 : index
      %row = arith.addi %row0, %ty : index
      %col0 = arith.muli %bx, %c16 : index
      %col = arith.addi %col0, %tx : index
      %rown = arith.muli %row, %n : index
      %zero = arith.constant 0.0 : f32
      %acc = scf.for %s = %c0 to %steps step %c1 iter_args(%sum = %zero) -> (f32) {
        %k0 = arith.muli %s, %c16 : index
        %ka = arith.addi %k0, %tx : index
        %kb = arith.addi %k0, %ty : index
        %ia = arith.addi %rown, %ka : index
        %kbn = arith.muli %kb, %n : index
        %ib = arith.addi %kbn, %col : index
        %a = memref.load %A[%ia] : memref<?xf32>
        %b = memref.load %B[%ib] : memref<?xf32>
        memref.store %a, %As[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        memref.store %b, %Bs[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %part = scf.for %k = %c0 to %c16 step %c1 iter_args(%p = %sum) -> (f32) {
          %x = memref.load %As[%ty, %k] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %y = memref.load %Bs[%k, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %xy = arith.mulf %x, %y : f32
          %p2 = arith.addf %p, %xy : f32
          scf.yield %p2 : f32
        }
        gpu.barrier
        scf.yield %part : f32
      } {nabla.max_trip_count = 16 : i64}
      %ic = arith.addi %rown, %col : index
      memref.store %acc, %C[%ic] : memref<?xf32>
      gpu.return
    }
    nabla.kernel_adjoint @matmul -> @matmul_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>]}
  }
}
