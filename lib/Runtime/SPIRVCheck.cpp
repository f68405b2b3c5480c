//===- SPIRVCheck.cpp - Validate SPIR-V before a driver sees it -----------===//

#include "SPIRVCheck.h"

#include "spirv-tools/libspirv.hpp"

#include <cstring>

bool nabla::runtime::validateSPIRV(const std::vector<uint8_t> &bytes,
                                   std::string &error) {
  if (bytes.empty() || bytes.size() % 4 != 0) {
    error = "SPIR-V module of " + std::to_string(bytes.size()) +
            " bytes is not a whole number of 32-bit words";
    return false;
  }
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char *,
                               const spv_position_t &, const char *message) {
    if (messages.empty())
      messages = message;
  });
  if (tools.Validate(words.data(), words.size(), spvtools::ValidatorOptions()))
    return true;
  error = "invalid SPIR-V module: " + messages;
  return false;
}
