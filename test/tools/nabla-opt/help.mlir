// nabla-opt registers Nabla's dialects next to every upstream one.
// RUN: nabla-opt --help | FileCheck %s
// CHECK: Available Dialects:
// CHECK-SAME: gpu
// CHECK-SAME: nabla
// CHECK-SAME: reloc
