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

#endif // NABLA_DIALECT_NABLA_IR_NABLAINTERFACES_TD
