//===- NablaAttrs.td - Attributes of the nabla dialect --------*- tablegen -*-===//
//
// The activity attribute `#nabla.activity<...>`, which classifies each argument
// and result of a differentiated function as in Enzyme.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLAATTRS_TD
#define NABLA_DIALECT_NABLA_IR_NABLAATTRS_TD

include "nabla/Dialect/Nabla/IR/NablaBase.td"
include "mlir/IR/EnumAttr.td"

def Nabla_ActivityConst : I32EnumAttrCase<"Const", 0, "const">;
def Nabla_ActivityDup : I32EnumAttrCase<"Dup", 1, "dup">;
def Nabla_ActivityDupNoNeed : I32EnumAttrCase<"DupNoNeed", 2, "dupnoneed">;
def Nabla_ActivityActive : I32EnumAttrCase<"Active", 3, "active">;
def Nabla_ActivityActiveNoNeed : I32EnumAttrCase<"ActiveNoNeed", 4, "activenoneed">;

def Nabla_Activity : I32EnumAttr<"Activity",
    "how a value takes part in differentiation", [
      Nabla_ActivityConst, Nabla_ActivityDup, Nabla_ActivityDupNoNeed,
      Nabla_ActivityActive, Nabla_ActivityActiveNoNeed]> {
  let cppNamespace = "::nabla";
  let genSpecializedAttr = 0;
}

def Nabla_ActivityAttr : EnumAttr<Nabla_Dialect, Nabla_Activity, "activity"> {
  let summary = "Activity of one argument or result of a differentiated function";
  let description = [{
    Enzyme's activity classes:

    | activity | argument | result |
    |---|---|---|
    | `const` | not differentiated; no shadow | primal returned, no seed/tangent |
    | `dup` | primal and shadow (same type) passed | forward mode: primal and tangent returned |
    | `dupnoneed` | like `dup`; the primal's final value is not needed | forward mode: tangent only |
    | `active` | reverse mode: scalar whose gradient is returned | reverse mode: primal returned, seed passed |
    | `activenoneed` | (results only) | reverse mode: seed passed, primal not returned |

    ```mlir
    nabla.autodiff @f(%x) {activity = [#nabla.activity<active>],
                           ret_activity = [#nabla.activity<activenoneed>]} ...
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Nabla_ModeReverse : I32EnumAttrCase<"Reverse", 0, "reverse">;
def Nabla_ModeForward : I32EnumAttrCase<"Forward", 1, "forward">;
def Nabla_DerivativeModeKind : I32EnumAttr<"DerivativeModeKind",
    "differentiation mode", [Nabla_ModeReverse, Nabla_ModeForward]> {
  let cppNamespace = "::nabla";
  let genSpecializedAttr = 0;
}
def Nabla_DerivativeModeAttr : EnumAttr<Nabla_Dialect, Nabla_DerivativeModeKind, "mode"> {
  let summary = "Reverse or forward mode";
  let description = [{
    ```mlir
    nabla.custom_derivative @f reverse @f_vjp {...}
    ```
  }];
}

def Nabla_ActivityArrayAttr : TypedArrayAttrBase<Nabla_ActivityAttr,
    "array of activities">;

#endif // NABLA_DIALECT_NABLA_IR_NABLAATTRS_TD
