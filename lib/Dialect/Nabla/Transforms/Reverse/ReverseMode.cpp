//===- ReverseMode.cpp - Reverse-mode derivative emission -----------------===//
//
// The driver of reverse mode: the forward sweep (ForwardSweep.cpp), then the
// reverse sweep (ReverseSweep.cpp) seeded with the results' cotangents, then
// the completion of ordered accumulation and the return of primal results and
// gradients. The emitter's state is VJPEmitter (ReverseEmitter.h).
//
//===----------------------------------------------------------------------===//

#include "ReverseMode.h"
#include "ReverseEmitter.h"

using namespace mlir;
using namespace nabla;

LogicalResult nabla::emitReverseDerivative(
    OpBuilder &builder, Block &body, func::ReturnOp ret, const Activities &act,
    ArrayRef<Activity> args, ArrayRef<Activity> rets,
    ArrayRef<Value> primalArgs, ArrayRef<Value> shadowArgs, ValueRange seeds,
    bool remarks, OrderedAccumulation &ordering,
    const LoopReversalOptions &loops, RuleFinder findRule,
    RecordShadows &records, Operation **forwardEnd) {
  VJPEmitter emitter(builder, act, remarks, std::move(findRule), records);
  emitter.entry = builder.getInsertionBlock();
  emitter.ordering = &ordering;
  emitter.loopOptions = loops;
  emitter.primalBody = &body;
  emitter.collectWrittenBuffers(body);
  emitter.collectUnneededBuffers(body, args);
  for (unsigned i : loops.attributions)
    emitter.attributionArgs.insert(body.getArgument(i));
  for (unsigned i : loops.uniformArgs)
    emitter.uniformArgs.insert(body.getArgument(i));
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    emitter.fwd.map(arg, primalArgs[i]);
    if (shadowArgs[i])
      emitter.shadows[arg] = shadowArgs[i];
  }
  if (failed(emitter.forwardBlock(body)))
    return failure();
  if (forwardEnd) {
    Block *block = builder.getInsertionBlock();
    *forwardEnd = block->empty() ? nullptr : &block->back();
  }

  AdjointScope scope;
  Location loc = ret.getLoc();
  unsigned seed = 0;
  for (auto [j, v] : llvm::enumerate(ret.getOperands()))
    if (isActiveValue(rets[j])) {
      Value s = seeds[seed++];
      if (act.isVaried(v))
        scope.add(builder, loc, v, s);
    }
  if (failed(emitter.reverseBlock(body, scope)))
    return failure();
  emitter.finishOrdered(loc);
  emitter.flushWorkgroupSites(loc);
  emitter.flushGridSites(loc);

  SmallVector<Value> results;
  for (auto [j, v] : llvm::enumerate(ret.getOperands()))
    if (rets[j] == Activity::Const || rets[j] == Activity::Active)
      results.push_back(emitter.fwd.lookup(v));
  for (auto [i, activity] : llvm::enumerate(args))
    if (activity == Activity::Active) {
      Value arg = body.getArgument(i);
      Value d = scope.get(arg);
      results.push_back(d ? d : createZero(builder, loc, arg.getType()));
    }
  func::ReturnOp::create(builder, loc, results);
  return success();
}
