// nabla-materialize-tapes: the function holding tapes is inlined into its
// kernel, which gains a trailing `memref<?xi32>` tape parameter laid out
// thread-minor, and a formula of its scalar parameters; host launches
// allocate the tape around the launch.
// RUN: nabla-opt %s --nabla-materialize-tapes="remarks=true" -split-input-file -verify-diagnostics | FileCheck %s

module attributes {gpu.container_module} {
  gpu.module @m {
    func.func private @body(%A: memref<?xf32>, %n: i32) {
      %c0 = arith.constant 0 : index
      %m = arith.index_cast %n : i32 to index
      %t = nabla.tape %m : memref<?xi32>
      %w = nabla.tape %m : memref<?x2xi32>
      %x = memref.load %A[%c0] : memref<?xf32>
      %b = arith.bitcast %x : f32 to i32
      memref.store %b, %t[%c0] : memref<?xi32>
      %y = memref.load %w[%c0, %c0] : memref<?x2xi32>
      %z = memref.load %t[%c0] : memref<?xi32>
      %s = arith.addi %y, %z : i32
      %f = arith.bitcast %s : i32 to f32
      memref.store %f, %A[%c0] : memref<?xf32>
      return
    }
    // expected-remark @below {{global-memory tape: 4 * (3 * arg1) bytes per thread (parameter #2), allocated by the launch}}
    gpu.func @k(%A: memref<?xf32>, %n: i32) kernel {
      func.call @body(%A, %n) : (memref<?xf32>, i32) -> ()
      gpu.return
    }
  }
  func.func @main(%A: memref<?xf32>, %n: i32) {
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @m::@k blocks in (%c4, %c1, %c1) threads in (%c4, %c1, %c1) args(%A : memref<?xf32>, %n : i32)
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%A : memref<?xf32>, %n : i32)
    return
  }
}

// Launches of one kernel share the strings naming it and its formula.
// CHECK: llvm.mlir.global internal constant @__nabla_tape_formula("3 * arg1\00")
// CHECK-NEXT: llvm.mlir.global internal constant @__nabla_tape_kernel("k\00")
// CHECK-NOT: llvm.mlir.global
// CHECK-NOT: func.func private @body
// CHECK-LABEL: gpu.func @k(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %[[N:.*]]: i32, %[[TAPE:.*]]: memref<?xi32> {nabla.tape}) kernel
// CHECK-SAME: nabla.tape = {formula = "3 * arg1", words_per_thread = "[\22muli\22,64,[\22index_cast\22,64,[\22arg\22,32,1]],[\22const\22,64,3]]"}
// The thread's linear id in its block and the block's thread count, the
// block's in the grid and the grid's block count (x fastest); word w of
// thread t at w * threads + t.
// CHECK: %[[IN_BLOCK:.*]] = arith.addi %{{.*}}, %thread_id_x : index
// CHECK: %[[BLOCK:.*]] = arith.muli %{{.*}}, %block_dim_x : index
// CHECK: %[[BLOCK_ID:.*]] = arith.addi %{{.*}}, %block_id_x : index
// CHECK: %[[BLOCKS:.*]] = arith.muli %{{.*}}, %grid_dim_x : index
// CHECK: %[[THREADS:.*]] = arith.muli %[[BLOCKS]], %[[BLOCK]] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[BLOCK_ID]], %[[BLOCK]] : index
// CHECK: %[[THREAD:.*]] = arith.addi %[[FIRST]], %[[IN_BLOCK]] : index
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %[[THREADS]] : index
// CHECK: %[[AT:.*]] = arith.addi %[[ROW]], %[[THREAD]] : index
// CHECK: memref.store %{{.*}}, %[[TAPE]][%[[AT]]] : memref<?xi32>
// CHECK: memref.load %[[TAPE]][%{{.*}}] : memref<?xi32>
// CHECK: memref.load %[[TAPE]][%{{.*}}] : memref<?xi32>
// CHECK-LABEL: func.func @main(
// CHECK: %[[ELEMENTS:.*]] = arith.muli %{{.*}}, %{{[0-9]+}} : index
// The size is checked against the limit before anything is allocated.
// CHECK-NEXT: %[[NAME:.*]] = llvm.mlir.addressof @__nabla_tape_kernel : !llvm.ptr
// CHECK-NEXT: %[[FORMULA:.*]] = llvm.mlir.addressof @__nabla_tape_formula : !llvm.ptr
// CHECK-NEXT: %[[WORDS:.*]] = arith.index_cast %[[ELEMENTS]] : index to i64
// CHECK-NEXT: call @nabla_mgpu_check_tape(%[[WORDS]], %[[NAME]], %[[FORMULA]])
// CHECK-NEXT: %[[BUFFER:.*]] = gpu.alloc (%[[ELEMENTS]]) : memref<?xi32>
// CHECK: gpu.launch_func @m::@k {{.*}} args(%{{.*}} : memref<?xf32>, %{{.*}} : i32, %[[BUFFER]] : memref<?xi32>)
// CHECK: gpu.dealloc %[[BUFFER]] : memref<?xi32>
// CHECK: llvm.mlir.addressof @__nabla_tape_kernel : !llvm.ptr
// CHECK-NEXT: llvm.mlir.addressof @__nabla_tape_formula : !llvm.ptr
// CHECK: gpu.launch_func @m::@k

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%A: memref<?xf32>, %N: memref<1xindex>) kernel {
      %c0 = arith.constant 0 : index
      // expected-note @below {{this value (a trip count that varies between threads or reads memory needs the hint nabla.max_trip_count = N on its loop)}}
      %n = memref.load %N[%c0] : memref<1xindex>
      // expected-error @below {{'nabla.tape' op needs a size computable before the launch from the kernel's integer scalar parameters, constants and elements of integer buffers, but it depends on 'memref.load'}}
      %t = nabla.tape %n : memref<?xi32>
      %v = memref.load %t[%c0] : memref<?xi32>
      gpu.return
    }
  }
}

