// A single-pass reduction's last block (CUDA's threadFenceReduction idiom):
// blocks write partials, take a ticket from an atomic counter, and the block
// whose ticket is gridDim - 1 reads every partial. Reverse mode refuses it
// with the reason; the ticket shared through workgroup memory (and a float
// view of it) is followed, and a guarded region without active data is fine.
// RUN: nabla-opt %s -split-input-file -verify-diagnostics --nabla-differentiate

func.func @last_block(%x: memref<?xf32>, %partials: memref<?xf32>,
                      %counter: memref<?xi32>, %out: memref<?xf32>,
                      %ticket: memref<1xf32, #gpu.address_space<workgroup>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %block = gpu.block_id x
  %v = memref.load %x[%block] : memref<?xf32>
  %sq = arith.mulf %v, %v : f32
  memref.store %sq, %partials[%block] : memref<?xf32>
  nabla.memory_fence "device"
  // expected-error @below {{takes a ticket that decides which block runs code reading what other blocks wrote}}
  %t = memref.atomic_rmw addi %one, %counter[%c0] : (i32, memref<?xi32>) -> i32
  %tf = arith.bitcast %t : i32 to f32
  memref.store %tf, %ticket[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  %shared = memref.load %ticket[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
  %mine = arith.bitcast %shared : f32 to i32
  %grid = gpu.grid_dim x
  %g = arith.index_cast %grid : index to i32
  %lastTicket = arith.subi %g, %one : i32
  %isLast = arith.cmpi eq, %mine, %lastTicket : i32
  %tid = gpu.thread_id x
  %first = arith.cmpi eq, %tid, %c0 : index
  %both = arith.andi %isLast, %first : i1
  // expected-note @below {{the code the ticket guards}}
  scf.if %both {
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %b = %c0 to %grid step %c1 iter_args(%s = %zero) -> f32 {
      %p = memref.load %partials[%b] : memref<?xf32>
      %n = arith.addf %s, %p : f32
      scf.yield %n : f32
    }
    memref.store %sum, %out[%c0] : memref<?xf32>
  }
  return
}
func.func @grad(%x: memref<?xf32>, %dx: memref<?xf32>, %partials: memref<?xf32>,
                %dpartials: memref<?xf32>, %counter: memref<?xi32>,
                %out: memref<?xf32>, %dout: memref<?xf32>,
                %ticket: memref<1xf32, #gpu.address_space<workgroup>>) {
  nabla.autodiff @last_block(%x, %dx, %partials, %dpartials, %counter, %out, %dout, %ticket)
      {activity = [#nabla.activity<dup>, #nabla.activity<dup>, #nabla.activity<const>,
                   #nabla.activity<dup>, #nabla.activity<const>], ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xi32>,
         memref<?xf32>, memref<?xf32>, memref<1xf32, #gpu.address_space<workgroup>>) -> ()
  return
}

// -----

// The last block only counts (no active data under the ticket): differentiated.
func.func @last_block_counts(%x: memref<?xf32>, %counter: memref<?xi32>,
                             %done: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %block = gpu.block_id x
  %v = memref.load %x[%block] : memref<?xf32>
  %sq = arith.mulf %v, %v : f32
  memref.store %sq, %x[%block] : memref<?xf32>
  %t = memref.atomic_rmw addi %one, %counter[%c0] : (i32, memref<?xi32>) -> i32
  %grid = gpu.grid_dim x
  %g = arith.index_cast %grid : index to i32
  %lastTicket = arith.subi %g, %one : i32
  %isLast = arith.cmpi eq, %t, %lastTicket : i32
  scf.if %isLast {
    memref.store %one, %done[%c0] : memref<?xi32>
  }
  return
}
func.func @grad_counts(%x: memref<?xf32>, %dx: memref<?xf32>, %counter: memref<?xi32>,
                       %done: memref<?xi32>) {
  nabla.autodiff @last_block_counts(%x, %dx, %counter, %done)
      {activity = [#nabla.activity<dup>, #nabla.activity<const>, #nabla.activity<const>],
       ret_activity = []}
      : (memref<?xf32>, memref<?xf32>, memref<?xi32>, memref<?xi32>) -> ()
  return
}
