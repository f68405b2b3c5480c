//===- TestDialect.td - A stand-in frontend dialect ----------*- tablegen -*-===//
//
// `nabla_test` plays a frontend's own dialect in the tests: its ops know
// nothing of Nabla; TestDerivatives.cpp makes them differentiable with
// external models of Nabla's interfaces, the way a frontend would: a scalar
// rule (cube), a memory op (scaled_load) and a region op (once).
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TEST_DIALECT_TD
#define NABLA_TEST_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def NablaTest_Dialect : Dialect {
  let name = "nabla_test";
  let cppNamespace = "::nabla::test";
  let summary = "A stand-in for a frontend's dialect, used by Nabla's tests.";
}

class NablaTest_UnaryOp<string mnemonic>
    : Op<NablaTest_Dialect, mnemonic, [Pure, SameOperandsAndResultType]> {
  let arguments = (ins AnyFloat:$x);
  let results = (outs AnyFloat:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def NablaTest_CubeOp : NablaTest_UnaryOp<"cube"> {
  let summary = "The cube of a float; differentiable through an external model";
  let description = [{
    ```mlir
    %y = nabla_test.cube %x : f32
    ```
  }];
}

def NablaTest_OpaqueOp : NablaTest_UnaryOp<"opaque"> {
  let summary = "A float function without a derivative rule";
  let description = [{
    ```mlir
    %y = nabla_test.opaque %x : f32
    ```
  }];
}

def NablaTest_ScaledLoadOp : Op<NablaTest_Dialect, "scaled_load",
    [AllTypesMatch<["scale", "result"]>]> {
  let summary = "An element of a buffer times a scale (a memory op)";
  let description = [{
    `%r = nabla_test.scaled_load %m[%i], %s` is `m[i] * s`. Its derivatives
    come from the frontend's ForwardModeOpInterface and
    ReverseModeOpInterface models (the memory's shadow is read and
    accumulated into).

    ```mlir
    %r = nabla_test.scaled_load %A[%i], %s : memref<?xf32> -> f32
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[AnyFloat], [1]>, "the buffer",
                           [MemRead]>:$memref,
                       Index:$index, AnyFloat:$scale);
  let results = (outs AnyFloat:$result);
  let assemblyFormat = [{
    $memref `[` $index `]` `,` $scale attr-dict `:` type($memref) `->`
    type($result)
  }];
}

def NablaTest_YieldOp : Op<NablaTest_Dialect, "yield",
                           [Pure, Terminator, HasParent<"OnceOp">]> {
  let summary = "The terminator of nabla_test.once";
  let assemblyFormat = "attr-dict";
}

def NablaTest_OnceOp : Op<NablaTest_Dialect, "once",
    [SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "Runs its region once (a region op)";
  let description = [{
    ```mlir
    nabla_test.once {
      ...
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$body attr-dict";
}

#endif // NABLA_TEST_DIALECT_TD
