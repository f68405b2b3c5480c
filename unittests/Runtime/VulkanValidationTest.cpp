//===- VulkanValidationTest.cpp - Opt-in Vulkan validation tests ----------===//
//
// Proves that $NABLA_VULKAN_VALIDATION=1 really validates: deliberately wrong
// Vulkan calls (an empty buffer, two unsynchronized writes of one buffer)
// make VulkanValidation::check fail with the layer's message ID, so core and
// synchronization validation are both on; correct calls report nothing; a
// leak reported at teardown makes the process exit with status 1; and the
// switch is off by default, strict about its value and an error when the
// layer is missing. Skipped where there is no Vulkan loader or device.
//
//===----------------------------------------------------------------------===//

#include "VulkanValidation.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

using namespace nabla::runtime;

namespace {

/// Opens the loader; null (the test is skipped) where there is none.
PFN_vkGetInstanceProcAddr openLoader() {
  static void *library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return nullptr;
  return reinterpret_cast<PFN_vkGetInstanceProcAddr>(
      dlsym(library, "vkGetInstanceProcAddr"));
}

/// A validated instance and a device with one queue, as the runtime makes
/// them; every message must be checked before the fixture tears down.
class VulkanValidationTest : public ::testing::Test {
protected:
  void SetUp() override {
    getProcAddr = openLoader();
    if (!getProcAddr)
      GTEST_SKIP() << "no Vulkan loader (libvulkan.so.1)";
    setenv("NABLA_VULKAN_VALIDATION", "1", 1);
    std::string error;
    ASSERT_TRUE(VulkanValidation::create(getProcAddr, validation, error))
        << error;
    ASSERT_TRUE(validation);

    auto createInstance = load<PFN_vkCreateInstance>("vkCreateInstance");
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo instanceInfo{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    instanceInfo.pApplicationInfo = &app;
    validation->addToInstance(instanceInfo);
    ASSERT_EQ(createInstance(&instanceInfo, nullptr, &instance), VK_SUCCESS);
    ASSERT_TRUE(validation->attach(instance, error)) << error;

    auto enumerate =
        load<PFN_vkEnumeratePhysicalDevices>("vkEnumeratePhysicalDevices");
    uint32_t count = 1;
    VkResult listed = enumerate(instance, &count, &physical);
    if ((listed != VK_SUCCESS && listed != VK_INCOMPLETE) || count == 0)
      GTEST_SKIP() << "no Vulkan device";
    auto families = load<PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
        "vkGetPhysicalDeviceQueueFamilyProperties");
    uint32_t familyCount = 0;
    families(physical, &familyCount, nullptr);
    std::vector<VkQueueFamilyProperties> properties(familyCount);
    families(physical, &familyCount, properties.data());
    while (queueFamily < familyCount &&
           !(properties[queueFamily].queueFlags & VK_QUEUE_COMPUTE_BIT))
      ++queueFamily;
    ASSERT_LT(queueFamily, familyCount);
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queueInfo{
        VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queueInfo.queueFamilyIndex = queueFamily;
    queueInfo.queueCount = 1;
    queueInfo.pQueuePriorities = &priority;
    VkDeviceCreateInfo deviceInfo{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    deviceInfo.queueCreateInfoCount = 1;
    deviceInfo.pQueueCreateInfos = &queueInfo;
    ASSERT_EQ(load<PFN_vkCreateDevice>("vkCreateDevice")(physical, &deviceInfo,
                                                         nullptr, &device),
              VK_SUCCESS);
    ASSERT_TRUE(validation->check("set-up", error)) << error;
  }

  void TearDown() override {
    release();
    if (validation) {
      std::string error;
      EXPECT_TRUE(validation->check("teardown", error)) << error;
      validation->finish();
    }
  }

  /// Destroys the device and the instance, as the runtime's device does.
  void release() {
    if (device)
      load<PFN_vkDestroyDevice>("vkDestroyDevice")(device, nullptr);
    device = VK_NULL_HANDLE;
    if (validation)
      validation->detach();
    if (instance)
      load<PFN_vkDestroyInstance>("vkDestroyInstance")(instance, nullptr);
    instance = VK_NULL_HANDLE;
  }

  template <typename Function> Function load(const char *name) {
    auto function = reinterpret_cast<Function>(getProcAddr(instance, name));
    EXPECT_TRUE(function) << name;
    return function;
  }

  /// A 256-byte buffer the transfer commands may fill, bound to memory.
  VkBuffer createFillableBuffer() {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = 256;
    info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer buffer = VK_NULL_HANDLE;
    EXPECT_EQ(load<PFN_vkCreateBuffer>("vkCreateBuffer")(device, &info, nullptr,
                                                         &buffer),
              VK_SUCCESS);
    VkMemoryRequirements requirements;
    load<PFN_vkGetBufferMemoryRequirements>("vkGetBufferMemoryRequirements")(
        device, buffer, &requirements);
    uint32_t type = 0;
    while (!(requirements.memoryTypeBits & (1u << type)))
      ++type;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = type;
    EXPECT_EQ(load<PFN_vkAllocateMemory>("vkAllocateMemory")(device, &allocate,
                                                             nullptr, &memory),
              VK_SUCCESS);
    EXPECT_EQ(load<PFN_vkBindBufferMemory>("vkBindBufferMemory")(device, buffer,
                                                                 memory, 0),
              VK_SUCCESS);
    return buffer;
  }

  /// Records two fills of one buffer, with or without a barrier between
  /// them, and releases everything again.
  void recordTwoFills(bool withBarrier) {
    VkBuffer buffer = createFillableBuffer();
    VkCommandPoolCreateInfo poolInfo{
        VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    poolInfo.queueFamilyIndex = queueFamily;
    VkCommandPool pool;
    ASSERT_EQ(load<PFN_vkCreateCommandPool>("vkCreateCommandPool")(
                  device, &poolInfo, nullptr, &pool),
              VK_SUCCESS);
    VkCommandBufferAllocateInfo commandInfo{
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    commandInfo.commandPool = pool;
    commandInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    commandInfo.commandBufferCount = 1;
    VkCommandBuffer commands;
    ASSERT_EQ(load<PFN_vkAllocateCommandBuffers>("vkAllocateCommandBuffers")(
                  device, &commandInfo, &commands),
              VK_SUCCESS);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    load<PFN_vkBeginCommandBuffer>("vkBeginCommandBuffer")(commands, &begin);
    auto fill = load<PFN_vkCmdFillBuffer>("vkCmdFillBuffer");
    fill(commands, buffer, 0, VK_WHOLE_SIZE, 0);
    if (withBarrier) {
      VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      load<PFN_vkCmdPipelineBarrier>("vkCmdPipelineBarrier")(
          commands, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier, 0, nullptr, 0,
          nullptr);
    }
    fill(commands, buffer, 0, VK_WHOLE_SIZE, 1);
    load<PFN_vkEndCommandBuffer>("vkEndCommandBuffer")(commands);
    load<PFN_vkDestroyCommandPool>("vkDestroyCommandPool")(device, pool,
                                                           nullptr);
    load<PFN_vkDestroyBuffer>("vkDestroyBuffer")(device, buffer, nullptr);
    load<PFN_vkFreeMemory>("vkFreeMemory")(device, memory, nullptr);
  }

  PFN_vkGetInstanceProcAddr getProcAddr = nullptr;
  std::unique_ptr<VulkanValidation> validation;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  VkDevice device = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
};

TEST_F(VulkanValidationTest, InvalidCallFailsTheCheck) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = 0; // Must be greater than 0.
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer buffer = VK_NULL_HANDLE;
  load<PFN_vkCreateBuffer>("vkCreateBuffer")(device, &info, nullptr, &buffer);
  std::string error;
  EXPECT_FALSE(validation->check("an empty buffer", error));
  EXPECT_NE(error.find("during an empty buffer, the first "
                       "VUID-VkBufferCreateInfo-size-00912"),
            std::string::npos)
      << error;
  if (buffer)
    load<PFN_vkDestroyBuffer>("vkDestroyBuffer")(device, buffer, nullptr);
  // Messages are reported once.
  EXPECT_TRUE(validation->check("nothing", error));
}

TEST_F(VulkanValidationTest, SynchronizationHazardFailsTheCheck) {
  recordTwoFills(/*withBarrier=*/false);
  std::string error;
  EXPECT_FALSE(validation->check("two fills", error));
  EXPECT_NE(error.find("SYNC-HAZARD-WRITE-AFTER-WRITE"), std::string::npos)
      << error;
}

TEST_F(VulkanValidationTest, SynchronizedCallsPassTheCheck) {
  recordTwoFills(/*withBarrier=*/true);
  std::string error;
  EXPECT_TRUE(validation->check("two ordered fills", error)) << error;
}

TEST_F(VulkanValidationTest, TeardownMessagesFailTheProcess) {
  // Leaked objects are reported by vkDestroyDevice, after the last launch:
  // the process's exit status becomes 1.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        createFillableBuffer();
        release();
        validation->finish();
        std::exit(0);
      },
      ::testing::ExitedWithCode(1),
      "VUID-vkDestroyDevice-device-00378(.|\n)*messages during Vulkan "
      "teardown \\(see above\\); exiting with status 1");
}

TEST(VulkanValidationSwitch, OffUnlessSetToOne) {
  PFN_vkGetInstanceProcAddr getProcAddr = openLoader();
  if (!getProcAddr)
    GTEST_SKIP() << "no Vulkan loader (libvulkan.so.1)";
  std::unique_ptr<VulkanValidation> validation;
  std::string error;
  unsetenv("NABLA_VULKAN_VALIDATION");
  EXPECT_TRUE(VulkanValidation::create(getProcAddr, validation, error));
  EXPECT_FALSE(validation);
  setenv("NABLA_VULKAN_VALIDATION", "0", 1);
  EXPECT_TRUE(VulkanValidation::create(getProcAddr, validation, error));
  EXPECT_FALSE(validation);
  setenv("NABLA_VULKAN_VALIDATION", "yes", 1);
  EXPECT_FALSE(VulkanValidation::create(getProcAddr, validation, error));
  EXPECT_EQ(error, "NABLA_VULKAN_VALIDATION must be 1 (validate) or 0/unset "
                   "(do not validate), not 'yes'");
}

TEST(VulkanValidationSwitch, MissingLayerIsAnError) {
  PFN_vkGetInstanceProcAddr getProcAddr = openLoader();
  if (!getProcAddr)
    GTEST_SKIP() << "no Vulkan loader (libvulkan.so.1)";
  // The loader then looks for explicit layers in this empty folder only.
  char folder[] = "/tmp/nabla-no-layers-XXXXXX";
  ASSERT_TRUE(mkdtemp(folder));
  setenv("VK_LAYER_PATH", folder, 1);
  setenv("NABLA_VULKAN_VALIDATION", "1", 1);
  std::unique_ptr<VulkanValidation> validation;
  std::string error;
  EXPECT_FALSE(VulkanValidation::create(getProcAddr, validation, error));
  EXPECT_FALSE(validation);
  EXPECT_EQ(error, "NABLA_VULKAN_VALIDATION=1, but the Vulkan loader finds no "
                   "VK_LAYER_KHRONOS_validation (install "
                   "vulkan-validationlayers, or unset NABLA_VULKAN_VALIDATION "
                   "to run without validation)");
  unsetenv("VK_LAYER_PATH");
  rmdir(folder);
}

} // namespace
