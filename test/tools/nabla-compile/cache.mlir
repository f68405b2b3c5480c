// The kernel cache (docs/Cache.md): a second identical compile is a hit that
// writes the same files, a changed option is a miss, --no-cache and
// NABLA_NO_CACHE bypass the cache, and a malformed NABLA_CACHE_SIZE is a
// usage error. (lit turns the cache off for every other test.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: env -u NABLA_NO_CACHE NABLA_CACHE_DIR=%t/cache NABLA_CACHE_VERBOSE=1 nabla-compile %s --target=spirv --block=64 -o %t/first 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env -u NABLA_NO_CACHE NABLA_CACHE_DIR=%t/cache NABLA_CACHE_VERBOSE=1 nabla-compile %s --target=spirv --block=64 -o %t/second 2>&1 | FileCheck %s --check-prefix=HIT
// RUN: diff %t/first/manifest.json %t/second/manifest.json
// RUN: cmp %t/first/kernels.spv %t/second/kernels.spv
// RUN: env -u NABLA_NO_CACHE NABLA_CACHE_DIR=%t/cache NABLA_CACHE_VERBOSE=1 nabla-compile %s --target=spirv --block=32 -o %t/other 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env -u NABLA_NO_CACHE NABLA_CACHE_DIR=%t/cache NABLA_CACHE_VERBOSE=1 nabla-compile %s --target=metal --block=64 -o %t/other 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env -u NABLA_NO_CACHE NABLA_CACHE_DIR=%t/cache NABLA_CACHE_VERBOSE=1 nabla-compile %s --target=spirv --block=64 --subgroup-size=16 -o %t/other 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env -u NABLA_NO_CACHE NABLA_CACHE_DIR=%t/cache NABLA_CACHE_VERBOSE=1 nabla-compile %s --target=spirv --block=64 --no-cache -o %t/other 2>&1 | FileCheck %s --check-prefix=NONE --allow-empty
// RUN: env NABLA_NO_CACHE=1 NABLA_CACHE_DIR=%t/cache NABLA_CACHE_VERBOSE=1 nabla-compile %s --target=spirv --block=64 -o %t/other 2>&1 | FileCheck %s --check-prefix=NONE --allow-empty
// RUN: env -u NABLA_NO_CACHE NABLA_CACHE_DIR=%t/cache NABLA_CACHE_SIZE=lots not nabla-compile %s --target=spirv -o %t/other 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: %expect_exit 2 env -u NABLA_NO_CACHE NABLA_CACHE_SIZE=12X nabla-compile %s --target=spirv -o %t/other

// MISS: nabla-cache: miss [[KEY:[0-9a-f]+]]
// MISS-NEXT: nabla-cache: stored [[KEY]]
// HIT: nabla-cache: hit {{[0-9a-f]+$}}
// HIT-NOT: nabla-cache
// NONE-NOT: nabla-cache
// SIZE: nabla-compile: $NABLA_CACHE_SIZE must be a number of bytes, optionally with a K, M or G suffix, not 'lots'

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%A: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %inbounds = arith.cmpi ult, %i, %n : index
      scf.if %inbounds {
        %a = memref.load %A[%i] : memref<?xf32>
        %twice = arith.addf %a, %a : f32
        memref.store %twice, %A[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
