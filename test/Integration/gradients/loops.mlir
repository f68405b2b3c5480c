// Loops of every shape in reverse mode (and forward mode), on every target:
// trip counts from a scalar parameter inside the bounds check, two- and
// three-level nests whose inner bound depends on the outer index, an element
// overwritten in place every iteration, a loop in an scf.if in a loop, a
// static loop around a dynamic one, an scf.while that stores each iteration
// with per-thread trip counts, a loop with a trip-count hint, and a kernel
// adjoint whose loop holds barriers. Checked by test_loops.py on lavapipe
// against float64 finite differences and forward/reverse dot products.
// RUN: nabla-compile %s --target=nvvm --chip=sm_90 -o %t.nvvm
// RUN: nabla-compile %s --target=rocdl -o %t.rocdl
// RUN: nabla-compile %s --target=spirv --block=64 -o %t.spirv && spirv-val --target-env vulkan1.1 %t.spirv/kernels.spv
// Metal has no f64: the same kernels in f32.
// RUN: sed 's/f64/f32/g' %s > %t.f32.mlir && nabla-compile %t.f32.mlir --target=metal --block=64 -o %t.metal
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // trip count m from a parameter, inside the bounds check
    func.func @dyn(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f64
        %k04 = arith.constant 0.4 : f64
        %one = arith.constant 1.0 : f64
        %x = memref.load %X[%i] : memref<?xf64>
        %y0 = memref.load %Y[%i] : memref<?xf64>
        %r = scf.for %k = %c0 to %m step %c1 iter_args(%a = %y0) -> (f64) {
          %kf = arith.index_cast %k : index to i64
          %kd = arith.sitofp %kf : i64 to f64
          %ka = arith.mulf %kd, %x : f64
          %kb = arith.mulf %ka, %half : f64
          %a2 = arith.addf %a, %kb : f64
          %v_q = arith.mulf %a2, %a2 : f64
          %v_p = arith.addf %v_q, %one : f64
          %v_s = arith.divf %a2, %v_p : f64
          %v_t = arith.mulf %v_s, %x : f64
          %v_u = arith.mulf %v_t, %k04 : f64
          %v_h = arith.mulf %a2, %half : f64
          %v = arith.addf %v_h, %v_u : f64
          %v2 = arith.mulf %v, %half : f64
          scf.yield %v2 : f64
        }
        memref.store %r, %Y[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @dyn_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) kernel {
      func.call @dyn(%X, %Y, %n, %m) : (memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @dyn_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.autodiff @dyn(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @dyn_tangent(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.fwddiff @dyn(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    // two levels, the inner bound j + 1 from the outer index
    func.func @nest2(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f64
        %k04 = arith.constant 0.4 : f64
        %one = arith.constant 1.0 : f64
        %x = memref.load %X[%i] : memref<?xf64>
        %y0 = memref.load %Y[%i] : memref<?xf64>
        %r = scf.for %j = %c0 to %m step %c1 iter_args(%a = %y0) -> (f64) {
          %j1 = arith.addi %j, %c1 : index
          %q = scf.for %k = %c0 to %j1 step %c1 iter_args(%b = %a) -> (f64) {
            %w_q = arith.mulf %b, %b : f64
          %w_p = arith.addf %w_q, %one : f64
          %w_s = arith.divf %b, %w_p : f64
          %w_t = arith.mulf %w_s, %x : f64
          %w_u = arith.mulf %w_t, %k04 : f64
          %w_h = arith.mulf %b, %half : f64
          %w = arith.addf %w_h, %w_u : f64
            scf.yield %w : f64
          }
          %q1 = arith.mulf %q, %x : f64
          %q2 = arith.addf %q1, %x : f64
          %v_q = arith.mulf %q2, %q2 : f64
          %v_p = arith.addf %v_q, %one : f64
          %v_s = arith.divf %q2, %v_p : f64
          %v_t = arith.mulf %v_s, %x : f64
          %v_u = arith.mulf %v_t, %k04 : f64
          %v_h = arith.mulf %q2, %half : f64
          %v = arith.addf %v_h, %v_u : f64
          scf.yield %v : f64
        }
        memref.store %r, %Y[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @nest2_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) kernel {
      func.call @nest2(%X, %Y, %n, %m) : (memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @nest2_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.autodiff @nest2(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @nest2_tangent(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.fwddiff @nest2(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    // three levels with triangular bounds
    func.func @nest3(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f64
        %k04 = arith.constant 0.4 : f64
        %one = arith.constant 1.0 : f64
        %x = memref.load %X[%i] : memref<?xf64>
        %y0 = memref.load %Y[%i] : memref<?xf64>
        %r = scf.for %j = %c0 to %m step %c1 iter_args(%a = %y0) -> (f64) {
          %j1 = arith.addi %j, %c1 : index
          %q = scf.for %k = %c0 to %j1 step %c1 iter_args(%b = %a) -> (f64) {
            %p = scf.for %l = %k to %j1 step %c1 iter_args(%c = %b) -> (f64) {
              %w_q = arith.mulf %c, %c : f64
          %w_p = arith.addf %w_q, %one : f64
          %w_s = arith.divf %c, %w_p : f64
          %w_t = arith.mulf %w_s, %x : f64
          %w_u = arith.mulf %w_t, %k04 : f64
          %w_h = arith.mulf %c, %half : f64
          %w = arith.addf %w_h, %w_u : f64
              scf.yield %w : f64
            }
            %p1 = arith.addf %p, %x : f64
            %u_q = arith.mulf %p1, %p1 : f64
          %u_p = arith.addf %u_q, %one : f64
          %u_s = arith.divf %p1, %u_p : f64
          %u_t = arith.mulf %u_s, %x : f64
          %u_u = arith.mulf %u_t, %k04 : f64
          %u_h = arith.mulf %p1, %half : f64
          %u = arith.addf %u_h, %u_u : f64
            scf.yield %u : f64
          }
          scf.yield %q : f64
        }
        memref.store %r, %Y[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @nest3_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) kernel {
      func.call @nest3(%X, %Y, %n, %m) : (memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @nest3_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.autodiff @nest3(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @nest3_tangent(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.fwddiff @nest3(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    // X[i] overwritten in place every iteration
    func.func @inplace(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f64
        %k04 = arith.constant 0.4 : f64
        %one = arith.constant 1.0 : f64
        %x = memref.load %X[%i] : memref<?xf64>
        %y0 = memref.load %Y[%i] : memref<?xf64>
        scf.for %k = %c0 to %m step %c1 {
          %xv = memref.load %X[%i] : memref<?xf64>
          %yv = memref.load %Y[%i] : memref<?xf64>
          %v_q = arith.mulf %xv, %xv : f64
          %v_p = arith.addf %v_q, %one : f64
          %v_s = arith.divf %xv, %v_p : f64
          %v_t = arith.mulf %v_s, %yv : f64
          %v_u = arith.mulf %v_t, %k04 : f64
          %v_h = arith.mulf %xv, %half : f64
          %v = arith.addf %v_h, %v_u : f64
          %v1 = arith.addf %v, %y0 : f64
          memref.store %v1, %X[%i] : memref<?xf64>
          %w = arith.mulf %v1, %yv : f64
          memref.store %w, %Y[%i] : memref<?xf64>
        }
      }
      return
    }
    gpu.func @inplace_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) kernel {
      func.call @inplace(%X, %Y, %n, %m) : (memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @inplace_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.autodiff @inplace(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @inplace_tangent(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.fwddiff @inplace(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    // a loop in an scf.if in a loop
    func.func @loop_if_loop(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f64
        %k04 = arith.constant 0.4 : f64
        %one = arith.constant 1.0 : f64
        %x = memref.load %X[%i] : memref<?xf64>
        %y0 = memref.load %Y[%i] : memref<?xf64>
        %r = scf.for %j = %c0 to %m step %c1 iter_args(%a = %y0) -> (f64) {
          %odd = arith.andi %j, %c1 : index
          %isodd = arith.cmpi eq, %odd, %c1 : index
          %b = scf.if %isodd -> (f64) {
            %q = scf.for %k = %c0 to %j step %c1 iter_args(%c = %a) -> (f64) {
              %w_q = arith.mulf %c, %c : f64
          %w_p = arith.addf %w_q, %one : f64
          %w_s = arith.divf %c, %w_p : f64
          %w_t = arith.mulf %w_s, %x : f64
          %w_u = arith.mulf %w_t, %k04 : f64
          %w_h = arith.mulf %c, %half : f64
          %w = arith.addf %w_h, %w_u : f64
              %w1 = arith.addf %w, %x : f64
              scf.yield %w1 : f64
            }
            scf.yield %q : f64
          } else {
            %u_q = arith.mulf %a, %a : f64
          %u_p = arith.addf %u_q, %one : f64
          %u_s = arith.divf %a, %u_p : f64
          %u_t = arith.mulf %u_s, %x : f64
          %u_u = arith.mulf %u_t, %k04 : f64
          %u_h = arith.mulf %a, %half : f64
          %u = arith.addf %u_h, %u_u : f64
            scf.yield %u : f64
          }
          %b1 = arith.mulf %b, %half : f64
          scf.yield %b1 : f64
        }
        memref.store %r, %Y[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @loop_if_loop_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) kernel {
      func.call @loop_if_loop(%X, %Y, %n, %m) : (memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @loop_if_loop_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.autodiff @loop_if_loop(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @loop_if_loop_tangent(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.fwddiff @loop_if_loop(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    // a dynamic loop in a static loop (taped around checkpointed)
    func.func @static_outer(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f64
        %k04 = arith.constant 0.4 : f64
        %one = arith.constant 1.0 : f64
        %x = memref.load %X[%i] : memref<?xf64>
        %y0 = memref.load %Y[%i] : memref<?xf64>
        %c3 = arith.constant 3 : index
        %r = scf.for %j = %c0 to %c3 step %c1 iter_args(%a = %y0) -> (f64) {
          %q = scf.for %k = %c0 to %m step %c1 iter_args(%b = %a) -> (f64) {
            %w_q = arith.mulf %b, %b : f64
          %w_p = arith.addf %w_q, %one : f64
          %w_s = arith.divf %b, %w_p : f64
          %w_t = arith.mulf %w_s, %x : f64
          %w_u = arith.mulf %w_t, %k04 : f64
          %w_h = arith.mulf %b, %half : f64
          %w = arith.addf %w_h, %w_u : f64
            %w1 = arith.addf %w, %x : f64
            scf.yield %w1 : f64
          }
          %q1 = arith.mulf %q, %x : f64
          %v_q = arith.mulf %q1, %q1 : f64
          %v_p = arith.addf %v_q, %one : f64
          %v_s = arith.divf %q1, %v_p : f64
          %v_t = arith.mulf %v_s, %x : f64
          %v_u = arith.mulf %v_t, %k04 : f64
          %v_h = arith.mulf %q1, %half : f64
          %v = arith.addf %v_h, %v_u : f64
          scf.yield %v : f64
        }
        memref.store %r, %Y[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @static_outer_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) kernel {
      func.call @static_outer(%X, %Y, %n, %m) : (memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @static_outer_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.autodiff @static_outer(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @static_outer_tangent(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.fwddiff @static_outer(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    // the loop of dyn with a trip-count hint of 4 (taped)
    func.func @hinted(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f64
        %k04 = arith.constant 0.4 : f64
        %one = arith.constant 1.0 : f64
        %x = memref.load %X[%i] : memref<?xf64>
        %y0 = memref.load %Y[%i] : memref<?xf64>
        %r = scf.for %k = %c0 to %m step %c1 iter_args(%a = %y0) -> (f64) {
          %v_q = arith.mulf %a, %a : f64
          %v_p = arith.addf %v_q, %one : f64
          %v_s = arith.divf %a, %v_p : f64
          %v_t = arith.mulf %v_s, %x : f64
          %v_u = arith.mulf %v_t, %k04 : f64
          %v_h = arith.mulf %a, %half : f64
          %v = arith.addf %v_h, %v_u : f64
          %v1 = arith.addf %v, %x : f64
          scf.yield %v1 : f64
        } {nabla.max_trip_count = 4 : i64}
        memref.store %r, %Y[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @hinted_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) kernel {
      func.call @hinted(%X, %Y, %n, %m) : (memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @hinted_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.autodiff @hinted(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @hinted_tangent(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.fwddiff @hinted(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    // An scf.while storing each iteration, C[i] iterations per thread.
    func.func @stored_while(%X: memref<?xf64>, %Y: memref<?xf64>, %C: memref<?xi32>, %n: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %half = arith.constant 0.5 : f64
        %k04 = arith.constant 0.4 : f64
        %one = arith.constant 1.0 : f64
        %x = memref.load %X[%i] : memref<?xf64>
        %ci = memref.load %C[%i] : memref<?xi32>
        %cnt = arith.index_cast %ci : i32 to index
        %r:2 = scf.while (%a = %x, %t = %c0) : (f64, index) -> (f64, index) {
          %go = arith.cmpi ult, %t, %cnt : index
          scf.condition(%go) %a, %t : f64, index
        } do {
        ^bb0(%b: f64, %u: index):
          %v_q = arith.mulf %b, %b : f64
          %v_p = arith.addf %v_q, %one : f64
          %v_s = arith.divf %b, %v_p : f64
          %v_t = arith.mulf %v_s, %x : f64
          %v_u = arith.mulf %v_t, %k04 : f64
          %v_h = arith.mulf %b, %half : f64
          %v = arith.addf %v_h, %v_u : f64
          %v1 = arith.addf %v, %x : f64
          memref.store %v1, %Y[%i] : memref<?xf64>
          %u1 = arith.addi %u, %c1 : index
          scf.yield %v1, %u1 : f64, index
        }
        %r2 = arith.mulf %r#0, %r#0 : f64
        memref.store %r2, %X[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @stored_while_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %C: memref<?xi32>, %n: index) kernel {
      func.call @stored_while(%X, %Y, %C, %n) : (memref<?xf64>, memref<?xf64>, memref<?xi32>, index) -> ()
      gpu.return
    }
    gpu.func @stored_while_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %C: memref<?xi32>, %n: index) kernel {
      nabla.autodiff @stored_while(%X, %dX, %Y, %dY, %C, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xi32>, index) -> ()
      gpu.return
    }
    gpu.func @stored_while_tangent(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %C: memref<?xi32>, %n: index) kernel {
      nabla.fwddiff @stored_while(%X, %dX, %Y, %dY, %C, %n)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xi32>, index) -> ()
      gpu.return
    }
    // Newton's iteration for sqrt(a), a = 0.5 + x^2, from 1 until
    // |v^2 - a| < 1e-3: a data-dependent trip count of 0, 1, 2 or 3 per
    // thread. Y[i] = v.
    func.func @newton(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %half = arith.constant 0.5 : f64
        %one = arith.constant 1.0 : f64
        %tol = arith.constant 1.0e-3 : f64
        %x = memref.load %X[%i] : memref<?xf64>
        %x2 = arith.mulf %x, %x : f64
        %a = arith.addf %x2, %half : f64
        %r = scf.while (%v = %one) : (f64) -> f64 {
          %v2 = arith.mulf %v, %v : f64
          %e = arith.subf %v2, %a : f64
          %ae = math.absf %e : f64
          %go = arith.cmpf ogt, %ae, %tol : f64
          scf.condition(%go) %v : f64
        } do {
        ^bb0(%w: f64):
          %q = arith.divf %a, %w : f64
          %s = arith.addf %w, %q : f64
          %nw = arith.mulf %s, %half : f64
          scf.yield %nw : f64
        }
        memref.store %r, %Y[%i] : memref<?xf64>
      }
      return
    }
    gpu.func @newton_kernel(%X: memref<?xf64>, %Y: memref<?xf64>, %n: index, %m: index) kernel {
      func.call @newton(%X, %Y, %n, %m) : (memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @newton_grad(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.autodiff @newton(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @newton_tangent(%X: memref<?xf64>, %dX: memref<?xf64>, %Y: memref<?xf64>, %dY: memref<?xf64>, %n: index, %m: index) kernel {
      nabla.fwddiff @newton(%X, %dX, %Y, %dY, %n, %m)
          {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
           ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, index) -> ()
      gpu.return
    }
    // Each of m steps: v goes to the workgroup tile, barrier, the right
    // neighbour's value is read back, barrier. The tile is overwritten every
    // iteration (no checkpointing), so the loop carries a hint and is taped.
    gpu.func @ring(%X: memref<?xf64>, %Y: memref<?xf64>, %m: index)
        workgroup(%tile: memref<64xf64, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %half = arith.constant 0.5 : f64
      %k04 = arith.constant 0.4 : f64
      %one = arith.constant 1.0 : f64
      %t = gpu.thread_id x
      %g = gpu.global_id x
      %x = memref.load %X[%g] : memref<?xf64>
      %t1 = arith.addi %t, %c1 : index
      %right = arith.remui %t1, %c64 : index
      %r = scf.for %k = %c0 to %m step %c1 iter_args(%a = %x) -> (f64) {
        memref.store %a, %tile[%t] : memref<64xf64, #gpu.address_space<workgroup>>
        gpu.barrier
        %nb = memref.load %tile[%right] : memref<64xf64, #gpu.address_space<workgroup>>
        gpu.barrier
        %v_q = arith.mulf %nb, %nb : f64
          %v_p = arith.addf %v_q, %one : f64
          %v_s = arith.divf %nb, %v_p : f64
          %v_t = arith.mulf %v_s, %a : f64
          %v_u = arith.mulf %v_t, %k04 : f64
          %v_h = arith.mulf %nb, %half : f64
          %v = arith.addf %v_h, %v_u : f64
        %v1 = arith.addf %v, %x : f64
        scf.yield %v1 : f64
      } {nabla.max_trip_count = 8 : i64}
      memref.store %r, %Y[%g] : memref<?xf64>
      gpu.return
    }
    nabla.kernel_adjoint @ring -> @ring_adjoint
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>]}
  }
}
