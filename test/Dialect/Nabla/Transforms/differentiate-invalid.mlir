// nabla-differentiate refuses what it cannot differentiate with a located
// error, never silently zero gradients.
// RUN: nabla-test-opt %s -split-input-file -verify-diagnostics --nabla-differentiate

func.func private @ext(f32) -> f32
func.func @g(%x: f32, %s: f32) {
  // expected-error @below {{'nabla.autodiff' op can only differentiate a func.func with a body or a custom derivative; @ext has neither}}
  %d = nabla.autodiff @ext(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  // expected-error @below {{'math.sincos' op has no reverse-mode derivative rule and is on an active path (it depends on or writes differentiated data)}}
  %y, %c = math.sincos %x : f32
  return %y : f32
}
func.func @g(%x: f32, %s: f32) {
  %d = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  // expected-error @below {{'func.call' op recursive call to @f cannot be differentiated}}
  %y = func.call @f(%x) : (f32) -> f32
  return %y : f32
}
func.func @g(%x: f32, %s: f32) {
  %d = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
  return
}

// -----

// A frontend op without a derivative rule on an active path is an error
// naming it, never a zero gradient.
module {
  func.func @f(%A: memref<?xf32>, %i: index) {
    %x = memref.load %A[%i] : memref<?xf32>
    // expected-error @below {{'nabla_test.opaque' op has no reverse-mode derivative rule and is on an active path (it depends on or writes differentiated data)}}
    %y = nabla_test.opaque %x : f32
    memref.store %y, %A[%i] : memref<?xf32>
    return
  }
  func.func @grad(%A: memref<?xf32>, %dA: memref<?xf32>, %i: index) {
    nabla.autodiff @f(%A, %dA, %i)
        {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
        : (memref<?xf32>, memref<?xf32>, index) -> ()
    return
  }
}

// -----

// A while loop taped in a growing tape keeps its steps per thread (or per
// iteration of taped loops around it); loops inside it are taped per step,
// scf.if's results are taped, but another region op on an active path
// inside it has no tape form.
module {
  func.func @f(%A: memref<?xf32>, %i: index) {
    %c0 = arith.constant 0 : index
    %ten = arith.constant 10.0 : f32
    %x0 = memref.load %A[%i] : memref<?xf32>
    %r = scf.while (%x = %x0) : (f32) -> f32 {
      %go = arith.cmpf olt, %x, %ten : f32
      scf.condition(%go) %x : f32
    } do {
    ^bb0(%y: f32):
      %a = memref.load %A[%c0] : memref<?xf32>
      %k = arith.fptosi %y : f32 to i32
      %key = arith.index_cast %k : i32 to index
      // expected-error @below {{'scf.index_switch' op is a region op on an active path inside a while loop taped in global memory, which reverse mode does not support (scf.if, scf.for and scf.while are)}}
      %w = scf.index_switch %key -> f32
      case 0 {
        %s = arith.addf %y, %a : f32
        scf.yield %s : f32
      }
      default {
        %p = arith.mulf %y, %a : f32
        scf.yield %p : f32
      }
      memref.store %w, %A[%c0] : memref<?xf32>
      scf.yield %w : f32
    }
    memref.store %r, %A[%i] : memref<?xf32>
    return
  }
  func.func @grad(%A: memref<?xf32>, %dA: memref<?xf32>, %i: index) {
    nabla.autodiff @f(%A, %dA, %i)
        {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
        : (memref<?xf32>, memref<?xf32>, index) -> ()
    return
  }
}

// -----

// A workgroup reduction with a custom combiner has no known derivative.
func.func @f(%x: f32) -> f32 {
  // expected-error @below {{'gpu.all_reduce' op with a custom combiner region has no reverse-mode derivative (use an `op` attribute)}}
  %r = gpu.all_reduce %x {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    gpu.yield %s : f32
  } : (f32) -> f32
  return %r : f32
}
func.func @g(%x: f32, %s: f32) {
  %d = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
  return
}

// -----

// Reductions of vectors are refused in forward mode too.
func.func @f(%x: vector<2xf32>) -> vector<2xf32> {
  // expected-error @below {{'gpu.subgroup_reduce' op of a vector has no forward-mode derivative (reduce each element)}}
  %r = gpu.subgroup_reduce add %x : (vector<2xf32>) -> vector<2xf32>
  return %r : vector<2xf32>
}
func.func @g(%x: vector<2xf32>, %dx: vector<2xf32>) {
  %d = nabla.fwddiff @f(%x, %dx) {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<dupnoneed>]} : (vector<2xf32>, vector<2xf32>) -> vector<2xf32>
  return
}

// -----

// A float max atomic on global memory: no barrier orders the grid's atomics.
func.func @f(%x: f32, %M: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'memref.atomic_rmw' op has no reverse-mode derivative on global memory: the derivative goes to the thread that stored the final value, which no barrier can establish across the grid (use a workgroup buffer followed by gpu.barrier, or a separate kernel)}}
  %old = memref.atomic_rmw maximumf %x, %M[%c0] : (f32, memref<1xf32>) -> f32
  gpu.barrier
  return
}
func.func @g(%x: f32, %M: memref<1xf32>, %dM: memref<1xf32>, %s: f32) {
  %d = nabla.autodiff @f(%x, %M, %dM) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<1xf32>, memref<1xf32>) -> f32
  return
}

