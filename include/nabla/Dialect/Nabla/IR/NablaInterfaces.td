//===- NablaInterfaces.td - Interfaces of the nabla dialect --*- tablegen -*-===//
//
// `DifferentiableOpInterface`: how an op tells nabla-differentiate its local
// derivative. Nabla attaches it to the arith and math ops as external models;
// a frontend attaches it to its own dialect's ops the same way, without
// touching Nabla.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_DIALECT_NABLA_IR_NABLAINTERFACES_TD
#define NABLA_DIALECT_NABLA_IR_NABLAINTERFACES_TD

include "mlir/IR/OpBase.td"

def Nabla_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::nabla";
  let description = [{
    An op with one floating-point result whose derivative is given by its
    partial derivatives with respect to its operands: forward mode multiplies
    them by the operand tangents and sums, reverse mode multiplies the result's
    adjoint by each of them. Attach it as an external model to a dialect's
    ops (`MyOp::attachInterface<MyModel>(*context)` in a registry extension)
    to make them differentiable by `nabla-differentiate`.

    ```c++
    struct CubeRule : nabla::DifferentiableOpInterface::ExternalModel<CubeRule, CubeOp> {
      FailureOr<SmallVector<Value>> emitPartials(Operation *op, OpBuilder &b) const {
        Value x = op->getOperand(0);   // d(x^3)/dx = 3 x^2
        Value three = arith::ConstantOp::create(b, op->getLoc(), b.getFloatAttr(x.getType(), 3.0));
        Value x2 = arith::MulFOp::create(b, op->getLoc(), x, x);
        return SmallVector<Value>{arith::MulFOp::create(b, op->getLoc(), three, x2)};
      }
    };
    ```
  }];
  let methods = [
    InterfaceMethod<[{
        Emits at `builder` the partial derivative of the op's result with
        respect to each operand, in operand order (a null value for an operand
        that is not differentiable, such as an integer exponent or a
        condition). The op's operands and result are available at the
        insertion point. Fails if the op cannot be differentiated here.
      }],
      "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>", "emitPartials",
      (ins "::mlir::OpBuilder &":$builder)>,
    InterfaceMethod<[{
        True if the derivative is zero wherever it exists (floor, round):
        the result is then never differentiated and no partials are emitted.
      }],
      "bool", "hasZeroDerivative", (ins), [{}], [{ return false; }]>,
  ];
}


def Nabla_ForwardModeOpInterface : OpInterface<"ForwardModeOpInterface"> {
  let cppNamespace = "::nabla";
  let description = [{
    How forward mode (`nabla.fwddiff`) differentiates an op that is more than
    a function of its float operands: memory ops (their tangents live in the
    shadows of their memrefs), ops with regions (their tangents flow through
    the regions), collectives, calls. The rule receives the emitter
    (`nabla/Dialect/Nabla/IR/DerivativeEmitters.h`): it clones the op as the
    primal (or builds the primal itself) and records the tangents of its
    results. Ops with one float result computed from their operands need
    only `DifferentiableOpInterface`.

    Nabla's own scf, memref, gpu, func and reloc ops implement it as external
    models (lib/Dialect/Nabla/Transforms/Implementations/); a frontend's
    dialect attaches its own the same way, without touching Nabla
    (examples/differentiable-dialect/).
  }];
  let methods = [
    InterfaceMethod<[{
        Emits the op's primal and the tangents of its results at the
        emitter's insertion point; a located error when it cannot.
      }],
      "::mlir::LogicalResult", "emitForwardMode",
      (ins "::nabla::ForwardEmitter &":$emitter)>,
  ];
}

def Nabla_ReverseModeOpInterface : OpInterface<"ReverseModeOpInterface"> {
  let cppNamespace = "::nabla";
  let description = [{
    How reverse mode (`nabla.autodiff`, `nabla.kernel_adjoint`)
    differentiates an op that is more than a function of its float operands
    (see ForwardModeOpInterface). A derivative runs the primal again (the
    forward sweep, which keeps what the reverse needs), then visits the ops
    in reverse order (the reverse sweep), turning the adjoints of each op's
    results into contributions to its operands' adjoints and to the shadows
    of the memory it read.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits the op's primal in the forward sweep (the default clones it)
        and whatever the reverse sweep needs kept: shadows of the memory it
        creates, values its regions define.
      }],
      "::mlir::LogicalResult", "emitForwardSweep",
      (ins "::nabla::ReverseEmitter &":$emitter), [{}], [{
        emitter.clonePrimal($_op);
        return ::mlir::success();
      }]>,
    InterfaceMethod<[{
        Emits the op's adjoint at the emitter's insertion point, in the
        reverse sweep: reads the adjoints of its results and adds the
        contributions to its operands' and to shadows.
      }],
      "::mlir::LogicalResult", "emitReverseSweep",
      (ins "::nabla::ReverseEmitter &":$emitter)>,
  ];
}

#endif // NABLA_DIALECT_NABLA_IR_NABLAINTERFACES_TD
