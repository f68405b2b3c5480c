//===- VulkanContext.cpp - A Vulkan instance, device and queue ------------===//
//
// Opening the loader, the instance (with the validation layer when asked
// for), the preferred device with every supported feature enabled and its
// compute queue; host-visible storage buffers.
//
//===----------------------------------------------------------------------===//

#include "VulkanContext.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>

using namespace nabla::runtime;

std::string nabla::runtime::vkError(const char *what, VkResult result) {
  return std::string(what) + " failed (VkResult " + std::to_string(result) +
         ")";
}

VulkanContext::~VulkanContext() {
  if (device)
    vkDestroyDevice(device, nullptr);
  if (validation)
    validation->detach();
  if (instance)
    vkDestroyInstance(instance, nullptr);
  // Messages of the teardown (leaked objects) fail the process instead.
  if (validation)
    validation->finish();
  if (library)
    dlclose(library);
}

bool VulkanContext::open(int index, std::string &error) {
  library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    error = "no Vulkan loader (libvulkan.so.1 not found; install "
            "libvulkan1 and a driver such as mesa-vulkan-drivers)";
    return false;
  }
  vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(
      dlsym(library, "vkGetInstanceProcAddr"));
  auto vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(
      vkGetInstanceProcAddr ? vkGetInstanceProcAddr(nullptr, "vkCreateInstance")
                            : nullptr);
  if (!vkCreateInstance) {
    error = "the Vulkan loader lacks vkCreateInstance";
    return false;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "nabla";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo instanceInfo{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instanceInfo.pApplicationInfo = &app;
  if (!VulkanValidation::create(vkGetInstanceProcAddr, validation, error))
    return false;
  if (validation)
    validation->addToInstance(instanceInfo);
  if (VkResult r = vkCreateInstance(&instanceInfo, nullptr, &instance)) {
    error = vkError("vkCreateInstance", r) + ": no Vulkan driver available";
    return false;
  }
  if (validation && !validation->attach(instance, error))
    return false;
#define NABLA_LOAD_INSTANCE(name)                                              \
  name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name)); \
  if (!name) {                                                                 \
    error = "the Vulkan loader lacks " #name;                                  \
    return false;                                                              \
  }
  NABLA_VK_INSTANCE_FUNCTIONS(NABLA_LOAD_INSTANCE)
#undef NABLA_LOAD_INSTANCE

  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance, &count, devices.data());
  if (devices.empty()) {
    error = "no Vulkan device found";
    return false;
  }
  if (index >= static_cast<int>(devices.size())) {
    error = "Vulkan device index " + std::to_string(index) + " out of range (" +
            std::to_string(devices.size()) + " devices)";
    return false;
  }
  if (index >= 0) {
    physical = devices[index];
  } else {
    // A real GPU first, then anything (lavapipe is a CPU device).
    physical = devices.front();
    for (VkPhysicalDevice candidate : devices) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(candidate, &p);
      if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
          p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) {
        physical = candidate;
        break;
      }
    }
  }
  vkGetPhysicalDeviceProperties(physical, &properties);
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 properties2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  properties2.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(physical, &properties2);
  subgroupLanes = subgroup.subgroupSize;

  uint32_t familyCount = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &familyCount, nullptr);
  std::vector<VkQueueFamilyProperties> families(familyCount);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &familyCount,
                                           families.data());
  bool found = false;
  for (uint32_t i = 0; i < familyCount && !found; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      queueFamily = i;
      timestampValidBits = families[i].timestampValidBits;
      found = true;
    }
  if (!found) {
    error = std::string("Vulkan device '") + properties.deviceName +
            "' has no compute queue";
    return false;
  }

  // Enable every supported feature the generated SPIR-V may declare.
  uint32_t extensionCount = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &extensionCount,
                                       nullptr);
  std::vector<VkExtensionProperties> extensions(extensionCount);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &extensionCount,
                                       extensions.data());
  bool hasAtomicFloat = false;
  for (const VkExtensionProperties &e : extensions)
    hasAtomicFloat |=
        std::strcmp(e.extensionName,
                    VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME) == 0;

  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomicFloat{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceVulkan12Features vulkan12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features vulkan11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  bool is12 = properties.apiVersion >= VK_API_VERSION_1_2;
  void **next = &features.pNext;
  if (is12) {
    *next = &vulkan11;
    next = &vulkan11.pNext;
    *next = &vulkan12;
    next = &vulkan12.pNext;
  }
  if (hasAtomicFloat)
    *next = &atomicFloat;
  vkGetPhysicalDeviceFeatures2(physical, &features);

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queueInfo{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queueInfo.queueFamilyIndex = queueFamily;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;
  const char *enabled[] = {VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME};
  VkDeviceCreateInfo deviceInfo{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  deviceInfo.pNext = &features;
  deviceInfo.queueCreateInfoCount = 1;
  deviceInfo.pQueueCreateInfos = &queueInfo;
  deviceInfo.enabledExtensionCount = hasAtomicFloat ? 1 : 0;
  deviceInfo.ppEnabledExtensionNames = enabled;
  if (VkResult r = vkCreateDevice(physical, &deviceInfo, nullptr, &device)) {
    error = vkError("vkCreateDevice", r);
    return false;
  }
#define NABLA_LOAD_DEVICE(name)                                                \
  name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name));     \
  if (!name) {                                                                 \
    error = "the Vulkan driver lacks " #name;                                  \
    return false;                                                              \
  }
  NABLA_VK_DEVICE_FUNCTIONS(NABLA_LOAD_DEVICE)
#undef NABLA_LOAD_DEVICE
  vkGetDeviceQueue(device, queueFamily, 0, &queue);
  return validated("device creation", error);
}

