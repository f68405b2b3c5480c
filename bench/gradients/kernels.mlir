// Gradient benchmark corpus (f32): each primal kernel next to its reverse-mode
// gradient kernel (shadows after each dup buffer). bench/gradients/run.py
// times them side by side on the default device.
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
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>], ret_activity = []}
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
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
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
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
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
  }
}
