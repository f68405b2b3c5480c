//===- VulkanContext.h - A Vulkan instance, device and queue ----*- C++ -*-===//
//
// What every user of Vulkan in the runtime shares: the loader
// (libvulkan.so.1) opened at run time with every entry point fetched through
// vkGetInstanceProcAddr / vkGetDeviceProcAddr, so nothing links against
// Vulkan; the choice of device (a real GPU before a CPU implementation such
// as Mesa's lavapipe); a device with every supported feature the generated
// SPIR-V may declare (float64, int64, float atomic add...) and one compute
// queue; host-visible storage buffers; and the opt-in validation layer
// ($NABLA_VULKAN_VALIDATION=1, VulkanValidation.h).
//
// Used by the Vulkan device (VulkanDevice.cpp, VulkanLaunch.cpp), which every
// tool, Python and libnabla_mgpu reach through nabla/Runtime/Device.h. Private
// to lib/Runtime/Vulkan.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_VULKANCONTEXT_H
#define NABLA_LIB_RUNTIME_VULKANCONTEXT_H

#include "VulkanValidation.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nabla::runtime {

/// Every Vulkan entry point the runtime uses, fetched at run time.

/// Every Vulkan entry point the back end uses, fetched at run time.
#define NABLA_VK_INSTANCE_FUNCTIONS(X)                                         \
  X(vkDestroyInstance)                                                         \
  X(vkEnumeratePhysicalDevices)                                                \
  X(vkGetPhysicalDeviceProperties)                                             \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                  \
  X(vkGetPhysicalDeviceMemoryProperties)                                       \
  X(vkGetPhysicalDeviceFeatures2)                                              \
  X(vkGetPhysicalDeviceProperties2)                                            \
  X(vkEnumerateDeviceExtensionProperties)                                      \
  X(vkCreateDevice)                                                            \
  X(vkGetDeviceProcAddr)

#define NABLA_VK_DEVICE_FUNCTIONS(X)                                           \
  X(vkDestroyDevice)                                                           \
  X(vkGetDeviceQueue)                                                          \
  X(vkCreateBuffer)                                                            \
  X(vkDestroyBuffer)                                                           \
  X(vkGetBufferMemoryRequirements)                                             \
  X(vkAllocateMemory)                                                          \
  X(vkFreeMemory)                                                              \
  X(vkBindBufferMemory)                                                        \
  X(vkMapMemory)                                                               \
  X(vkUnmapMemory)                                                             \
  X(vkCreateShaderModule)                                                      \
  X(vkDestroyShaderModule)                                                     \
  X(vkCreateDescriptorSetLayout)                                               \
  X(vkDestroyDescriptorSetLayout)                                              \
  X(vkCreatePipelineLayout)                                                    \
  X(vkDestroyPipelineLayout)                                                   \
  X(vkCreateComputePipelines)                                                  \
  X(vkDestroyPipeline)                                                         \
  X(vkCreateDescriptorPool)                                                    \
  X(vkDestroyDescriptorPool)                                                   \
  X(vkAllocateDescriptorSets)                                                  \
  X(vkUpdateDescriptorSets)                                                    \
  X(vkCreateCommandPool)                                                       \
  X(vkDestroyCommandPool)                                                      \
  X(vkAllocateCommandBuffers)                                                  \
  X(vkBeginCommandBuffer)                                                      \
  X(vkEndCommandBuffer)                                                        \
  X(vkCmdBindPipeline)                                                         \
  X(vkCmdBindDescriptorSets)                                                   \
  X(vkCmdDispatch)                                                             \
  X(vkCmdPipelineBarrier)                                                      \
  X(vkCmdResetQueryPool)                                                       \
  X(vkCmdWriteTimestamp)                                                       \
  X(vkCreateQueryPool)                                                         \
  X(vkDestroyQueryPool)                                                        \
  X(vkGetQueryPoolResults)                                                     \
  X(vkCreateFence)                                                             \
  X(vkDestroyFence)                                                            \
  X(vkResetFences)                                                             \
  X(vkQueueSubmit)                                                             \
  X(vkWaitForFences)                                                           \
  X(vkFreeCommandBuffers)                                                      \
  X(vkResetCommandPool)

/// Runs the registered clean-up actions in reverse order.
class Cleanup {
public:
  ~Cleanup() {
    for (auto it = actions.rbegin(); it != actions.rend(); ++it)
      (*it)();
  }
  void add(std::function<void()> action) {
    actions.push_back(std::move(action));
  }

private:
  std::vector<std::function<void()>> actions;
};

/// "<what> failed (VkResult <result>)".
std::string vkError(const char *what, VkResult result);

/// An open Vulkan device. Destroying it destroys the device and instance;
/// objects created on it must be gone by then.
class VulkanContext {
public:
  VulkanContext() = default;
  VulkanContext(const VulkanContext &) = delete;
  VulkanContext &operator=(const VulkanContext &) = delete;
  ~VulkanContext();

  /// Opens device `index` (-1: the preferred one); false with `error`.
  bool open(int index, std::string &error);

  /// A host-visible, host-coherent storage buffer of `size` bytes, bound to
  /// its own memory; false with `error`.
  bool createBuffer(VkDeviceSize size, VkBuffer &buffer, VkDeviceMemory &memory,
                    std::string &error);

  /// True when validation is off or reported nothing since the last check;
  /// otherwise false with `error` naming `during`.
  bool validated(const std::string &during, std::string &error) {
    return !validation || validation->check(during, error);
  }

  std::string deviceName() const { return properties.deviceName; }
  /// The bytes of the largest heap holding host-visible coherent memory, the
  /// memory buffers are allocated from (0 when there is none).
  uint64_t bufferHeapBytes() const;

  /// True if a kernel with `count` storage-buffer bindings fits the device's
  /// per-stage and per-set limits; otherwise false with `error` naming
  /// `kernel`. Drivers do not check it themselves (lavapipe crashes).
  bool checkStorageBufferBindings(const std::string &kernel, size_t count,
                                  std::string &error) const;

#define NABLA_DECLARE(name) PFN_##name name = nullptr;
  NABLA_VK_INSTANCE_FUNCTIONS(NABLA_DECLARE)
  NABLA_VK_DEVICE_FUNCTIONS(NABLA_DECLARE)
#undef NABLA_DECLARE

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties{};
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  /// Meaningful bits of the compute queue's timestamps; 0: no timestamps.
  uint32_t timestampValidBits = 0;
  unsigned subgroupLanes = 32;

private:
  void *library = nullptr;
  /// Null unless $NABLA_VULKAN_VALIDATION=1.
  std::unique_ptr<VulkanValidation> validation;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
};

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_VULKANCONTEXT_H
