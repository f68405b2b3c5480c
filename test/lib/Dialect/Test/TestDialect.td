//===- TestDialect.td - A stand-in frontend dialect ----------*- tablegen -*-===//
//
// `nabla_test` plays a frontend's own dialect in the tests: its ops know
// nothing of Nabla; TestDerivatives.cpp attaches a derivative rule to one of
// them as an external model, the way a frontend would.
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

#endif // NABLA_TEST_DIALECT_TD
