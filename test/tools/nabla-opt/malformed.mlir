// Malformed IR: a parse error with its location, failing exit, no crash.
// RUN: not nabla-opt %s 2>&1 | FileCheck %s
// CHECK: malformed.mlir:[[@LINE+1]]:{{[0-9]+}}: error: expected
reloc.global @g : memref<4xf32> {key = "k"
