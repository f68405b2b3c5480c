//===- VulkanValidation.h - Opt-in Khronos validation -----------*- C++ -*-===//
//
// With $NABLA_VULKAN_VALIDATION=1 the Vulkan back end runs under the Khronos
// validation layer with synchronization validation, and a VK_EXT_debug_utils
// messenger collects every warning and error. Each message is printed on
// stderr as it arrives, prefixed `nabla: vulkan validation:`, and fails the
// step that caused it (device open, kernel launch); messages during device
// teardown make the process exit with status 1. A request for validation when
// the layer is not installed is an error, never a silent run without it.
//
// Private to lib/Runtime/Vulkan: only the Vulkan device uses it.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_VULKANVALIDATION_H
#define NABLA_LIB_RUNTIME_VULKANVALIDATION_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nabla::runtime {

/// The prefix of every validation message on stderr.
inline constexpr const char *kValidationPrefix = "nabla: vulkan validation: ";

/// One Vulkan instance's validation: the layer and extensions to enable, the
/// create-info chain, the messenger and the messages it collected. Lives at a
/// stable address (the messenger's user data) until the instance is gone.
class VulkanValidation {
public:
  /// Reads $NABLA_VULKAN_VALIDATION: `validation` stays null when it is off;
  /// false with `error` on a malformed value or a missing layer.
  static bool create(PFN_vkGetInstanceProcAddr getInstanceProcAddr,
                     std::unique_ptr<VulkanValidation> &validation,
                     std::string &error);

  /// Adds the layer, its extensions, the validation features and the
  /// messenger (for vkCreateInstance/vkDestroyInstance) to `info`.
  void addToInstance(VkInstanceCreateInfo &info);

  /// After vkCreateInstance: installs the instance's messenger.
  bool attach(VkInstance instance, std::string &error);
  /// Before vkDestroyInstance: removes it.
  void detach();

  /// Fails with `error` naming `during` if messages arrived since the last
  /// check; every message was already printed on stderr.
  bool check(const std::string &during, std::string &error);
  /// After vkDestroyInstance: unchecked messages mark the process as failed
  /// (it exits with status 1).
  void finish();

private:
  explicit VulkanValidation(PFN_vkGetInstanceProcAddr getInstanceProcAddr)
      : getInstanceProcAddr(getInstanceProcAddr) {}

  static VKAPI_ATTR VkBool32 VKAPI_CALL
  onMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
            VkDebugUtilsMessageTypeFlagsEXT types,
            const VkDebugUtilsMessengerCallbackDataEXT *data, void *self);

  PFN_vkGetInstanceProcAddr getInstanceProcAddr;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  PFN_vkDestroyDebugUtilsMessengerEXT destroyMessenger = nullptr;

  std::vector<const char *> extensions;
  VkValidationFeatureEnableEXT enabledFeatures[1] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  VkDebugUtilsMessengerCreateInfoEXT messengerInfo{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};

  std::mutex mutex;
  /// Per message, its ID name (a VUID, or the layer's name for it).
  std::vector<std::string> messageIds;
  size_t checked = 0;
};

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_VULKANVALIDATION_H
