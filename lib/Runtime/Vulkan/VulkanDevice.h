//===- VulkanDevice.h - The Device of Vulkan --------------------*- C++ -*-===//
//
// The Vulkan device's class and the objects it keeps: VulkanDevice.cpp
// opens it and manages modules, pipelines and memory; VulkanLaunch.cpp binds
// a launch's arguments and dispatches it. Private to lib/Runtime/Vulkan.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_VULKAN_VULKANDEVICE_H
#define NABLA_LIB_RUNTIME_VULKAN_VULKANDEVICE_H

#include "HostObjectReader.h"
#include "VulkanContext.h"

#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

namespace nabla::runtime {
namespace vulkan {

/// A device allocation: a mapped host-visible storage buffer.
struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint8_t *mapped = nullptr;
  uint64_t bytes = 0;
};

struct Module;

/// A kernel of a loaded module, with its pipelines per workgroup size.
struct Function {
  Module *module = nullptr;
  std::string name;
  const std::vector<KernelParam> *params = nullptr;
  const EntryPoint *entry = nullptr;
  /// Whether the kernel has a printf buffer, its last binding.
  bool prints = false;
  /// The module globals' buffers it binds, after its size bindings.
  std::vector<const Allocation *> globals;
  unsigned bindingCount = 0;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout pipelineLayout = VK_NULL_HANDLE;
  std::map<std::array<uint32_t, 3>, VkPipeline> pipelines;
};

struct Module {
  HostObject object;
  VkShaderModule shader = VK_NULL_HANDLE;
  /// The buffers of its module globals (HostObject::globals), by name:
  /// allocated and filled at load, freed at unload.
  std::map<std::string, Allocation> globals;
  std::map<std::string, std::unique_ptr<Function>> functions;
};

/// A memref argument's view of host memory, in elements.
struct MemRefView {
  uint8_t *start = nullptr;
  std::vector<int64_t> sizes, strides;

  int64_t count() const {
    int64_t total = 1;
    for (int64_t size : sizes)
      total *= size;
    return total;
  }
  bool contiguous() const {
    int64_t expected = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] != 1 && strides[d] != expected)
        return false;
      expected *= sizes[d];
    }
    return true;
  }
};

/// A buffer made for one launch, and what to copy back from it.
struct StagingBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint8_t *mapped = nullptr;
  /// Set for memref arguments: copied back after the launch.
  bool copyBack = false;
  MemRefView view;
  std::string type;
  unsigned parameter = 0;
};

class VulkanDevice final : public Device {
public:
  /// Destroys what the program left (modules it did not unload, memory it
  /// did not free), then the device.
  ~VulkanDevice() override;

  Error open(int index);
  const DeviceInfo &info() const override { return info_; }

  Expected<void *> loadModule(const ModuleImage &image) override;
  Error unloadModule(void *module) override;
  Expected<void *> getFunction(void *module, const std::string &name) override;
  /// A module global the module keeps in a buffer (nabla-bind-module-
  /// globals): its mapping. Vulkan has no other module globals.
  Expected<GlobalSymbol> getGlobal(void *module,
                                   const std::string &symbol) override;
  Error launch(void *function, const LaunchConfig &config, void **args,
               size_t count) override;

  // Every operation completes before it returns: streams and events only
  // need to be distinct non-null handles.
  Expected<void *> createStream() override { return createHandle(); }
  Error destroyStream(void *stream) override { return destroyHandle(stream); }
  Error synchronize(void *) override { return Error::success(); }
  Error waitEvent(void *, void *) override { return Error::success(); }
  Expected<void *> createEvent() override { return createHandle(); }
  Error destroyEvent(void *event) override { return destroyHandle(event); }
  Error synchronizeEvent(void *) override { return Error::success(); }
  Error recordEvent(void *, void *) override { return Error::success(); }

  Expected<void *> allocate(uint64_t bytes, void *stream,
                            bool hostShared) override;
  Error free(void *pointer, void *stream) override;
  Error copy(void *destination, const void *source, size_t bytes,
             void *) override {
    if (bytes)
      std::memmove(destination, source, bytes);
    return Error::success();
  }
  Error fill(void *destination, uint32_t value, unsigned width, size_t count,
             void *) override;
  // Registered memory is staged at each launch like any host memory.
  Error registerHostMemory(void *, uint64_t) override {
    return Error::success();
  }
  Error unregisterHostMemory(void *) override { return Error::success(); }

private:
  std::mutex mutex;
  std::unique_ptr<VulkanContext> vk;
  DeviceInfo info_;
  VkCommandPool commandPool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkQueryPool timestamps = VK_NULL_HANDLE;
  /// Keyed by mapped address.
  std::map<uintptr_t, Allocation> allocations;
  std::map<Module *, std::unique_ptr<Module>> modules;
  std::set<Function *> functions;
  /// Streams and events not destroyed yet: numbered, nothing allocated.
  std::set<uintptr_t> handles;
  uintptr_t lastHandle = 0;

  void *createHandle() {
    std::lock_guard<std::mutex> lock(mutex);
    handles.insert(++lastHandle);
    return reinterpret_cast<void *>(lastHandle);
  }
  Error destroyHandle(void *handle) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!handles.erase(reinterpret_cast<uintptr_t>(handle)))
      return makeError("destroying a stream or event that does not exist");
    return Error::success();
  }
  /// A mapped storage buffer of `bytes` (at least 16, whole 16-byte units,
  /// zero past `bytes`).
  Expected<Allocation> createMapped(uint64_t bytes);
  /// Allocates and fills the buffers of `module`'s globals (zero past their
  /// initial contents).
  Error createGlobals(Module &module);
  /// Destroys `module`'s pipelines, layouts, shader and globals (not the
  /// entry).
  void destroyModule(Module &module);
  void destroyAllocation(Allocation &allocation);
  static Error check(VkResult result, const char *what) {
    if (result != VK_SUCCESS)
      return makeError(vkError(what, result));
    return Error::success();
  }
  Error checkValidation(const std::string &during) {
    std::string error;
    if (!vk->validated(during, error))
      return makeError(error);
    return Error::success();
  }
  Error prepare(Function &function);
  Expected<VkPipeline> getPipeline(Function &function,
                                   std::array<uint32_t, 3> size);
  /// The allocation holding [start, start + bytes), or null.
  Allocation *findAllocation(const uint8_t *start, uint64_t bytes);
  Expected<StagingBuffer> createStaging(uint64_t bytes);
  Error checkLaunchSize(const Function &function, Dim3 grid, Dim3 block);
  /// Binds the launch's arguments: buffers in `bindings`, the staging
  /// buffers made for it in `staged`.
  Error bindArguments(const Function &function, void **args,
                      std::vector<VkDescriptorBufferInfo> &bindings,
                      std::vector<StagingBuffer> &staged);
  /// Records, submits and waits for one dispatch with `set`.
  Error dispatch(const Function &function, VkPipeline pipeline,
                 VkDescriptorSet set, Dim3 grid, double *kernelNs);
};

} // namespace vulkan
} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_VULKAN_VULKANDEVICE_H
