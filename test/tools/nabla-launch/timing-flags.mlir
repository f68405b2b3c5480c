// --repeat=N (1 to 100000) and --time[=text|json] are launch flags of
// nabla-launch too: a malformed value is a usage error (exit 2) naming the
// flag and what it accepts, reported before the directory is read.
// RUN: %expect_exit 2 nabla-launch %t --kernel=k --grid=1 --block=1 --repeat=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: %expect_exit 2 nabla-launch %t --kernel=k --grid=1 --block=1 --repeat=100001 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: %expect_exit 2 nabla-launch %t --kernel=k --grid=1 --block=1 --repeat=-3 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: %expect_exit 2 nabla-launch %t --kernel=k --grid=1 --block=1 --repeat=five 2>&1 | FileCheck %s --check-prefix=WORD
// RUN: %expect_exit 2 nabla-launch %t --kernel=k --grid=1 --block=1 --repeat= 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: %expect_exit 2 nabla-launch %t --kernel=k --grid=1 --block=1 --repeat 2>&1 | FileCheck %s --check-prefix=BARE
// RUN: %expect_exit 2 nabla-launch %t --kernel=k --grid=1 --block=1 --time=xml 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: %expect_exit 2 nabla-launch %t --kernel=k --grid=1 --block=1 --time= 2>&1 | FileCheck %s --check-prefix=NO-FORMAT
// RUN: %expect_exit 2 nabla-launch %t --kernel=k --grid=1 --block=1 --times 2>&1 | FileCheck %s --check-prefix=TYPO

// ZERO: nabla-launch: malformed --repeat '0' (expected 1 to 100000)
// ZERO-NEXT: usage: nabla-launch DIR
// ZERO: --repeat=N
// LARGE: nabla-launch: malformed --repeat '100001' (expected 1 to 100000)
// NEGATIVE: nabla-launch: malformed --repeat '-3' (expected 1 to 100000)
// WORD: nabla-launch: malformed --repeat 'five' (expected 1 to 100000)
// EMPTY: nabla-launch: malformed --repeat '' (expected 1 to 100000)
// BARE: nabla-launch: unknown option '--repeat'
// FORMAT: nabla-launch: malformed --time=xml (expected --time, --time=text or --time=json)
// FORMAT: --time[=text|json]
// NO-FORMAT: nabla-launch: malformed --time= (expected --time, --time=text or --time=json)
// TYPO: nabla-launch: unknown option '--times'