// -----

func.func @f(%n: index) {
  // expected-error @below {{'nabla.tape' op is not inside a kernel}}
  %t = nabla.tape %n : memref<?xi32>
  return
}

// -----

// Slots nothing reads back take no memory: no parameter, no allocation.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-remark @below {{global-memory tape: every slot unread, none allocated}}
    gpu.func @k(%A: memref<?xf32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %t = nabla.tape %n : memref<?xi32>
      %x = memref.load %A[%c0] : memref<?xf32>
      %b = arith.bitcast %x : f32 to i32
      memref.store %b, %t[%c0] : memref<?xi32>
      gpu.return
    }
  }
}
// CHECK-LABEL: gpu.func @k(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %{{.*}}: index) kernel {
// CHECK-NOT: nabla.tape

// -----

// A split kernel's tape is its caller-owned parameter; host code sizes it
// with nabla.split_tape_elements, replaced by the formula of its operands.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-remark @below {{global-memory tape: 4 * (2 * arg1) bytes per thread (parameter #2), the caller's (split mode)}}
    gpu.func @fwd(%A: memref<?xf32>, %n: index, %tape: memref<?xi32> {nabla.split_tape}) kernel {
      %c0 = arith.constant 0 : index
      %t = nabla.tape %n {nabla.split_tape} : memref<?x2xi32>
      %x = memref.load %A[%c0] : memref<?xf32>
      %b = arith.bitcast %x : f32 to i32
      memref.store %b, %t[%c0, %c0] : memref<?x2xi32>
      gpu.return
    }
  }
  func.func @host(%A: memref<?xf32>, %n: index) -> index {
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %e = nabla.split_tape_elements @m::@fwd blocks in (%c2, %c2, %c2) threads in (%c4, %c2, %c2)
        args(%A, %n : memref<?xf32>, index) : index
    return %e : index
  }
}
// CHECK-LABEL: gpu.func @fwd(
// CHECK-SAME: %[[TAPE:[^:]*]]: memref<?xi32> {nabla.split_tape}) kernel
// CHECK: memref.store %{{.*}}, %[[TAPE]][%{{.*}}] : memref<?xi32>
// CHECK-LABEL: func.func @host(
// CHECK-NOT: nabla.split_tape_elements
// The words, 2 * n, times the 128 threads of the launch.
// CHECK: %[[DOUBLE:.*]] = arith.muli %arg1, %{{.*}} : index
// CHECK: %[[WORDS:.*]] = arith.addi %{{.*}}, %[[DOUBLE]] : index
// CHECK: %[[ELEMENTS:.*]] = arith.muli %[[WORDS]], %{{.*}} : index
// CHECK: return %[[ELEMENTS]]

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @plain(%A: memref<?xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%A: memref<?xf32>) -> index {
    %c1 = arith.constant 1 : index
    // expected-error @below {{names @m::@plain, which is not a split-mode kernel}}
    %e = nabla.split_tape_elements @m::@plain blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%A : memref<?xf32>) : index
    return %e : index
  }
}

// -----

