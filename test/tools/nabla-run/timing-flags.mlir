// --repeat=N (1 to 100000) and --time[=text|json] are launch flags of
// nabla-run: a malformed value is a usage error (exit 2) naming the flag and
// what it accepts, reported before any compilation or device.
// RUN: %expect_exit 2 nabla-run %s --kernel=k --grid=1 --block=1 --repeat=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: %expect_exit 2 nabla-run %s --kernel=k --grid=1 --block=1 --repeat=100001 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: %expect_exit 2 nabla-run %s --kernel=k --grid=1 --block=1 --repeat=-3 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: %expect_exit 2 nabla-run %s --kernel=k --grid=1 --block=1 --repeat=five 2>&1 | FileCheck %s --check-prefix=WORD
// RUN: %expect_exit 2 nabla-run %s --kernel=k --grid=1 --block=1 --repeat= 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: %expect_exit 2 nabla-run %s --kernel=k --grid=1 --block=1 --repeat 2>&1 | FileCheck %s --check-prefix=BARE
// RUN: %expect_exit 2 nabla-run %s --kernel=k --grid=1 --block=1 --time=xml 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: %expect_exit 2 nabla-run %s --kernel=k --grid=1 --block=1 --time= 2>&1 | FileCheck %s --check-prefix=NO-FORMAT
// RUN: %expect_exit 2 nabla-run %s --kernel=k --grid=1 --block=1 --times 2>&1 | FileCheck %s --check-prefix=TYPO

// ZERO: nabla-run: malformed --repeat '0' (expected 1 to 100000)
// ZERO-NEXT: usage: nabla-run FILE
// ZERO: --repeat=N
// LARGE: nabla-run: malformed --repeat '100001' (expected 1 to 100000)
// NEGATIVE: nabla-run: malformed --repeat '-3' (expected 1 to 100000)
// WORD: nabla-run: malformed --repeat 'five' (expected 1 to 100000)
// EMPTY: nabla-run: malformed --repeat '' (expected 1 to 100000)
// BARE: nabla-run: unknown option '--repeat'
// FORMAT: nabla-run: malformed --time=xml (expected --time, --time=text or --time=json)
// FORMAT: --time[=text|json]
// NO-FORMAT: nabla-run: malformed --time= (expected --time, --time=text or --time=json)
// TYPO: nabla-run: unknown option '--times'
