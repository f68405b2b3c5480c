//===- SPIRVCheck.h - Validate SPIR-V before a driver sees it ---*- C++ -*-===//
//
// Vulkan drivers assume valid SPIR-V: lavapipe crashes on corrupted words. A
// .spv read from disk is therefore validated (SPIRV-Tools, Vulkan 1.1 rules,
// the same as nabla-compile's) before the runtime creates a shader module.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_SPIRVCHECK_H
#define NABLA_LIB_RUNTIME_SPIRVCHECK_H

#include <cstdint>
#include <string>
#include <vector>

namespace nabla::runtime {

/// True if `bytes` is a whole number of words of valid SPIR-V for Vulkan 1.1;
/// otherwise sets `error` to the validator's first message.
bool validateSPIRV(const std::vector<uint8_t> &bytes, std::string &error);

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_SPIRVCHECK_H
