//===- ManifestFuzzer.cpp - Fuzz target: the runtime's manifest reader ----===//
//
// nabla-fuzz-manifest: parses the input as manifest.json (parseManifest, what
// nabla-launch does with DIR/manifest.json). Malformed input must be a
// located error, never an exception or a crash; an accepted manifest must
// name each of its kernels and artifacts so that nabla-launch can find them.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Manifest.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace nabla::runtime;

[[noreturn]] static void finding(const std::string &what) {
  std::fprintf(stderr, "==nabla-fuzz== FINDING: %s\n", what.c_str());
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Manifest manifest;
  std::string error;
  if (!parseManifest(text, manifest, error)) {
    if (error.empty())
      finding("rejected a manifest without saying why");
    return 0;
  }
  for (const KernelInfo &kernel : manifest.kernels) {
    if (kernel.name.empty() || kernel.module.empty())
      finding("accepted a kernel without a name or module");
    const KernelInfo *found = manifest.findKernel(kernel.name);
    if (!found || found->name != kernel.name)
      finding("findKernel misses kernel '" + kernel.name + "'");
  }
  for (const auto &[module, files] : manifest.modules)
    for (const std::string &file : files)
      if (file.empty() || file.find('/') != std::string::npos)
        finding("accepted the artifact path '" + file +
                "' outside the manifest's directory");
  return 0;
}
