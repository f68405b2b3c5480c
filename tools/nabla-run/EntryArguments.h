//===- EntryArguments.h - Arguments of a host program's entry ---*- C++ -*-===//
//
// `nabla-run FILE.mlir --entry=NAME --arg=SPEC... [--out=DIR]`: the entry's
// parameters, in order, from the same specs as a kernel launch: a buffer
// (ranked memref, identity layout) from `PATH.npy`, copied into device memory
// the wrapper library allocates (as gpu.alloc would) and copied back after
// the run into DIR/arg<k>.npy; a scalar from `f32:V`, `f64:V`, `i32:V`,
// `i64:V` or `index:V`. The lowered entry takes each memref as its
// descriptor's fields, which is how the arguments are packed.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TOOLS_NABLA_RUN_ENTRYARGUMENTS_H
#define NABLA_TOOLS_NABLA_RUN_ENTRYARGUMENTS_H

#include "nabla/Runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <string>
#include <vector>

namespace nabla {

/// The device memory functions of libnabla_mgpu, looked up once it is
/// loaded.
struct WrapperMemory {
  void *(*alloc)(uint64_t, void *, bool) = nullptr;
  void (*free)(void *, void *) = nullptr;
  void (*copy)(void *, void *, size_t, void *) = nullptr;
  void *(*streamCreate)() = nullptr;
  void (*streamSynchronize)(void *) = nullptr;
  void (*streamDestroy)(void *) = nullptr;
};

class EntryArguments {
public:
  /// Checks `specs` against `entry`'s parameters and reads the buffers;
  /// false with `error` set.
  bool parse(mlir::func::FuncOp entry, const std::vector<std::string> &specs,
             std::string &error);
  /// The lowered entry's parameter count (descriptors expanded).
  unsigned loweredCount() const;
  /// Copies the buffers to device memory and returns one pointer per lowered
  /// parameter, for ExecutionEngine::invokePacked.
  std::vector<void *> pack(const WrapperMemory &memory);
  /// Copies the buffers back, writes DIR/arg<k>.npy (when `directory` is not
  /// empty) and frees the device memory; false with `error` set.
  bool finish(const WrapperMemory &memory, const std::string &directory,
              std::string &error);

private:
  struct Argument {
    bool isBuffer = false;
    runtime::NpyArray array;
    // A memref descriptor's fields, or the scalar's bytes in `scalar`.
    void *allocated = nullptr, *aligned = nullptr;
    int64_t offset = 0;
    std::vector<int64_t> sizes, strides;
    int64_t scalar = 0;
  };
  std::vector<std::unique_ptr<Argument>> arguments;
  void *stream = nullptr;
};

} // namespace nabla

#endif // NABLA_TOOLS_NABLA_RUN_ENTRYARGUMENTS_H