bool VulkanContext::checkStorageBufferBindings(const std::string &kernel,
                                               size_t count,
                                               std::string &error) const {
  uint32_t allowed =
      std::min(properties.limits.maxPerStageDescriptorStorageBuffers,
               properties.limits.maxDescriptorSetStorageBuffers);
  if (count <= allowed)
    return true;
  error = "kernel '" + kernel + "' needs " + std::to_string(count) +
          " storage-buffer bindings (one per buffer or scalar parameter and "
          "relocation record); Vulkan device '" +
          deviceName() + "' allows at most " + std::to_string(allowed) +
          " per kernel: pass fewer parameters (e.g. pack scalars into one "
          "buffer)";
  return false;
}

uint64_t VulkanContext::bufferHeapBytes() const {
  VkPhysicalDeviceMemoryProperties memoryProperties;
  vkGetPhysicalDeviceMemoryProperties(physical, &memoryProperties);
  const VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < memoryProperties.memoryTypeCount; ++i) {
    const VkMemoryType &type = memoryProperties.memoryTypes[i];
    if ((type.propertyFlags & wanted) == wanted &&
        type.heapIndex < memoryProperties.memoryHeapCount)
      bytes = std::max<uint64_t>(
          bytes, memoryProperties.memoryHeaps[type.heapIndex].size);
  }
  return bytes;
}


bool VulkanContext::createBuffer(VkDeviceSize size, VkBuffer &buffer,
                                 VkDeviceMemory &memory, std::string &error) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (VkResult r = vkCreateBuffer(device, &info, nullptr, &buffer)) {
    error = vkError("vkCreateBuffer", r);
    return false;
  }
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(device, buffer, &requirements);
  VkPhysicalDeviceMemoryProperties memoryProperties;
  vkGetPhysicalDeviceMemoryProperties(physical, &memoryProperties);
  const VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < memoryProperties.memoryTypeCount; ++i)
    if ((requirements.memoryTypeBits & (1u << i)) &&
        (memoryProperties.memoryTypes[i].propertyFlags & wanted) == wanted) {
      type = i;
      break;
    }
  if (type == UINT32_MAX) {
    error = "no host-visible coherent memory for storage buffers";
    return false;
  }
  VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  allocate.allocationSize = requirements.size;
  allocate.memoryTypeIndex = type;
  if (VkResult r = vkAllocateMemory(device, &allocate, nullptr, &memory)) {
    error = vkError("vkAllocateMemory", r) + " for " + std::to_string(size) +
            " bytes";
    return false;
  }
  if (VkResult r = vkBindBufferMemory(device, buffer, memory, 0)) {
    error = vkError("vkBindBufferMemory", r);
    return false;
  }
  return true;
}
