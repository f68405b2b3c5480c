//===- PipelineFuzzer.h - Body of the pipeline fuzz targets -----*- C++ -*-===//
//
// The nabla-to-{nvvm,rocdl,spirv,metal} targets parse and verify the input,
// describe its kernels as nabla-compile's manifest does, then run the
// pipeline in process, verifying the IR after every pass. Options the input
// names anywhere, as a lit RUN line does (`abi=v1`, `chip=sm_90`,
// `reloc-strategy=defer`, `opt-level=0`, `workgroup-size=8,8`...), are
// passed on; each target keeps external programs out (no ptxas, no ld.lld)
// and writes no files.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TEST_FUZZ_PIPELINEFUZZER_H
#define NABLA_TEST_FUZZ_PIPELINEFUZZER_H

#include "FuzzSupport.h"

#include "nabla/Compile/Compile.h"
#include "nabla/Pipelines/Pipelines.h"

#include "llvm/ADT/StringExtras.h"

#include <cstddef>
#include <cstdint>

namespace nabla::fuzz {

/// Reads the options every pipeline takes from `text`.
template <typename Options>
void readCommonOptions(llvm::StringRef text, Options &options) {
  if (std::optional<std::string> abi = findOption(text, "abi"))
    options.abi = *abi;
  if (std::optional<std::string> strategy = findOption(text, "reloc-strategy"))
    options.relocStrategy = *strategy;
  if (std::optional<int64_t> level = findIntegerOption(text, "opt-level", 0, 3))
    options.optLevel = static_cast<int>(*level);
}

/// `workgroup-size=X[,Y,Z]` (or nabla-compile's `--block=`), 64 by default:
/// SPIR-V and Metal need a size for kernels without known_block_size.
inline llvm::SmallVector<int64_t, 3> readWorkgroupSize(llvm::StringRef text) {
  std::optional<std::string> value = findOption(text, "workgroup-size");
  if (!value)
    value = findOption(text, "block");
  llvm::SmallVector<int64_t, 3> size;
  if (value)
    for (llvm::StringRef item : llvm::split(*value, ',')) {
      int64_t extent;
      if (size.size() < 3 && !item.getAsInteger(10, extent))
        size.push_back(std::min<int64_t>(std::max<int64_t>(extent, 0), 4096));
    }
  if (size.empty())
    size.push_back(64);
  return size;
}

/// True when the input asks for float atomics emulation.
inline bool readEmulateFloatAtomics(llvm::StringRef text) {
  return text.contains("emulate-float-atomics") &&
         findOption(text, "emulate-float-atomics") != std::string("false");
}

/// Parses `data`, describes its kernels for `target`, builds the pipeline
/// with `build(pm, text)` and runs it.
template <typename Build>
int fuzzPipeline(const uint8_t *data, size_t size, CompileTarget target,
                 Build build) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  FuzzContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = context.parse(text);
  if (!module)
    return 0;
  CompileOptions compileOptions;
  compileOptions.target = target;
  compileOptions.workgroupSize = readWorkgroupSize(text);
  (void)describeKernels(*module, compileOptions);
  mlir::PassManager pm(&context.get());
  build(pm, text);
  (void)context.run(pm, *module);
  return 0;
}

} // namespace nabla::fuzz

#endif // NABLA_TEST_FUZZ_PIPELINEFUZZER_H