// A size read from an integer buffer where the kernel reads it (ragged rows'
// lengths, read at the entry under the condition the primal reads them
// under): the formula loads the launch's buffer; a host launch reads a host
// copy of it, for every thread of the grid.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-remark @below {{global-memory tape: 4 * (select((thread_id.x ult arg2), arg1[thread_id.x], 0)) bytes per thread (parameter #3), allocated by the launch}}
    gpu.func @k(%A: memref<?xf32>, %lens: memref<?xi32>, %rows: index) kernel {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %in = arith.cmpi ult, %t, %rows : index
      %n = scf.if %in -> (i32) {
        %v = memref.load %lens[%t] : memref<?xi32>
        scf.yield %v : i32
      } else {
        %z = arith.constant 0 : i32
        scf.yield %z : i32
      }
      %m = arith.index_cast %n : i32 to index
      %tape = nabla.tape %m : memref<?xi32>
      %x = memref.load %A[%c0] : memref<?xf32>
      %b = arith.bitcast %x : f32 to i32
      memref.store %b, %tape[%c0] : memref<?xi32>
      %y = memref.load %tape[%c0] : memref<?xi32>
      %f = arith.bitcast %y : i32 to f32
      memref.store %f, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
  func.func @main(%A: memref<?xf32>, %lens: memref<?xi32>, %rows: index) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%A : memref<?xf32>, %lens : memref<?xi32>, %rows : index)
    return
  }
}
// CHECK-LABEL: gpu.func @k(
// CHECK-SAME: nabla.tape = {formula = "select((thread_id.x ult arg2), arg1[thread_id.x], 0)"
// CHECK-SAME: [\22load\22,32,1,[\22thread_id\22,64,0]]
// CHECK-LABEL: func.func @main(
// CHECK: %[[N:.*]] = memref.dim %[[LENS:.*]], %{{.*}} : memref<?xi32>
// CHECK: %[[HOST:.*]] = memref.alloc(%[[N]]) : memref<?xi32>
// CHECK: gpu.memcpy %[[HOST]], %[[LENS]] : memref<?xi32>, memref<?xi32>
// CHECK: scf.for
// CHECK: scf.if
// CHECK: memref.load %[[HOST]]
// CHECK: memref.dealloc %[[HOST]]
// CHECK: gpu.alloc

// -----

// The thread id only inside the guarded read (the guard does not read it):
// the host code still takes the largest size over the grid's threads.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-remark @below {{global-memory tape: 4 * (select((0 ult arg2), arg1[thread_id.x], 0)) bytes per thread (parameter #3), allocated by the launch}}
    gpu.func @k(%A: memref<?xf32>, %lens: memref<?xi32>, %rows: index) kernel {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %any = arith.cmpi ult, %c0, %rows : index
      %n = scf.if %any -> (i32) {
        %v = memref.load %lens[%t] : memref<?xi32>
        scf.yield %v : i32
      } else {
        %z = arith.constant 0 : i32
        scf.yield %z : i32
      }
      %m = arith.index_cast %n : i32 to index
      %tape = nabla.tape %m : memref<?xi32>
      %x = memref.load %A[%c0] : memref<?xf32>
      %b = arith.bitcast %x : f32 to i32
      memref.store %b, %tape[%c0] : memref<?xi32>
      %y = memref.load %tape[%c0] : memref<?xi32>
      %f = arith.bitcast %y : i32 to f32
      memref.store %f, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
  func.func @main(%A: memref<?xf32>, %lens: memref<?xi32>, %rows: index) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%A : memref<?xf32>, %lens : memref<?xi32>, %rows : index)
    return
  }
}
// CHECK-LABEL: func.func @main(
// CHECK: gpu.memcpy
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: %[[TX:.*]] = arith.remui %[[T]], %{{.*}} : index
// CHECK: memref.load %{{.*}}[%[[TX]]] : memref<?xi32>
// CHECK: arith.maxsi

// -----

