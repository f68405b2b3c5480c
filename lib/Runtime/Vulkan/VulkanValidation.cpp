//===- VulkanValidation.cpp - Opt-in Khronos validation for Vulkan --------===//
//
// Enables VK_LAYER_KHRONOS_validation with synchronization validation (core
// checks on, best practices and GPU-assisted validation off, as by default)
// and reports every warning and error through a VK_EXT_debug_utils messenger.
// The messenger is also chained into VkInstanceCreateInfo so that messages of
// vkCreateInstance and vkDestroyInstance are caught too.
//
//===----------------------------------------------------------------------===//

#include "VulkanValidation.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace nabla::runtime;

static constexpr const char *kLayerName = "VK_LAYER_KHRONOS_validation";

/// Set when messages arrived after the last check (device teardown); the
/// exit handler then turns the process's exit status into 1.
static std::atomic<bool> uncheckedMessages{false};

static void exitOnUncheckedMessages() {
  if (!uncheckedMessages)
    return;
  std::fprintf(stderr,
               "%smessages during Vulkan teardown (see above); exiting with "
               "status 1\n",
               kValidationPrefix);
  std::fflush(nullptr);
  std::_Exit(1);
}

/// Whether the layer named `layer` offers instance extension `name`.
static bool layerHasExtension(PFN_vkEnumerateInstanceExtensionProperties list,
                              const char *layer, const char *name) {
  uint32_t count = 0;
  list(layer, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  list(layer, &count, extensions.data());
  for (const VkExtensionProperties &e : extensions)
    if (std::strcmp(e.extensionName, name) == 0)
      return true;
  return false;
}

bool VulkanValidation::create(PFN_vkGetInstanceProcAddr getInstanceProcAddr,
                              std::unique_ptr<VulkanValidation> &validation,
                              std::string &error) {
  const char *env = std::getenv("NABLA_VULKAN_VALIDATION");
  std::string value = env ? env : "";
  if (value.empty() || value == "0")
    return true;
  if (value != "1") {
    error = "NABLA_VULKAN_VALIDATION must be 1 (validate) or 0/unset (do not "
            "validate), not '" +
            value + "'";
    return false;
  }

  auto enumerateLayers =
      reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(
          getInstanceProcAddr(nullptr, "vkEnumerateInstanceLayerProperties"));
  auto enumerateExtensions =
      reinterpret_cast<PFN_vkEnumerateInstanceExtensionProperties>(
          getInstanceProcAddr(nullptr,
                              "vkEnumerateInstanceExtensionProperties"));
  if (!enumerateLayers || !enumerateExtensions) {
    error = "NABLA_VULKAN_VALIDATION=1, but the Vulkan loader cannot list "
            "layers";
    return false;
  }
  uint32_t count = 0;
  enumerateLayers(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  enumerateLayers(&count, layers.data());
  bool found = false;
  for (const VkLayerProperties &layer : layers)
    found |= std::strcmp(layer.layerName, kLayerName) == 0;
  if (!found) {
    error = std::string("NABLA_VULKAN_VALIDATION=1, but the Vulkan loader "
                        "finds no ") +
            kLayerName +
            " (install vulkan-validationlayers, or unset "
            "NABLA_VULKAN_VALIDATION to run without validation)";
    return false;
  }
  for (const char *name : {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                           VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME})
    if (!layerHasExtension(enumerateExtensions, kLayerName, name)) {
      error = std::string("NABLA_VULKAN_VALIDATION=1, but ") + kLayerName +
              " lacks " + name +
              " (synchronization validation and message reports need it)";
      return false;
    }

  static std::once_flag registered;
  std::call_once(registered, [] { std::atexit(exitOnUncheckedMessages); });

  validation.reset(new VulkanValidation(getInstanceProcAddr));
  validation->extensions = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                            VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  validation->features.enabledValidationFeatureCount = 1;
  validation->features.pEnabledValidationFeatures = validation->enabledFeatures;
  VkDebugUtilsMessengerCreateInfoEXT &messenger = validation->messengerInfo;
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = onMessage;
  messenger.pUserData = validation.get();
  validation->features.pNext = &validation->messengerInfo;
  return true;
}

void VulkanValidation::addToInstance(VkInstanceCreateInfo &info) {
  static const char *const layers[] = {kLayerName};
  info.enabledLayerCount = 1;
  info.ppEnabledLayerNames = layers;
  info.enabledExtensionCount = extensions.size();
  info.ppEnabledExtensionNames = extensions.data();
  messengerInfo.pNext = info.pNext;
  info.pNext = &features;
}

bool VulkanValidation::attach(VkInstance created, std::string &error) {
  instance = created;
  auto createMessenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      getInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  destroyMessenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      getInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  if (!createMessenger || !destroyMessenger) {
    error = "NABLA_VULKAN_VALIDATION=1, but the instance lacks "
            "vkCreateDebugUtilsMessengerEXT";
    return false;
  }
  VkDebugUtilsMessengerCreateInfoEXT info = messengerInfo;
  info.pNext = nullptr;
  if (VkResult r = createMessenger(instance, &info, nullptr, &messenger)) {
    error = "vkCreateDebugUtilsMessengerEXT failed (VkResult " +
            std::to_string(r) + ")";
    return false;
  }
  return true;
}

void VulkanValidation::detach() {
  if (messenger)
    destroyMessenger(instance, messenger, nullptr);
  messenger = VK_NULL_HANDLE;
}

bool VulkanValidation::check(const std::string &during, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  size_t fresh = messageIds.size() - checked;
  if (fresh == 0)
    return true;
  error = "Vulkan validation reported " + std::to_string(fresh) +
          (fresh == 1 ? " message" : " messages") + " during " + during +
          ", the first " + messageIds[checked] +
          " (every message is on stderr, prefixed '" + kValidationPrefix + "')";
  checked = messageIds.size();
  return false;
}

void VulkanValidation::finish() {
  std::lock_guard<std::mutex> lock(mutex);
  if (messageIds.size() > checked)
    uncheckedMessages = true;
  checked = messageIds.size();
}

VKAPI_ATTR VkBool32 VKAPI_CALL VulkanValidation::onMessage(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity,
    VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *self) {
  std::string id = data->pMessageIdName && *data->pMessageIdName
                       ? data->pMessageIdName
                       : "message " + std::to_string(data->messageIdNumber);
  std::fprintf(
      stderr, "%s%s%s [%s]: %s\n", kValidationPrefix,
      severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error"
                                                                : "warning",
      types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT ? " (performance)"
                                                              : "",
      id.c_str(), data->pMessage ? data->pMessage : "(no text)");
  std::fflush(stderr);
  auto *validation = static_cast<VulkanValidation *>(self);
  std::lock_guard<std::mutex> lock(validation->mutex);
  validation->messageIds.push_back(std::move(id));
  // VK_FALSE: the call that caused the message proceeds; the runtime fails
  // at its next check instead.
  return VK_FALSE;
}
