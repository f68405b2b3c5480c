// RUN: nabla-opt %s --split-input-file --nabla-differentiate-host=remarks=true --verify-diagnostics -o /dev/null

// Host-level AD (HostDerivative.cpp): the remark that reports each copy the
// reverse sweep keeps, and what a differentiated host function may not do,
// each a located error.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %n step %c1 {
      // expected-remark@+1 {{host adjoint keeps a copy of argument #0 (4 elements) before this op overwrites it, once per iteration of 1 enclosing loop(s)}}
      gpu.launch_func @k::@inc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    }
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>, %n: index) {
    nabla.autodiff @program(%x, %dx, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<4xf32>, memref<4xf32>, index) -> ()
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  // expected-error@+1 {{scalar argument #1 of a host function can only be const}}
  func.func @program(%x: memref<4xf32>, %a: f32) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @k::@inc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>, %a: f32) -> f32 {
    %da = nabla.autodiff @program(%x, %dx, %a) {activity = [#nabla.activity<dup>, #nabla.activity<active>], ret_activity = []} : (memref<4xf32>, memref<4xf32>, f32) -> f32
    return %da : f32
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %f = arith.constant 2.0 : f32
    gpu.launch_func @k::@inc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    // expected-error@+1 {{stores on the host into a buffer that kernels read or that has a shadow}}
    memref.store %f, %x[%c0] : memref<4xf32>
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>) {
    nabla.autodiff @program(%x, %dx) {activity = [#nabla.activity<dup>], ret_activity = []} : (memref<4xf32>, memref<4xf32>) -> ()
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %n step %c1 {
      // expected-error@+1 {{an allocation inside a loop or branch of a differentiated host function is not supported}}
      %t = gpu.alloc () : memref<4xf32>
      gpu.memcpy %t, %x : memref<4xf32>, memref<4xf32>
      gpu.launch_func @k::@inc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%t : memref<4xf32>)
      gpu.dealloc %t : memref<4xf32>
    }
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>, %n: index) {
    nabla.autodiff @program(%x, %dx, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<4xf32>, memref<4xf32>, index) -> ()
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    // expected-error@+1 {{with loop-carried values cannot be differentiated in a host function}}
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %c1) -> index {
      gpu.launch_func @k::@inc blocks in (%b, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
      scf.yield %b : index
    }
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>, %n: index) {
    nabla.autodiff @program(%x, %dx, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<4xf32>, memref<4xf32>, index) -> ()
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func private @external(memref<4xf32>)
  func.func @program(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @k::@inc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    // expected-error@+1 {{calls @external with a buffer; host-level AD cannot tell what it does to it}}
    func.call @external(%x) : (memref<4xf32>) -> ()
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>) {
    nabla.autodiff @program(%x, %dx) {activity = [#nabla.activity<dup>], ret_activity = []} : (memref<4xf32>, memref<4xf32>) -> ()
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %i = gpu.thread_id x
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %s = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
      %a = memref.load %x[%i] : memref<4xf32>
      memref.store %a, %s[%i] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %bytes = arith.constant 16 : i32
    // expected-error@+1 {{which uses dynamic shared memory; host-level AD of such kernels is not supported yet}}
    gpu.launch_func @k::@inc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) dynamic_shared_memory_size %bytes args(%x : memref<4xf32>)
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>) {
    nabla.autodiff @program(%x, %dx) {activity = [#nabla.activity<dup>], ret_activity = []} : (memref<4xf32>, memref<4xf32>) -> ()
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %n step %c1 {
      // expected-error@+1 {{overwrites a buffer the reverse sweep needs, in a loop whose bounds depend on an enclosing loop}}
      scf.for %j = %c0 to %i step %c1 {
        gpu.launch_func @k::@inc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
      }
    }
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>, %n: index) {
    nabla.autodiff @program(%x, %dx, %n) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<4xf32>, memref<4xf32>, index) -> ()
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>, %y: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @k::@inc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    // expected-error@+1 {{reads a differentiated value on the host}}
    %v = memref.load %x[%c0] : memref<4xf32>
    memref.store %v, %y[%c0] : memref<4xf32>
    return
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>, %y: memref<4xf32>) {
    nabla.autodiff @program(%x, %dx, %y) {activity = [#nabla.activity<dup>, #nabla.activity<const>], ret_activity = []} : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @inc(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<4xf32>
      %s = math.sin %a : f32
      memref.store %s, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @program(%x: memref<4xf32>) -> index {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @k::@inc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    return %c4 : index
  }
  func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>) -> index {
    // expected-error@+1 {{differentiates host function @program, which returns values}}
    %r = nabla.autodiff @program(%x, %dx) {activity = [#nabla.activity<dup>], ret_activity = [#nabla.activity<const>]} : (memref<4xf32>, memref<4xf32>) -> index
    return %r : index
  }
}