// A growing tape (a while loop's steps): the capacity is the buffer's first
// word, which the launcher writes; an overflow raises the second with an
// atomic maximum; the slots follow the two words. The formula reads
// `capacity`, and the kernel is marked growable.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-remark @below {{global-memory tape: 4 * (capacity) bytes per thread (parameter #1), allocated by the launch}}
    gpu.func @grow(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %cap = nabla.tape_capacity : index
      %t = nabla.tape %cap : memref<?xi32>
      %x = memref.load %A[%c0] : memref<?xf32>
      %b = arith.bitcast %x : f32 to i32
      memref.store %b, %t[%c0] : memref<?xi32>
      nabla.tape_overflow %cap
      %r = memref.load %t[%c0] : memref<?xi32>
      %f = arith.bitcast %r : i32 to f32
      memref.store %f, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @grow(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %[[TAPE:.*]]: memref<?xi32> {nabla.tape}) kernel
// CHECK-SAME: nabla.tape = {formula = "capacity", growable, words_per_thread = "[\22capacity\22,64,0]"}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[WORD:.*]] = memref.load %[[TAPE]][%[[C0]]] : memref<?xi32>
// CHECK: %[[CAP:.*]] = arith.index_cast %[[WORD]] : i32 to index
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %[[C2]] : index
// CHECK: memref.store %{{.*}}, %[[TAPE]][%[[AT]]] : memref<?xi32>
// CHECK: %[[NEEDED:.*]] = arith.index_cast %[[CAP]] : index to i32
// CHECK: memref.atomic_rmw maxs %[[NEEDED]], %[[TAPE]][%[[C1]]] : (i32, memref<?xi32>) -> i32

// -----

// A host launch of a kernel with a growing tape: the capacity comes from
// libnabla_mgpu, the elements are the formula's with it plus the two header
// words, the tape is filled with the capacity (the first word is read as
// it, the overflow word stays it unless a thread needed more), and after
// the launch libnabla_mgpu checks the overflow word. An asynchronous launch
// is refused.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-remark @below {{global-memory tape: 4 * (capacity) bytes per thread (parameter #1), allocated by the launch}}
    gpu.func @grow(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %cap = nabla.tape_capacity : index
      %t = nabla.tape %cap : memref<?xi32>
      %x = memref.load %A[%c0] : memref<?xf32>
      %b = arith.bitcast %x : f32 to i32
      memref.store %b, %t[%c0] : memref<?xi32>
      %r = memref.load %t[%c0] : memref<?xi32>
      %f = arith.bitcast %r : i32 to f32
      memref.store %f, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
  func.func @main(%A: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @m::@grow blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%A : memref<?xf32>)
    return
  }
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[CAP64:.*]] = call @nabla_mgpu_tape_capacity() : () -> i64
// CHECK: %[[CAP:.*]] = arith.index_cast %[[CAP64]] : i64 to index
// CHECK: %[[WORDS:.*]] = arith.addi %{{.*}}, %[[CAP]] : index
// CHECK: %[[ALL:.*]] = arith.muli %[[WORDS]], %{{.*}} : index
// CHECK: %[[ELEMENTS:.*]] = arith.addi %[[ALL]], %c2{{.*}} : index
// CHECK: call @nabla_mgpu_check_tape(
// CHECK: %[[TAPE:.*]] = gpu.alloc  (%[[ELEMENTS]]) : memref<?xi32>
// CHECK: %[[FILL:.*]] = arith.trunci %[[CAP64]] : i64 to i32
// CHECK: gpu.memset %[[TAPE]], %[[FILL]] : memref<?xi32>, i32
// CHECK: gpu.launch_func @m::@grow {{.*}} args(%{{.*}} : memref<?xf32>, %[[TAPE]] : memref<?xi32>)
// CHECK: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[TAPE]]
// CHECK: %[[ADDRESS64:.*]] = arith.index_cast %[[ADDRESS]] : index to i64
// CHECK: call @nabla_mgpu_check_tape_overflow(%[[ADDRESS64]], %[[CAP64]], %{{.*}})
// CHECK: gpu.dealloc  %[[TAPE]]

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-remark @below {{global-memory tape: 4 * (capacity) bytes per thread (parameter #1), allocated by the launch}}
    gpu.func @grow(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %cap = nabla.tape_capacity : index
      %t = nabla.tape %cap : memref<?xi32>
      %x = memref.load %A[%c0] : memref<?xf32>
      %b = arith.bitcast %x : f32 to i32
      memref.store %b, %t[%c0] : memref<?xi32>
      %r = memref.load %t[%c0] : memref<?xi32>
      %f = arith.bitcast %r : i32 to f32
      memref.store %f, %A[%c0] : memref<?xf32>
      gpu.return
    }
  }
  func.func @main(%A: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %t = gpu.wait async
    // expected-error @below {{launches @grow asynchronously, whose tape grows with a loop's trip count known only as it runs}}
    %u = gpu.launch_func async [%t] @m::@grow blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%A : memref<?xf32>)
    return
  }
}

// -----

// Every slot of a growing tape unread: none allocated, nothing to overflow,
// the capacity unbounded.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-remark @below {{global-memory tape: every slot unread, none allocated}}
    gpu.func @unread(%A: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %cap = nabla.tape_capacity : index
      %t = nabla.tape %cap : memref<?xi32>
      %x = memref.load %A[%c0] : memref<?xf32>
      %b = arith.bitcast %x : f32 to i32
      memref.store %b, %t[%c0] : memref<?xi32>
      %over = arith.cmpi ugt, %c0, %cap : index
      scf.if %over {
        nabla.tape_overflow %c0
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @unread(
// CHECK-NOT: nabla.tape
// CHECK: arith.constant 2147483647 : index
// CHECK-NOT: nabla.tape_overflow
// CHECK: gpu.return