// -----

// Without a barrier after it, the winner is not known in the reverse sweep.
func.func @f(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>) {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'memref.atomic_rmw' op needs a gpu.barrier after it (in its block or an enclosing one) for reverse mode: the winning thread is known once every thread's atomic is done}}
  %old = memref.atomic_rmw minimumf %x, %M[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  return
}
func.func @g(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>, %dM: memref<1xf32, #gpu.address_space<workgroup>>, %s: f32) {
  %d = nabla.autodiff @f(%x, %M, %dM) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  return
}

// -----

// A store after the atomic would hide the final value from the reverse sweep.
func.func @f(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>) {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'memref.atomic_rmw' op needs its buffer's final value in reverse mode, but another op may write the buffer after it}}
  %old = memref.atomic_rmw maxnumf %x, %M[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  gpu.barrier
  %zero = arith.constant 0.0 : f32
  // expected-note @below {{written here}}
  memref.store %zero, %M[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
  return
}
func.func @g(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>, %dM: memref<1xf32, #gpu.address_space<workgroup>>, %s: f32) {
  %d = nabla.autodiff @f(%x, %M, %dM) {activity = [#nabla.activity<active>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  return
}

// -----

// A read between two same-kind min atomics sees the first one's winner, but
// the reverse sweep only knows the final value (difftest seed 1026).
func.func @f(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>, %Y: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'memref.atomic_rmw' op has no reverse-mode derivative when its buffer is read before a later minimumf atomic may change it: the winner is found from the final value (read the buffer after the last atomic, or use two buffers)}}
  %old = memref.atomic_rmw minimumf %x, %M[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  gpu.barrier
  // expected-note @below {{read here}}
  %v = memref.load %M[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
  memref.store %v, %Y[%c0] : memref<1xf32>
  gpu.barrier
  %low = arith.constant -127.0 : f32
  // expected-note @below {{later atomic here}}
  %old2 = memref.atomic_rmw minimumf %low, %M[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  gpu.barrier
  return
}
func.func @g(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>, %dM: memref<1xf32, #gpu.address_space<workgroup>>, %Y: memref<1xf32>, %dY: memref<1xf32>) {
  %d = nabla.autodiff @f(%x, %M, %dM, %Y, %dY) {activity = [#nabla.activity<active>, #nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32>, memref<1xf32>) -> f32
  return
}

// -----

// Accepted (no diagnostic): the read comes after the last same-kind atomic,
// so the final value is the one it sees.
func.func @f(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>, %Y: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %old = memref.atomic_rmw minimumf %x, %M[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  %low = arith.constant -127.0 : f32
  %old2 = memref.atomic_rmw minimumf %low, %M[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  gpu.barrier
  %v = memref.load %M[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
  memref.store %v, %Y[%c0] : memref<1xf32>
  return
}
func.func @g(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>, %dM: memref<1xf32, #gpu.address_space<workgroup>>, %Y: memref<1xf32>, %dY: memref<1xf32>) {
  %d = nabla.autodiff @f(%x, %M, %dM, %Y, %dY) {activity = [#nabla.activity<active>, #nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []} : (f32, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32>, memref<1xf32>) -> f32
  return
}

// -----

// Forward mode writes the winner's tangent after a barrier of the atomic's
// own block: one after the enclosing scf.if is not enough.
func.func @f(%x: f32, %go: i1, %M: memref<1xf32, #gpu.address_space<workgroup>>) {
  %c0 = arith.constant 0 : index
  scf.if %go {
    // expected-error @below {{'memref.atomic_rmw' op needs a gpu.barrier after it in the same block for forward mode: the winning thread is known once every thread's atomic is done}}
    %old = memref.atomic_rmw maximumf %x, %M[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  }
  gpu.barrier
  return
}
func.func @g(%x: f32, %dx: f32, %go: i1, %M: memref<1xf32, #gpu.address_space<workgroup>>, %dM: memref<1xf32, #gpu.address_space<workgroup>>) {
  nabla.fwddiff @f(%x, %dx, %go, %M, %dM) {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<dup>], ret_activity = []} : (f32, f32, i1, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>) -> ()
  return
}

// -----

// A barrier under a trip count that varies across the block's threads.
module {
  func.func @f(%A: memref<?xf32>, %W: memref<64xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = gpu.thread_id x
    %x = memref.load %A[%t] : memref<?xf32>
    // expected-error @below {{'scf.for' op holds a gpu.barrier but its trip count varies across the threads of a block}}
    %r = scf.for %k = %c0 to %t step %c1 iter_args(%a = %x) -> (f32) {
      memref.store %a, %W[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      // expected-note @below {{the barrier}}
      gpu.barrier
      %b = memref.load %W[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %s = arith.mulf %a, %b : f32
      scf.yield %s : f32
    } {nabla.max_trip_count = 64 : i64}
    memref.store %r, %A[%t] : memref<?xf32>
    return
  }
  func.func @grad(%A: memref<?xf32>, %dA: memref<?xf32>, %W: memref<64xf32, #gpu.address_space<workgroup>>, %dW: memref<64xf32, #gpu.address_space<workgroup>>) {
    nabla.autodiff @f(%A, %dA, %W, %dW)
        {activity = [#nabla.activity<dup>, #nabla.activity<dup>], ret_activity = []}
        : (memref<?xf32>, memref<?xf32>, memref<64xf32, #gpu.address_space<workgroup>>, memref<64xf32, #gpu.address_space<workgroup>>) -> ()
    return
  }
}

// -----

// A custom rule that requests its own primal's derivative became a call of
// itself (unbounded recursion, exit 0); also through a helper it calls.
func.func @f(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  return %y : f32
}
func.func @helper(%x: f32, %s: f32) -> (f32, f32) {
  // expected-error @below {{'nabla.autodiff' op requests the derivative of @f inside its own custom derivative @f_vjp, which would call itself forever}}
  %y, %g = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]} : (f32, f32) -> (f32, f32)
  return %y, %g : f32, f32
}
func.func @f_vjp(%x: f32, %s: f32) -> (f32, f32) {
  %y, %g = func.call @helper(%x, %s) : (f32, f32) -> (f32, f32)
  return %y, %g : f32, f32
}
nabla.custom_derivative @f reverse @f_vjp {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<active>]}

// -----

// Accepted: with the hint the loop is taped, old values included.
func.func @f(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %m step %c1 {
    %a = memref.atomic_rmw minimumf %x, %M[%c0] : (f32, memref<1xf32, #gpu.address_space<workgroup>>) -> f32
  } {nabla.max_trip_count = 8 : i64}
  gpu.barrier
  return
}
func.func @g(%x: f32, %M: memref<1xf32, #gpu.address_space<workgroup>>, %dM: memref<1xf32, #gpu.address_space<workgroup>>, %m: index) {
  %d = nabla.autodiff @f(%x, %M, %dM, %m) {activity = [#nabla.activity<active>, #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (f32, memref<1xf32, #gpu.address_space<workgroup>>, memref<1xf32, #gpu.address_space<workgroup>>, index) -> f32
  return
}

// -----

// A differentiated float's bits changed by integer arithmetic and made a
// float again: the derivative cannot follow.
func.func @f(%x: f32) -> f32 {
  %one = arith.constant 1 : i32
  // expected-note @below {{the float's bits are taken here}}
  %b = arith.bitcast %x : f32 to i32
  %c = arith.addi %b, %one : i32
  // expected-error @below {{'arith.bitcast' op makes a float of an integer that carries a differentiated float's bits: the derivative cannot follow the bits through integer operations}}
  %f = arith.bitcast %c : i32 to f32
  return %f : f32
}
func.func @g(%x: f32, %s: f32) {
  %d = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
  return
}

// -----

// The bits stored into memory as an integer (an atomicMax on the bits of
// a float): the derivative would stay behind.
func.func @f(%x: f32, %M: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  // expected-note @below {{the float's bits are taken here}}
  %b = arith.bitcast %x : f32 to i32
  // expected-error @below {{'memref.atomic_rmw' op writes to memory an integer that carries a differentiated float's bits}}
  %o = memref.atomic_rmw maxs %b, %M[%c0] : (i32, memref<4xi32>) -> i32
  return
}
func.func @g(%x: f32, %M: memref<4xi32>) {
  %d = nabla.autodiff @f(%x, %M) {activity = [#nabla.activity<active>, #nabla.activity<const>], ret_activity = []} : (f32, memref<4xi32>) -> f32
  return
}

// -----

// CUDA's atomicExch on a float exchanges its bits: which value each thread
// gets back depends on the threads' order.
func.func @f(%x: f32, %M: memref<4xi32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-note @below {{the float's bits are taken here}}
  %b = arith.bitcast %x : f32 to i32
  // expected-error @below {{'memref.atomic_rmw' op exchanges a differentiated float atomically (atomicExch): the value each thread gets back depends on the order the threads ran in}}
  %o = memref.atomic_rmw assign %b, %M[%c0] : (i32, memref<4xi32>) -> i32
  %f = arith.bitcast %o : i32 to f32
  return %f : f32
}
func.func @g(%x: f32, %M: memref<4xi32>, %s: f32) {
  %d = nabla.autodiff @f(%x, %M, %s) {activity = [#nabla.activity<active>, #nabla.activity<const>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, memref<4xi32>, f32) -> f32
  return
}

// -----

// Bits that only decide a branch are piecewise constant: no error, and a
// loop-carried integer copy of the bits that becomes a float again is one.
func.func @f(%x: f32, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = arith.bitcast %x : f32 to i32
  // expected-note @above {{the float's bits are taken here}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %b) -> (i32) {
    scf.yield %a : i32
  }
  // expected-error @below {{'arith.bitcast' op makes a float of an integer that carries a differentiated float's bits}}
  %f = arith.bitcast %r : i32 to f32
  return %f : f32
}
func.func @g(%x: f32, %n: index, %s: f32) {
  %d = nabla.autodiff @f(%x, %n, %s) {activity = [#nabla.activity<active>, #nabla.activity<const>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, index, f32) -> f32
  return
}

// -----

// Heap memory (memref.alloc) holding differentiated data: AD shadows private
// memory only, and the derivative must not be dropped as if the caller had
// marked it const; the pipelines promote it first.
func.func @f(%x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<4xf32>
  // expected-note @above {{allocated here}}
  // expected-error @below {{'memref.store' op stores a differentiated value into heap memory (memref.alloc), which AD gives no shadow; run --nabla-promote-private-allocs first}}
  memref.store %x, %t[%c0] : memref<4xf32>
  %y = memref.load %t[%c0] : memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  return %y : f32
}
func.func @g(%x: f32, %s: f32) {
  %d = nabla.autodiff @f(%x, %s) {activity = [#nabla.activity<active>], ret_activity = [#nabla.activity<activenoneed>]} : (f32, f32) -> f32
  return
}

// -----

// Dynamic shared memory the differentiated function views itself has no
// shadow: a differentiated store into it is an error, not a lost derivative
// (kernel adjoints and the LLVM IR frontend pass it in with a shadow).
func.func @f(%x: f32, %i: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  // expected-note @below {{the dynamic shared memory}}
  %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
  %s = memref.view %raw[%c0][%c64] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
  // expected-error @below {{'memref.store' op stores a differentiated value into dynamic shared memory (gpu.dynamic_shared_memory) that the differentiated function views itself}}
  memref.store %x, %s[%i] : memref<?xf32, #gpu.address_space<workgroup>>
  %y = memref.load %s[%i] : memref<?xf32, #gpu.address_space<workgroup>>
  return %y : f32
}
func.func @g(%x: f32, %i: index, %seed: f32) -> f32 {
  %d:2 = nabla.autodiff @f(%x, %i, %seed) {activity = [#nabla.activity<active>, #nabla.activity<const>], ret_activity = [#nabla.activity<active>]} : (f32, index, f32) -> (f32, f32)
  return %d#1 : f32
}
