// nabla-run --help lists every flag with a one-line description, the exit
// statuses and an example command line, on stdout, and exits 0.
// RUN: nabla-run --help | FileCheck %s
// RUN: nabla-run -h | FileCheck %s
// CHECK: usage: nabla-run FILE --kernel=NAME --grid=X[,Y,Z] --block=X[,Y,Z]
// CHECK-NEXT: nabla-run FILE.mlir --entry=NAME [--arg=SPEC... | --arg-sets=FILE] [--out=DIR]
// CHECK-NEXT: [--target=vulkan|cuda|hip] [--device=N]
// CHECK: OPTIONS:
// CHECK-DAG: {{^  --kernel=NAME +[a-z].+}}
// CHECK-DAG: {{^  --grid=X\[,Y,Z\] +[a-z].+}}
// CHECK-DAG: {{^  --block=X\[,Y,Z\] +[a-z].+}}
// CHECK-DAG: {{^  --arg=SPEC +[a-z].+}}
// CHECK-DAG: {{^  --reloc=KEY=FILE.npy +[a-z].+}}
// CHECK-DAG: {{^  --target=vulkan\|cuda\|hip +[a-z].+}}
// CHECK-DAG: {{^  --device=N +[a-z].+}}
// CHECK-DAG: {{^  --out=DIR +[a-z].+}}
// CHECK-DAG: {{^  --timeout=SECONDS +[a-z].+}}
// CHECK-DAG: {{^  --print +[a-z].+}}
// CHECK-DAG: {{^  --repeat=N +[a-z].+}}
// CHECK-DAG: {{^  --time\[=text\|json\] +[a-z].+}}
// CHECK-DAG: {{^  --dynamic-shared-memory=BYTES +[a-z].+}}
// CHECK-DAG: {{^  --clang-option=ARG +[a-z].+}}
// CHECK-DAG: {{^  --abi=v1\|v2 +[a-z].+}}
// CHECK-DAG: {{^  --emulate-float-atomics +[A-Za-z].+}}
// CHECK-DAG: {{^  --no-cache +[a-z].+}}
// CHECK-DAG: {{^  --help +[a-z].+}}
// CHECK-DAG: {{^  --version +[a-z].+}}
// CHECK: FILE is MLIR, a frontend's LLVM IR (.ll, .bc) or CUDA/HIP source
// CHECK: With --entry, FILE is a host program
// CHECK: EXIT STATUS: 0 success, 1 compile or runtime error, 2 usage error.
// CHECK: EXAMPLE:
// CHECK: nabla-run examples/mul_kernel.mlir --kernel=mul_kernel --grid=1 --block=64 --arg=a.npy --arg=index:16

// A usage error still prints the flags, on stderr, and exits 2.
// RUN: %expect_exit 2 nabla-run --no-such-flag 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: nabla-run: unknown option '--no-such-flag'
// USAGE-NEXT: usage: nabla-run FILE --kernel=NAME
// USAGE: --kernel=NAME
