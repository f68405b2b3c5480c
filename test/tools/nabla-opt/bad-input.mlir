// Bad input is a located diagnostic and a failing exit, never a crash
// (`not` without --crash fails on a signal).
// RUN: not nabla-opt %s 2>&1 | FileCheck %s
// RUN: not nabla-opt %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: bad-input.mlir:[[@LINE+2]]:{{[0-9]+}}: error: 'nabla.autodiff' op callee @nowhere does not reference a symbol in the nearest symbol table
func.func @g(%x: f32) {
  nabla.autodiff @nowhere(%x) {activity = [#nabla.activity<const>], ret_activity = []} : (f32) -> ()
  return
}

// MISSING: cannot open input file
