//===- SPIRVBinaryFuzzer.cpp - Fuzz target: checks of SPIR-V objects ------===//
//
// nabla-fuzz-spirv-binary: the checks a SPIR-V object passes before a driver
// sees it. The input is a .spv file, checked as the Vulkan runtime checks one
// read from disk (validateSPIRV: whole words, SPIRV-Tools validation for
// Vulkan 1.1); a module the check accepts is cross-compiled to MSL for every
// GLCompute entry point, as the Metal pipeline does with SPIRV-Cross. Neither
// library is instrumented, so coverage hardly steers this target: its corpus
// is the pipelines' own objects (test/Fuzz/seeds/spirv-binary).
//
//===----------------------------------------------------------------------===//

#include "SPIRVCheck.h"

#include "spirv_cross/spirv_cross_c.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  std::string error;
  if (!nabla::runtime::validateSPIRV(bytes, error))
    return 0;
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), data, size);

  spvc_context context = nullptr;
  if (spvc_context_create(&context) != SPVC_SUCCESS)
    return 0;
  spvc_context_set_error_callback(
      context, [](void *, const char *) {}, nullptr);
  spvc_parsed_ir ir = nullptr;
  spvc_compiler compiler = nullptr;
  const spvc_entry_point *entries = nullptr;
  size_t entryCount = 0;
  if (spvc_context_parse_spirv(context, words.data(), words.size(), &ir) ==
          SPVC_SUCCESS &&
      spvc_context_create_compiler(context, SPVC_BACKEND_MSL, ir,
                                   SPVC_CAPTURE_MODE_COPY,
                                   &compiler) == SPVC_SUCCESS &&
      spvc_compiler_get_entry_points(compiler, &entries, &entryCount) ==
          SPVC_SUCCESS) {
    std::vector<std::string> names;
    for (size_t i = 0; i < entryCount; ++i)
      if (entries[i].execution_model == SpvExecutionModelGLCompute)
        names.push_back(entries[i].name);
    for (const std::string &name : names) {
      spvc_compiler entryCompiler = nullptr;
      spvc_compiler_options options = nullptr;
      const char *source = nullptr;
      (void)(spvc_context_create_compiler(context, SPVC_BACKEND_MSL, ir,
                                          SPVC_CAPTURE_MODE_COPY,
                                          &entryCompiler) == SPVC_SUCCESS &&
             spvc_compiler_set_entry_point(entryCompiler, name.c_str(),
                                           SpvExecutionModelGLCompute) ==
                 SPVC_SUCCESS &&
             spvc_compiler_create_compiler_options(entryCompiler, &options) ==
                 SPVC_SUCCESS &&
             spvc_compiler_options_set_uint(
                 options, SPVC_COMPILER_OPTION_MSL_VERSION,
                 SPVC_MAKE_MSL_VERSION(3, 0, 0)) == SPVC_SUCCESS &&
             spvc_compiler_install_compiler_options(entryCompiler, options) ==
                 SPVC_SUCCESS &&
             spvc_compiler_compile(entryCompiler, &source) == SPVC_SUCCESS);
    }
  }
  spvc_context_destroy(context);
  return 0;
}
