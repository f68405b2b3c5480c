// Input MLIR 22's parser crashes on is rejected before parsing, with a
// location and exit status 1: 100k nested brackets overflowed its stack, a
// dense array of `index` crashed it. The same check guards nabla-compile,
// nabla-run and nabla.Module.parse.
// RUN: /usr/bin/python3 -c "print('module attributes {x = ' + '[' * 100000 + ']' * 100000 + '} {}')" > %t.deep.mlir
// RUN: %expect_exit 1 nabla-opt %t.deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: %expect_exit 1 nabla-compile %t.deep.mlir --target=spirv -o %t.out 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: %expect_exit 1 nabla-opt %s 2>&1 | FileCheck %s --check-prefix=ARRAY
// Spellings the fuzzer found: `index` ended by '#', comments before it.
// RUN: /usr/bin/python3 -c "print('reloc.global @g : !llvm.ptr {key = array<index#s_id x 2>}')" > %t.hash.mlir
// RUN: %expect_exit 1 nabla-opt %t.hash.mlir 2>&1 | FileCheck %s --check-prefix=HASH
// RUN: /usr/bin/python3 -c "print('func.func private @f() attributes {x = array< // c\n index: 1>}')" > %t.comment.mlir
// RUN: %expect_exit 1 nabla-opt %t.comment.mlir 2>&1 | FileCheck %s --check-prefix=COMMENT
// Blanks, NUL bytes and comments between `array` and `<` (the lexer skips them).
// RUN: /usr/bin/python3 -c "print('func.func private @f() attributes {x = array \0\0 // c\n <index: 1>}')" > %t.gap.mlir
// RUN: %expect_exit 1 nabla-opt %t.gap.mlir 2>&1 | FileCheck %s --check-prefix=GAP
// RUN: /usr/bin/python3 -c "print('// ' + '[' * 1000 + '\nfunc.func private @f() attributes {a = array<i32: 1>, s = \"' + '{' * 1000 + '\", t = !llvm.array<2 x i32>}')" > %t.ok.mlir
// RUN: nabla-opt %t.ok.mlir | FileCheck %s --check-prefix=OK

// DEEP: deep.mlir:1:{{[0-9]+}}: error: brackets nest deeper than 256 levels; Nabla does not parse such input
// HASH: hash.mlir:1:42: error: a dense array cannot hold 'index' elements
// COMMENT: comment.mlir:2:2: error: a dense array cannot hold 'index' elements
// GAP: gap.mlir:2:3: error: a dense array cannot hold 'index' elements
// ARRAY: source-checks.mlir:[[@LINE+3]]:46: error: a dense array cannot hold 'index' elements (use i32 or i64)
// Brackets in comments and strings do not count; other arrays parse.
// OK: func.func private @f() attributes {a = array<i32: 1>, s = "{{[{]+}}", t = !llvm.array<2 x i32>}
func.func private @f() attributes {x = array<index: 1>}
