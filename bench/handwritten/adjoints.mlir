// Hand-written adjoint kernels, the anchor of bench/run.py: what an expert
// writes for the reverse mode of the kernels in bench/gradients/kernels.mlir,
// in the same target-neutral MLIR (memref<?xf32> parameters, workgroup
// attributions, gpu.barrier). Each adjoint keeps Nabla's memory semantics
// (docs/AD.md): on entry the shadows hold the cotangent of the primal's final
// state, on exit that of its initial state — read-only inputs accumulate
// (dx += ...), written outputs end with a zero shadow, read-modify-write
// buffers pass their cotangent on. A kernel whose parameters are those of the
// generated adjoint (`<name>_grad` / `<name>_adjoint`) can be launched with
// the same arguments; an adjoint that needs a second pass (the gather of the
// stencil and the matrix products read other threads' output cotangents, so
// zeroing them must wait for a later launch) is a sequence of kernels with
// the same parameters, run in order on the same buffers.
// test/Integration/test_handwritten_adjoints.py checks every one against the
// generated adjoint on lavapipe; bench/run.py compiles them for sm_90 too
// (`nabla-compile bench/handwritten/adjoints.mlir --target=nvvm --chip=sm_90`).
module attributes {gpu.container_module} {
  gpu.module @handwritten {
    // y = a x + y: dx += a dy; dy passes through (y_final depends on y with
    // weight 1).
    gpu.func @saxpy_adj(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %a: f32, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %g = memref.load %dy[%i] : memref<?xf32>
        %d = memref.load %dx[%i] : memref<?xf32>
        %r = math.fma %a, %g, %d : f32
        memref.store %r, %dx[%i] : memref<?xf32>
      }
      gpu.return
    }

