// nabla-compile --help lists every flag with a one-line description, the exit
// statuses and example command lines, and exits 0.
// RUN: nabla-compile --help | FileCheck %s
// CHECK: USAGE: nabla-compile [options] <input .mlir>
// CHECK-DAG: {{^  --help +- [A-Z].+}}
// CHECK-DAG: {{^  --version +- [A-Z].+}}
// CHECK-DAG: {{^  --abi=<v1\|v2> +- [A-Z].+}}
// CHECK-DAG: {{^  --block=<X\[,Y,Z\]> +- [A-Z].+}}
// CHECK-DAG: {{^  --chip=<CHIP> +- [A-Z].+}}
// CHECK-DAG: {{^  --dynamic-shared-memory=<BYTES> +- [A-Z].+}}
// CHECK-DAG: {{^  -o <DIR> +- [A-Z].+}}
// CHECK-DAG: {{^  --no-cache +- [A-Z].+}}
// CHECK-DAG: {{^  --opt-level=<N> +- [A-Z].+}}
// CHECK-DAG: {{^  --subgroup-size=<N> +- [A-Z].+}}
// CHECK-DAG: {{^  --target=<nvvm\|rocdl\|spirv\|metal> +- [A-Z].+}}
// CHECK-DAG: {{^  --workgroup-size=<X\[,Y,Z\]> +- [A-Z].+}}
// CHECK: Exit status: 0 success, 1 compile error, 2 usage error.
// CHECK: EXAMPLES:
// CHECK-NEXT: nabla-compile kernel.mlir --target=spirv --block=64 -o out