    // y = p(x) (degree 8): dx += p'(x) dy by Horner's rule on the
    // derivative's coefficients; dy = 0 (y is only written).
    gpu.func @poly_adj(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        // p = 0.5 v^8 - 1.25 v^7 + 0.5 v^6 - ... - 1.25 v + 0.5, so
        // p' = 4 v^7 - 8.75 v^6 + 3 v^5 - 6.25 v^4 + 2 v^3 - 3.75 v^2 + v - 1.25.
        %k7 = arith.constant 4.0 : f32
        %k6 = arith.constant -8.75 : f32
        %k5 = arith.constant 3.0 : f32
        %k4 = arith.constant -6.25 : f32
        %k3 = arith.constant 2.0 : f32
        %k2 = arith.constant -3.75 : f32
        %k1 = arith.constant 1.0 : f32
        %k0 = arith.constant -1.25 : f32
        %d6 = math.fma %k7, %v, %k6 : f32
        %d5 = math.fma %d6, %v, %k5 : f32
        %d4 = math.fma %d5, %v, %k4 : f32
        %d3 = math.fma %d4, %v, %k3 : f32
        %d2 = math.fma %d3, %v, %k2 : f32
        %d1 = math.fma %d2, %v, %k1 : f32
        %d0 = math.fma %d1, %v, %k0 : f32
        %g = memref.load %dy[%i] : memref<?xf32>
        %old = memref.load %dx[%i] : memref<?xf32>
        %r = math.fma %d0, %g, %old : f32
        memref.store %r, %dx[%i] : memref<?xf32>
        %zero = arith.constant 0.0 : f32
        memref.store %zero, %dy[%i] : memref<?xf32>
      }
      gpu.return
    }

    // The 3-point stencil's transpose as a gather, no atomics: thread j sums
    // the three outputs that read x[j] (0.25 dy[j-1] + 0.5 dy[j] + 0.25 dy[j+1],
    // each where that output is an interior point, 1 <= i < n - 1).
    gpu.func @stencil_adj_gather(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %n: index) kernel {
      %j = gpu.global_id x
      %in = arith.cmpi ult, %j, %n : index
      scf.if %in {
        %c1 = arith.constant 1 : index
        %c2 = arith.constant 2 : index
        %zero = arith.constant 0.0 : f32
        %q = arith.constant 0.25 : f32
        %h = arith.constant 0.5 : f32
        %last = arith.subi %n, %c1 : index
        %last2 = arith.subi %n, %c2 : index
        // Output j-1 is interior when j >= 2; j when 1 <= j < n-1; j+1 when
        // j < n-2. Out-of-range neighbours read x's own element (in bounds)
        // and are masked.
        %hasLeft = arith.cmpi uge, %j, %c2 : index
        %lo = arith.cmpi uge, %j, %c1 : index
        %hi = arith.cmpi ult, %j, %last : index
        %hasMid = arith.andi %lo, %hi : i1
        %hasRight = arith.cmpi ult, %j, %last2 : index
        %jm = arith.subi %j, %c1 : index
        %jp = arith.addi %j, %c1 : index
        %il = arith.select %hasLeft, %jm, %j : index
        %ir = arith.select %hasRight, %jp, %j : index
        %gl = memref.load %dy[%il] : memref<?xf32>
        %gc = memref.load %dy[%j] : memref<?xf32>
        %gr = memref.load %dy[%ir] : memref<?xf32>
        %l = arith.select %hasLeft, %gl, %zero : f32
        %c = arith.select %hasMid, %gc, %zero : f32
        %r = arith.select %hasRight, %gr, %zero : f32
        %lr = arith.addf %l, %r : f32
        %ch = arith.mulf %h, %c : f32
        %s = math.fma %q, %lr, %ch : f32
        %old = memref.load %dx[%j] : memref<?xf32>
        %new = arith.addf %old, %s : f32
        memref.store %new, %dx[%j] : memref<?xf32>
      }
      gpu.return
    }
    // Second launch: the interior outputs are only written, their cotangent
    // ends at zero (after every gather has read it).
    gpu.func @stencil_adj_zero(%x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %c1 = arith.constant 1 : index
      %last = arith.subi %n, %c1 : index
      %lo = arith.cmpi uge, %i, %c1 : index
      %hi = arith.cmpi ult, %i, %last : index
      %in = arith.andi %lo, %hi : i1
      scf.if %in {
        %zero = arith.constant 0.0 : f32
        memref.store %zero, %dy[%i] : memref<?xf32>
      }
      gpu.return
    }

    // bins[k(x)] += s x by atomics: the transpose is a gather, dx += s dbins[k(x)];
    // dbins passes through (bins is read-modify-write).
    gpu.func @histogram_adj(%x: memref<?xf32>, %dx: memref<?xf32>, %bins: memref<?xf32>, %dbins: memref<?xf32>, %s: f32, %n: index) kernel {
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
        %g = memref.load %dbins[%k] : memref<?xf32>
        %old = memref.load %dx[%i] : memref<?xf32>
        %r = math.fma %s, %g, %old : f32
        memref.store %r, %dx[%i] : memref<?xf32>
      }
      gpu.return
    }

    // The runtime-bounded loop a <- 0.5 a + 0.4 x a / (1 + a^2), m times from
    // a = x. Each thread maps one scalar to one scalar, so the expert carries
    // the derivative da/dx forward next to a (no tape, no checkpoints, no
    // second pass): da <- (0.5 + 0.4 x (1 - a^2) / (1 + a^2)^2) da + 0.4 a / (1 + a^2),
    // then dx += da dy and dy = 0.
    gpu.func @rloop_adj(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>, %n: index, %m: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f32
        %k = arith.constant 0.4 : f32
        %one = arith.constant 1.0 : f32
        %x = memref.load %X[%i] : memref<?xf32>
        %kx = arith.mulf %k, %x : f32
        %r:2 = scf.for %j = %c0 to %m step %c1 iter_args(%a = %x, %da = %one) -> (f32, f32) {
          %q = arith.mulf %a, %a : f32
          %p = arith.addf %q, %one : f32
          %s = arith.divf %a, %p : f32
          %u = arith.mulf %kx, %s : f32
          %v = math.fma %a, %half, %u : f32
          // d/da: 0.5 + k x (1 - q) / p^2 = 0.5 + k x (s / a - 2 s^2)
          // is written as k x (1 - q) / p^2 to stay finite at a = 0.
          %oneq = arith.subf %one, %q : f32
          %pp = arith.mulf %p, %p : f32
          %ratio = arith.divf %oneq, %pp : f32
          %dvda = math.fma %kx, %ratio, %half : f32
          %ks = arith.mulf %k, %s : f32
          %dnext = math.fma %dvda, %da, %ks : f32
          scf.yield %v, %dnext : f32, f32
        }
        %g = memref.load %dY[%i] : memref<?xf32>
        %old = memref.load %dX[%i] : memref<?xf32>
        %new = math.fma %r#1, %g, %old : f32
        memref.store %new, %dX[%i] : memref<?xf32>
        %zero = arith.constant 0.0 : f32
        memref.store %zero, %dY[%i] : memref<?xf32>
      }
      gpu.return
    }

    // Out[block] = sum of the block's X: every thread adds the block's output
    // cotangent; thread 0 zeroes it once all have read it (one barrier).
    gpu.func @blocksum_adj(%X: memref<?xf32>, %dX: memref<?xf32>, %Out: memref<?xf32>, %dOut: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %blk = gpu.block_id x
      %c0 = arith.constant 0 : index
      %g = memref.load %dOut[%blk] : memref<?xf32>
      %old = memref.load %dX[%i] : memref<?xf32>
      %new = arith.addf %old, %g : f32
      memref.store %new, %dX[%i] : memref<?xf32>
      gpu.barrier
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %zero = arith.constant 0.0 : f32
        memref.store %zero, %dOut[%blk] : memref<?xf32>
      }
      gpu.return
    }

    // Softmax rows: dx = y (dy - <y, dy>) with y = e / S. Recomputes the row
    // maximum (one tree), then sums e and e dy in one paired tree (one
    // barrier per level for both): <y, dy> = sum(e dy) / S.
    gpu.func @softmax_adj(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>,
                  %tile2: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
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
      %g = memref.load %dY[%i] : memref<?xf32>
      %eg = arith.mulf %e, %g : f32
      memref.store %e, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %eg, %tile2[%t] : memref<64xf32, #gpu.address_space<workgroup>>
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
          %a2 = memref.load %tile2[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b2 = memref.load %tile2[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %sum2 = arith.addf %a2, %b2 : f32
          memref.store %sum2, %tile2[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %total = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %dot = memref.load %tile2[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %gd = arith.mulf %g, %total : f32
      %diff = arith.subf %gd, %dot : f32
      %s2 = arith.mulf %total, %total : f32
      %w = arith.divf %e, %s2 : f32
      // y (dy - dot / S) = e (dy S - dot) / S^2
      %old = memref.load %dX[%i] : memref<?xf32>
      %new = math.fma %w, %diff, %old : f32
      memref.store %new, %dX[%i] : memref<?xf32>
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %dY[%i] : memref<?xf32>
      gpu.return
    }

    // Layer-norm rows: dx = r (dy - mean(dy) - y mean(dy y)), r = 1/sqrt(var + eps).
    // Recomputes the mean and the variance (two trees, as the primal), then
    // sums dy and dy y in one paired tree.
    gpu.func @layernorm_adj(%X: memref<?xf32>, %dX: memref<?xf32>, %Y: memref<?xf32>, %dY: memref<?xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>,
                  %tile2: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
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
      scf.for %k = %c0 to %c6 step %c1 {
        %s = arith.shrui %c32, %k : index
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %j = arith.addi %t, %s : index
          %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %r = arith.addf %a, %b : f32
          memref.store %r, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
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
      scf.for %k = %c0 to %c6 step %c1 {
        %s = arith.shrui %c32, %k : index
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %j = arith.addi %t, %s : index
          %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %r = arith.addf %a, %b : f32
          memref.store %r, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %ssq = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %var = arith.mulf %ssq, %inv : f32
      %eps = arith.constant 1.0e-5 : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %y = arith.mulf %d, %rs : f32
      %g = memref.load %dY[%i] : memref<?xf32>
      %gy = arith.mulf %g, %y : f32
      gpu.barrier
      memref.store %g, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %gy, %tile2[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %k = %c0 to %c6 step %c1 {
        %s = arith.shrui %c32, %k : index
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %j = arith.addi %t, %s : index
          %a = memref.load %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %r = arith.addf %a, %b : f32
          memref.store %r, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %a2 = memref.load %tile2[%t] : memref<64xf32, #gpu.address_space<workgroup>>
          %b2 = memref.load %tile2[%j] : memref<64xf32, #gpu.address_space<workgroup>>
          %r2 = arith.addf %a2, %b2 : f32
          memref.store %r2, %tile2[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %gsum = memref.load %tile[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %gysum = memref.load %tile2[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %gmean = arith.mulf %gsum, %inv : f32
      %gymean = arith.mulf %gysum, %inv : f32
      %c = arith.subf %g, %gmean : f32
      %yc = arith.mulf %y, %gymean : f32
      %inner = arith.subf %c, %yc : f32
      %old = memref.load %dX[%i] : memref<?xf32>
      %new = math.fma %rs, %inner, %old : f32
      memref.store %new, %dX[%i] : memref<?xf32>
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %dY[%i] : memref<?xf32>
      gpu.return
    }

    // C = A B (n x n): dA += dC B^T and dB += A^T dC as two tiled kernels
    // (16 x 16 tiles, 16 x 16 blocks, the primal's launch), then dC = 0 (C is
    // only written) in a third launch, once both products have read it.
    gpu.func @matmul_adj_da(%A: memref<?xf32>, %dA: memref<?xf32>, %B: memref<?xf32>, %dB: memref<?xf32>,
                            %C: memref<?xf32>, %dC: memref<?xf32>, %n: index)
        workgroup(%Ds: memref<16x16xf32, #gpu.address_space<workgroup>>,
                  %Bs: memref<16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %steps = arith.divui %n, %c16 : index
      // dA[i][k] = sum_j dC[i][j] B[k][j]: i = row, k = col.
      %row0 = arith.muli %by, %c16 : index
      %row = arith.addi %row0, %ty : index
      %col0 = arith.muli %bx, %c16 : index
      %col = arith.addi %col0, %tx : index
      %rown = arith.muli %row, %n : index
      %krow = arith.addi %col0, %ty : index
      %krown = arith.muli %krow, %n : index
      %zero = arith.constant 0.0 : f32
      %acc = scf.for %s = %c0 to %steps step %c1 iter_args(%sum = %zero) -> (f32) {
        %j0 = arith.muli %s, %c16 : index
        %j = arith.addi %j0, %tx : index
        %id = arith.addi %rown, %j : index
        %ib = arith.addi %krown, %j : index
        %g = memref.load %dC[%id] : memref<?xf32>
        %b = memref.load %B[%ib] : memref<?xf32>
        memref.store %g, %Ds[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        memref.store %b, %Bs[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %part = scf.for %jj = %c0 to %c16 step %c1 iter_args(%p = %sum) -> (f32) {
          %u = memref.load %Ds[%ty, %jj] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %v = memref.load %Bs[%tx, %jj] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %p2 = math.fma %u, %v, %p : f32
          scf.yield %p2 : f32
        }
        gpu.barrier
        scf.yield %part : f32
      }
      %ia = arith.addi %rown, %col : index
      %old = memref.load %dA[%ia] : memref<?xf32>
      %new = arith.addf %old, %acc : f32
      memref.store %new, %dA[%ia] : memref<?xf32>
      gpu.return
    }
    gpu.func @matmul_adj_db(%A: memref<?xf32>, %dA: memref<?xf32>, %B: memref<?xf32>, %dB: memref<?xf32>,
                            %C: memref<?xf32>, %dC: memref<?xf32>, %n: index)
        workgroup(%As: memref<16x16xf32, #gpu.address_space<workgroup>>,
                  %Ds: memref<16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %steps = arith.divui %n, %c16 : index
      // dB[k][j] = sum_i A[i][k] dC[i][j]: k = row, j = col.
      %row0 = arith.muli %by, %c16 : index
      %row = arith.addi %row0, %ty : index
      %col0 = arith.muli %bx, %c16 : index
      %col = arith.addi %col0, %tx : index
      %kcol = arith.addi %row0, %tx : index
      %zero = arith.constant 0.0 : f32
      %acc = scf.for %s = %c0 to %steps step %c1 iter_args(%sum = %zero) -> (f32) {
        %i0 = arith.muli %s, %c16 : index
        %i = arith.addi %i0, %ty : index
        %in = arith.muli %i, %n : index
        %ia = arith.addi %in, %kcol : index
        %id = arith.addi %in, %col : index
        %a = memref.load %A[%ia] : memref<?xf32>
        %g = memref.load %dC[%id] : memref<?xf32>
        memref.store %a, %As[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        memref.store %g, %Ds[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %part = scf.for %ii = %c0 to %c16 step %c1 iter_args(%p = %sum) -> (f32) {
          %u = memref.load %As[%ii, %ty] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %v = memref.load %Ds[%ii, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %p2 = math.fma %u, %v, %p : f32
          scf.yield %p2 : f32
        }
        gpu.barrier
        scf.yield %part : f32
      }
      %rown = arith.muli %row, %n : index
      %ib = arith.addi %rown, %col : index
      %old = memref.load %dB[%ib] : memref<?xf32>
      %new = arith.addf %old, %acc : f32
      memref.store %new, %dB[%ib] : memref<?xf32>
      gpu.return
    }
    gpu.func @matmul_adj_zero(%A: memref<?xf32>, %dA: memref<?xf32>, %B: memref<?xf32>, %dB: memref<?xf32>,
                              %C: memref<?xf32>, %dC: memref<?xf32>, %n: index) kernel {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %c16 = arith.constant 16 : index
      %row0 = arith.muli %by, %c16 : index
      %row = arith.addi %row0, %ty : index
      %col0 = arith.muli %bx, %c16 : index
      %col = arith.addi %col0, %tx : index
      %rown = arith.muli %row, %n : index
      %ic = arith.addi %rown, %col : index
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %dC[%ic] : memref<?xf32>
      gpu.return
    }
  }
}
