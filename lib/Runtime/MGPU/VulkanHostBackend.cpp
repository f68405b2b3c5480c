//===- VulkanHostBackend.cpp - The mgpu* API on Vulkan --------------------===//
//
// Memory model. Device memory (mgpuMemAlloc) is a host-visible, coherent
// storage buffer kept mapped: the pointer a program gets is the mapping, so
// copies to, from and between allocations are host memcpys, and a launch
// binds the buffer (at the argument's offset) directly. Any other memref a
// launch passes (plain host memory, gpu.host_register'ed or not) is staged:
// copied into a fresh buffer before the dispatch and back after it, so the
// host sees the kernel's writes once the launch has completed. Index
// elements are narrowed to SPIR-V's 32-bit index on the way in and widened
// on the way out (a value that does not fit is an error), strided views of a
// kernel parameter with the identity layout are gathered and scattered, and
// an argument that an allocation holds at an offset Vulkan cannot bind is
// staged too. A parameter with a static strided layout is bound from the
// descriptor's aligned pointer over every element the view spans: the
// kernel applies the layout itself.
//
// Ordering. Every operation completes before its call returns: a launch
// waits for its fence (with the timeout of HostBackend.h), so streams and
// events need no state, and the program order of calls is the device order
// (stronger than CUDA's stream semantics, never weaker).
//
// gpu.printf. A kernel compiled by nabla-lower-printf-to-buffer has one more
// binding, after all others: a zeroed buffer it appends records to. Once the
// launch has completed the records are formatted with the module's format
// strings and written to stdout, in the order the threads reserved them.
//
// Arguments. mgpuLaunchKernel passes the flat LLVM arguments of the launch;
// the module's host object (nabla/Runtime/HostObject.h) says which kernel
// parameter each belongs to: binding k is parameter k (a buffer, or a
// one-element buffer holding a scalar), then an i32 size binding per dynamic
// extent of each flattened multi-dimensional memref (docs/Targets.md).
//
//===----------------------------------------------------------------------===//

#include "HostBackend.h"
#include "HostObjectReader.h"

#include "../VulkanContext.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <set>

using namespace nabla::mgpu;
using nabla::runtime::Cleanup;
using nabla::runtime::vkError;
using nabla::runtime::VulkanContext;

namespace {

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
  unsigned bindingCount = 0;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout pipelineLayout = VK_NULL_HANDLE;
  std::map<std::array<uint32_t, 3>, VkPipeline> pipelines;
};

struct Module {
  HostObject object;
  VkShaderModule shader = VK_NULL_HANDLE;
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

class VulkanHostBackend final : public HostBackend {
public:
  /// Destroys what the program left (modules it did not unload, memory it
  /// did not free), then the device: nabla_mgpu_shutdown, after the program.
  ~VulkanHostBackend() override;
  const char *name() const override { return "vulkan"; }

  void *loadModule(const void *data, size_t size) override;
  void unloadModule(void *module) override;
  void *getFunction(void *module, const char *name) override;
  void launch(void *function, LaunchSize grid, LaunchSize block,
              uint32_t sharedMemoryBytes, void *stream, void **params,
              size_t count) override;

  // Every operation completes before it returns: streams and events only
  // need to be distinct non-null handles.
  void *createStream() override { return createHandle(); }
  void destroyStream(void *stream) override { destroyHandle(stream); }
  void synchronizeStream(void *) override {}
  void waitEvent(void *, void *) override {}
  void *createEvent() override { return createHandle(); }
  void destroyEvent(void *event) override { destroyHandle(event); }
  void synchronizeEvent(void *) override {}
  void recordEvent(void *, void *) override {}

  void *allocate(uint64_t bytes, void *stream, bool hostShared) override;
  void free(void *pointer, void *stream) override;
  void copy(void *destination, const void *source, size_t bytes,
            void *) override {
    if (bytes)
      std::memmove(destination, source, bytes);
  }
  void fill(void *destination, uint32_t value, unsigned width, size_t count,
            void *) override;
  // Registered memory is staged at each launch like any host memory.
  void registerHostMemory(void *, uint64_t) override {}
  void unregisterHostMemory(void *) override {}
  void setDefaultDevice(int device) override;

private:
  std::mutex mutex;
  int deviceIndex = -1;
  std::unique_ptr<VulkanContext> vk;
  VkCommandPool commandPool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  /// Keyed by mapped address.
  std::map<uintptr_t, Allocation> allocations;
  std::map<Module *, std::unique_ptr<Module>> modules;
  std::set<Function *> functions;
  /// Streams and events not destroyed yet: numbered, nothing allocated.
  std::set<uintptr_t> handles;
  uintptr_t lastHandle = 0;

  /// The open device (opened on first use).
  VulkanContext &context();
  void *createHandle() {
    std::lock_guard<std::mutex> lock(mutex);
    handles.insert(++lastHandle);
    return reinterpret_cast<void *>(lastHandle);
  }
  void destroyHandle(void *handle) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!handles.erase(reinterpret_cast<uintptr_t>(handle)))
      fatal("destroying a stream or event that does not exist");
  }
  /// Destroys `module`'s pipelines, layouts and shader (not the entry).
  void destroyModule(Module &module);
  void destroyAllocation(Allocation &allocation);
  void check(VkResult result, const char *what) {
    if (result != VK_SUCCESS)
      fatal(vkError(what, result));
  }
  void checkValidation(const std::string &during) {
    std::string error;
    if (!vk->validated(during, error))
      fatal(error);
  }
  void prepare(Function &function);
  VkPipeline getPipeline(Function &function, std::array<uint32_t, 3> size);
  /// The allocation holding [start, start + bytes), or null.
  Allocation *findAllocation(const uint8_t *start, uint64_t bytes);
  StagingBuffer createStaging(uint64_t bytes);
  void checkLaunchSize(const Function &function, LaunchSize grid,
                       LaunchSize block);
};

VulkanHostBackend::~VulkanHostBackend() {
  if (!vk)
    return;
  for (auto &[handle, module] : modules)
    destroyModule(*module);
  for (auto &[address, allocation] : allocations)
    destroyAllocation(allocation);
  if (fence)
    vk->vkDestroyFence(vk->device, fence, nullptr);
  if (commandPool)
    vk->vkDestroyCommandPool(vk->device, commandPool, nullptr);
  // Destroys the device and the instance; the validation layer reports any
  // object left behind, which fails the process.
  vk.reset();
}

VulkanContext &VulkanHostBackend::context() {
  if (vk)
    return *vk;
  auto opened = std::make_unique<VulkanContext>();
  std::string error;
  if (!opened->open(deviceIndex, error))
    fatal(error);
  vk = std::move(opened);
  VkCommandPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = vk->queueFamily;
  check(vk->vkCreateCommandPool(vk->device, &poolInfo, nullptr, &commandPool),
        "vkCreateCommandPool");
  VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vk->vkCreateFence(vk->device, &fenceInfo, nullptr, &fence),
        "vkCreateFence");
  return *vk;
}

void VulkanHostBackend::setDefaultDevice(int device) {
  std::lock_guard<std::mutex> lock(mutex);
  if (vk && device != deviceIndex)
    fatal("mgpuSetDefaultDevice(" + std::to_string(device) +
          ") after the Vulkan device was opened");
  deviceIndex = device;
}

void *VulkanHostBackend::loadModule(const void *data, size_t size) {
  std::lock_guard<std::mutex> lock(mutex);
  auto module = std::make_unique<Module>();
  std::string error;
  if (!data || size == 0)
    fatal("mgpuModuleLoad without a SPIR-V object (a PTX or other text "
          "object needs the CUDA back end: set NABLA_TARGET=cuda)");
  if (!readHostObject(data, size, module->object, error))
    fatal("cannot load a GPU module on Vulkan: " + error);
  VulkanContext &device = context();
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = module->object.words.size() * 4;
  info.pCode = module->object.words.data();
  check(device.vkCreateShaderModule(device.device, &info, nullptr,
                                    &module->shader),
        "vkCreateShaderModule");
  Module *handle = module.get();
  modules[handle] = std::move(module);
  return handle;
}

void VulkanHostBackend::unloadModule(void *handle) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = modules.find(static_cast<Module *>(handle));
  if (it == modules.end())
    fatal("mgpuModuleUnload of a module that is not loaded");
  destroyModule(*it->second);
  modules.erase(it);
}

void VulkanHostBackend::destroyModule(Module &module) {
  VulkanContext &device = *vk;
  for (auto &[name, function] : module.functions) {
    for (auto &[size, pipeline] : function->pipelines)
      device.vkDestroyPipeline(device.device, pipeline, nullptr);
    if (function->pipelineLayout)
      device.vkDestroyPipelineLayout(device.device, function->pipelineLayout,
                                     nullptr);
    if (function->setLayout)
      device.vkDestroyDescriptorSetLayout(device.device, function->setLayout,
                                          nullptr);
    functions.erase(function.get());
  }
  device.vkDestroyShaderModule(device.device, module.shader, nullptr);
}

void *VulkanHostBackend::getFunction(void *handle, const char *name) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = modules.find(static_cast<Module *>(handle));
  if (it == modules.end())
    fatal(std::string("mgpuModuleGetFunction('") + (name ? name : "") +
          "') on a module that failed to load or was unloaded");
  Module &module = *it->second;
  std::string kernel = name ? name : "";
  std::unique_ptr<Function> &function = module.functions[kernel];
  if (function)
    return function.get();
  auto entry = module.object.entryPoints.find(kernel);
  if (entry == module.object.entryPoints.end()) {
    std::string known;
    for (auto &[entryName, info] : module.object.entryPoints)
      known += (known.empty() ? "" : ", ") + entryName;
    module.functions.erase(kernel);
    fatal("the SPIR-V module has no kernel '" + kernel +
          "' (it has: " + (known.empty() ? "none" : known) + ")");
  }
  function = std::make_unique<Function>();
  function->module = &module;
  function->name = kernel;
  function->entry = &entry->second;
  auto params = module.object.kernels.find(kernel);
  if (params != module.object.kernels.end())
    function->params = &params->second;
  function->prints = module.object.printing.count(kernel) != 0;
  functions.insert(function.get());
  return function.get();
}

/// Creates the descriptor set and pipeline layouts of a kernel.
void VulkanHostBackend::prepare(Function &function) {
  if (function.setLayout)
    return;
  unsigned bindings = function.params->size() + (function.prints ? 1 : 0);
  for (const KernelParam &param : *function.params)
    if (param.hasSizeBindings())
      for (int64_t extent : param.shape)
        bindings += extent < 0;
  function.bindingCount = bindings;
  std::string error;
  if (!vk->checkStorageBufferBindings(function.name, bindings, error))
    fatal(error);
  std::vector<VkDescriptorSetLayoutBinding> layout(bindings);
  for (unsigned k = 0; k < bindings; ++k) {
    layout[k].binding = k;
    layout[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    layout[k].descriptorCount = 1;
    layout[k].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo setInfo{
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  setInfo.bindingCount = bindings;
  setInfo.pBindings = layout.data();
  check(vk->vkCreateDescriptorSetLayout(vk->device, &setInfo, nullptr,
                                        &function.setLayout),
        "vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo pipelineInfo{
      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pipelineInfo.setLayoutCount = 1;
  pipelineInfo.pSetLayouts = &function.setLayout;
  check(vk->vkCreatePipelineLayout(vk->device, &pipelineInfo, nullptr,
                                   &function.pipelineLayout),
        "vkCreatePipelineLayout");
}

VkPipeline VulkanHostBackend::getPipeline(Function &function,
                                          std::array<uint32_t, 3> size) {
  // Without specialization constants one pipeline serves every launch (of
  // the LocalSize checkLaunchSize enforced). With them, the WorkgroupSize
  // built-in overrides LocalSize, so even a kernel with a fixed LocalSize is
  // specialized (to that size).
  if (!function.entry->sizeSpecIds)
    size = {0, 0, 0};
  VkPipeline &pipeline = function.pipelines[size];
  if (pipeline)
    return pipeline;
  VkSpecializationMapEntry entries[3];
  VkSpecializationInfo specialization{};
  if (function.entry->sizeSpecIds) {
    for (uint32_t d = 0; d < 3; ++d)
      entries[d] = {(*function.entry->sizeSpecIds)[d], 4 * d, 4};
    specialization.mapEntryCount = 3;
    specialization.pMapEntries = entries;
    specialization.dataSize = sizeof(size);
    specialization.pData = size.data();
  }
  VkComputePipelineCreateInfo info{
      VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = function.module->shader;
  info.stage.pName = function.name.c_str();
  if (function.entry->sizeSpecIds)
    info.stage.pSpecializationInfo = &specialization;
  info.layout = function.pipelineLayout;
  VkResult result = vk->vkCreateComputePipelines(vk->device, VK_NULL_HANDLE, 1,
                                                 &info, nullptr, &pipeline);
  if (result != VK_SUCCESS) {
    pipeline = VK_NULL_HANDLE;
    fatal(vkError("vkCreateComputePipelines", result) + " for kernel '" +
          function.name + "'");
  }
  checkValidation("pipeline creation for kernel '" + function.name + "'");
  return pipeline;
}

void *VulkanHostBackend::allocate(uint64_t bytes, void *, bool) {
  std::lock_guard<std::mutex> lock(mutex);
  VulkanContext &device = context();
  Allocation allocation;
  // Storage buffers may not be empty; every allocation is a distinct
  // pointer, even of 0 bytes.
  allocation.bytes = std::max<uint64_t>(16, (bytes + 15) / 16 * 16);
  std::string error;
  if (!device.createBuffer(allocation.bytes, allocation.buffer,
                           allocation.memory, error))
    fatal("gpu.alloc of " + std::to_string(bytes) + " bytes: " + error);
  void *mapped = nullptr;
  check(device.vkMapMemory(device.device, allocation.memory, 0, VK_WHOLE_SIZE,
                           0, &mapped),
        "vkMapMemory");
  allocation.mapped = static_cast<uint8_t *>(mapped);
  allocations[reinterpret_cast<uintptr_t>(mapped)] = allocation;
  return mapped;
}

void VulkanHostBackend::free(void *pointer, void *) {
  if (!pointer)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocations.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == allocations.end())
    fatal("gpu.dealloc of a pointer that gpu.alloc did not return");
  destroyAllocation(it->second);
  allocations.erase(it);
}

void VulkanHostBackend::destroyAllocation(Allocation &allocation) {
  vk->vkUnmapMemory(vk->device, allocation.memory);
  vk->vkDestroyBuffer(vk->device, allocation.buffer, nullptr);
  vk->vkFreeMemory(vk->device, allocation.memory, nullptr);
}

void VulkanHostBackend::fill(void *destination, uint32_t value, unsigned width,
                             size_t count, void *) {
  auto *bytes = static_cast<uint8_t *>(destination);
  for (size_t k = 0; k < count; ++k)
    std::memcpy(bytes + k * width, &value, width);
}

Allocation *VulkanHostBackend::findAllocation(const uint8_t *start,
                                              uint64_t bytes) {
  auto it = allocations.upper_bound(reinterpret_cast<uintptr_t>(start));
  if (it == allocations.begin())
    return nullptr;
  --it;
  Allocation &allocation = it->second;
  if (start < allocation.mapped ||
      uint64_t(start - allocation.mapped) + bytes > allocation.bytes)
    return nullptr;
  return &allocation;
}

StagingBuffer VulkanHostBackend::createStaging(uint64_t bytes) {
  StagingBuffer staging;
  std::string error;
  if (!vk->createBuffer(std::max<uint64_t>(16, (bytes + 15) / 16 * 16),
                        staging.buffer, staging.memory, error))
    fatal("staging a launch argument of " + std::to_string(bytes) +
          " bytes: " + error);
  void *mapped = nullptr;
  check(
      vk->vkMapMemory(vk->device, staging.memory, 0, VK_WHOLE_SIZE, 0, &mapped),
      "vkMapMemory");
  staging.mapped = static_cast<uint8_t *>(mapped);
  return staging;
}

/// Copies a memref view's elements to (toDevice) or from a packed device
/// buffer, converting index elements between 64 and 32 bits.
void transfer(const MemRefView &view, const std::string &type, uint8_t *device,
              bool toDevice, const std::string &what) {
  int64_t total = view.count();
  if (total <= 0)
    return;
  unsigned hostBytes = hostElementBytes(type);
  unsigned deviceBytes = deviceElementBytes(type);
  if (view.contiguous() && hostBytes == deviceBytes) {
    if (toDevice)
      std::memcpy(device, view.start, total * hostBytes);
    else
      std::memcpy(view.start, device, total * hostBytes);
    return;
  }
  size_t rank = view.sizes.size();
  std::vector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += index[d] * view.strides[d];
    uint8_t *host = view.start + offset * int64_t(hostBytes);
    uint8_t *packed = device + linear * deviceBytes;
    if (type == "index") {
      if (toDevice) {
        int64_t wide;
        std::memcpy(&wide, host, 8);
        if (wide < INT32_MIN || wide > INT32_MAX)
          fatal("element " + std::to_string(linear) + " (" +
                std::to_string(wide) + ") of " + what +
                " does not fit the 32-bit SPIR-V index");
        int32_t narrow = static_cast<int32_t>(wide);
        std::memcpy(packed, &narrow, 4);
      } else {
        int32_t narrow;
        std::memcpy(&narrow, packed, 4);
        int64_t wide = narrow;
        std::memcpy(host, &wide, 8);
      }
    } else if (toDevice) {
      std::memcpy(packed, host, hostBytes);
    } else {
      std::memcpy(host, packed, hostBytes);
    }
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < view.sizes[d])
        break;
      index[d] = 0;
    }
  }
}

void VulkanHostBackend::checkLaunchSize(const Function &function,
                                        LaunchSize grid, LaunchSize block) {
  const VkPhysicalDeviceLimits &limits = vk->properties.limits;
  auto text = [](LaunchSize size) {
    return std::to_string(size.x) + "," + std::to_string(size.y) + "," +
           std::to_string(size.z);
  };
  if (block.x > limits.maxComputeWorkGroupSize[0] ||
      block.y > limits.maxComputeWorkGroupSize[1] ||
      block.z > limits.maxComputeWorkGroupSize[2] ||
      block.x * block.y * block.z > limits.maxComputeWorkGroupInvocations)
    fatal("kernel '" + function.name + "' launched with blocks of " +
          text(block) + " threads, more than '" + vk->deviceName() +
          "' allows (at most " +
          std::to_string(limits.maxComputeWorkGroupInvocations) + " threads, " +
          std::to_string(limits.maxComputeWorkGroupSize[0]) + "," +
          std::to_string(limits.maxComputeWorkGroupSize[1]) + "," +
          std::to_string(limits.maxComputeWorkGroupSize[2]) + ")");
  if (grid.x > limits.maxComputeWorkGroupCount[0] ||
      grid.y > limits.maxComputeWorkGroupCount[1] ||
      grid.z > limits.maxComputeWorkGroupCount[2])
    fatal("kernel '" + function.name + "' launched with a grid of " +
          text(grid) + " blocks, more than '" + vk->deviceName() + "' allows");
  const EntryPoint &entry = *function.entry;
  if (entry.localSize) {
    const std::array<uint32_t, 3> &size = *entry.localSize;
    if (size[0] != block.x || size[1] != block.y || size[2] != block.z)
      fatal("kernel '" + function.name + "' was compiled for blocks of " +
            std::to_string(size[0]) + "," + std::to_string(size[1]) + "," +
            std::to_string(size[2]) + " threads but launched with " +
            text(block));
  } else if (!entry.sizeSpecIds) {
    fatal("kernel '" + function.name +
          "' has no workgroup size (neither LocalSize nor a WorkgroupSize "
          "built-in)");
  }
}

void VulkanHostBackend::launch(void *handle, LaunchSize grid, LaunchSize block,
                               uint32_t sharedMemoryBytes, void *,
                               void **params, size_t count) {
  std::lock_guard<std::mutex> lock(mutex);
  auto *function = static_cast<Function *>(handle);
  if (!functions.count(function))
    fatal("mgpuLaunchKernel of a function that no loaded module holds");
  if (!function->params)
    fatal("kernel '" + function->name +
          "' cannot be launched: its module carries no launch description "
          "(compile the host program with a nabla-to-spirv pipeline)");
  if (sharedMemoryBytes)
    fatal("kernel '" + function->name +
          "' launched with dynamic shared memory, which Vulkan kernels "
          "cannot receive (use a workgroup attribution)");
  size_t expected = 0;
  for (const KernelParam &param : *function->params)
    expected += param.llvmArgumentCount();
  if (expected != count)
    fatal("kernel '" + function->name + "' takes " + std::to_string(expected) +
          " LLVM arguments, the launch passed " + std::to_string(count));
  checkLaunchSize(*function, grid, block);
  prepare(*function);

  // Declared before the clean-up that reads it, so destroyed after it.
  std::vector<StagingBuffer> staged;
  Cleanup cleanup;
  cleanup.add([&] {
    for (StagingBuffer &staging : staged) {
      vk->vkUnmapMemory(vk->device, staging.memory);
      vk->vkDestroyBuffer(vk->device, staging.buffer, nullptr);
      vk->vkFreeMemory(vk->device, staging.memory, nullptr);
    }
  });
  std::vector<VkDescriptorBufferInfo> bindings;
  std::vector<int32_t> sizeValues;
  const VkDeviceSize alignment =
      vk->properties.limits.minStorageBufferOffsetAlignment;
  size_t next = 0;
  for (unsigned index = 0; index < function->params->size(); ++index) {
    const KernelParam &param = (*function->params)[index];
    std::string what = "argument #" + std::to_string(index) + " of kernel '" +
                       function->name + "'";
    void **fields = params + next;
    next += param.llvmArgumentCount();
    unsigned deviceBytes = deviceElementBytes(param.type);
    if (!param.buffer) {
      StagingBuffer staging = createStaging(deviceBytes);
      staged.push_back(staging);
      if (param.type == "index") {
        int64_t wide;
        std::memcpy(&wide, fields[0], 8);
        if (wide < INT32_MIN || wide > INT32_MAX)
          fatal(what + " (" + std::to_string(wide) +
                ") does not fit the 32-bit SPIR-V index");
        int32_t narrow = static_cast<int32_t>(wide);
        std::memcpy(staging.mapped, &narrow, 4);
      } else {
        std::memcpy(staging.mapped, fields[0], deviceBytes);
      }
      bindings.push_back({staging.buffer, 0, VK_WHOLE_SIZE});
      continue;
    }
    // A memref descriptor: allocated, aligned, offset, sizes, strides.
    MemRefView view;
    int64_t offset;
    std::memcpy(&offset, fields[2], 8);
    view.start = *static_cast<uint8_t **>(fields[1]) +
                 offset * int64_t(hostElementBytes(param.type));
    for (int64_t d = 0; d < param.rank(); ++d) {
      int64_t size, stride;
      std::memcpy(&size, fields[3 + d], 8);
      std::memcpy(&stride, fields[3 + param.rank() + d], 8);
      if (size < 0)
        fatal(what + " has a negative size");
      view.sizes.push_back(size);
      view.strides.push_back(stride);
      if (param.hasSizeBindings() && param.shape[d] < 0) {
        if (size > INT32_MAX)
          fatal(what + " has an extent that does not fit SPIR-V's 32-bit "
                       "index");
        sizeValues.push_back(static_cast<int32_t>(size));
      }
    }
    if (param.strided) {
      // The kernel indexes the buffer with the type's layout: bind every
      // element the view spans, from the aligned pointer on.
      int64_t last = offset;
      for (size_t d = 0; d < view.sizes.size(); ++d) {
        if (view.sizes[d] == 0)
          last = -1;
        if (last >= 0)
          last += (view.sizes[d] - 1) * view.strides[d];
      }
      view.start = *static_cast<uint8_t **>(fields[1]);
      view.sizes = {last + 1};
      view.strides = {1};
    }
    uint64_t bytes = uint64_t(view.count()) * deviceBytes;
    if (view.count() > 0 && view.contiguous() &&
        deviceBytes == hostElementBytes(param.type)) {
      if (Allocation *allocation = findAllocation(view.start, bytes)) {
        VkDeviceSize at = view.start - allocation->mapped;
        if (at % alignment == 0) {
          bindings.push_back({allocation->buffer, at, bytes});
          continue;
        }
      }
    }
    StagingBuffer staging = createStaging(bytes);
    staging.copyBack = true;
    staging.view = view;
    staging.type = param.type;
    staging.parameter = index;
    transfer(view, param.type, staging.mapped, /*toDevice=*/true, what);
    staged.push_back(staging);
    bindings.push_back({staging.buffer, 0, VK_WHOLE_SIZE});
  }
  for (int32_t size : sizeValues) {
    StagingBuffer staging = createStaging(4);
    std::memcpy(staging.mapped, &size, 4);
    staged.push_back(staging);
    bindings.push_back({staging.buffer, 0, VK_WHOLE_SIZE});
  }
  // The printf buffer: a zero counter, then room for the records.
  const uint32_t *printfWords = nullptr;
  const HostObject &object = function->module->object;
  if (function->prints) {
    uint64_t bytes = (uint64_t(object.printfCapacity) + 1) * 4;
    StagingBuffer staging = createStaging(bytes);
    std::memset(staging.mapped, 0, bytes);
    staged.push_back(staging);
    bindings.push_back({staging.buffer, 0, VK_WHOLE_SIZE});
    printfWords = reinterpret_cast<const uint32_t *>(staging.mapped);
  }
  if (bindings.size() != function->bindingCount)
    fatal("internal error: kernel '" + function->name + "' has " +
          std::to_string(function->bindingCount) + " bindings, the launch " +
          "made " + std::to_string(bindings.size()));

  VkPipeline pipeline = getPipeline(
      *function, {uint32_t(block.x), uint32_t(block.y), uint32_t(block.z)});

  VkDescriptorPoolSize poolSize{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                std::max<uint32_t>(1, bindings.size())};
  VkDescriptorPoolCreateInfo poolInfo{
      VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  poolInfo.maxSets = 1;
  poolInfo.poolSizeCount = 1;
  poolInfo.pPoolSizes = &poolSize;
  VkDescriptorPool pool;
  check(vk->vkCreateDescriptorPool(vk->device, &poolInfo, nullptr, &pool),
        "vkCreateDescriptorPool");
  cleanup.add(
      [this, pool] { vk->vkDestroyDescriptorPool(vk->device, pool, nullptr); });
  VkDescriptorSetAllocateInfo setInfo{
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  setInfo.descriptorPool = pool;
  setInfo.descriptorSetCount = 1;
  setInfo.pSetLayouts = &function->setLayout;
  VkDescriptorSet set;
  check(vk->vkAllocateDescriptorSets(vk->device, &setInfo, &set),
        "vkAllocateDescriptorSets");
  std::vector<VkWriteDescriptorSet> writes(bindings.size());
  for (size_t k = 0; k < bindings.size(); ++k) {
    writes[k] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[k].dstSet = set;
    writes[k].dstBinding = k;
    writes[k].descriptorCount = 1;
    writes[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[k].pBufferInfo = &bindings[k];
  }
  vk->vkUpdateDescriptorSets(vk->device, writes.size(), writes.data(), 0,
                             nullptr);

  VkCommandBufferAllocateInfo commandInfo{
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  commandInfo.commandPool = commandPool;
  commandInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  commandInfo.commandBufferCount = 1;
  VkCommandBuffer commands;
  check(vk->vkAllocateCommandBuffers(vk->device, &commandInfo, &commands),
        "vkAllocateCommandBuffers");
  cleanup.add([this, commands] {
    vk->vkFreeCommandBuffers(vk->device, commandPool, 1, &commands);
  });
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vk->vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
  vk->vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vk->vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                              function->pipelineLayout, 0, 1, &set, 0, nullptr);
  vk->vkCmdDispatch(commands, grid.x, grid.y, grid.z);
  // The fence makes the kernel's writes available; this barrier makes them
  // visible to the host's reads after the wait.
  VkMemoryBarrier toHost{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  toHost.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk->vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &toHost, 0,
                           nullptr, 0, nullptr);
  check(vk->vkEndCommandBuffer(commands), "vkEndCommandBuffer");

  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  check(vk->vkResetFences(vk->device, 1, &fence), "vkResetFences");
  check(vk->vkQueueSubmit(vk->queue, 1, &submit, fence), "vkQueueSubmit");
  VkResult waited =
      vk->vkWaitForFences(vk->device, 1, &fence, VK_TRUE,
                          uint64_t(timeoutSeconds()) * 1000000000ull);
  if (waited == VK_TIMEOUT)
    fatal("kernel '" + function->name + "' did not finish within " +
          std::to_string(timeoutSeconds()) + " s (set $NABLA_TIMEOUT)");
  check(waited, "vkWaitForFences");
  for (StagingBuffer &staging : staged)
    if (staging.copyBack)
      transfer(staging.view, staging.type, staging.mapped,
               /*toDevice=*/false,
               "argument #" + std::to_string(staging.parameter));
  if (printfWords) {
    std::cout << formatPrintfRecords(printfWords, object.printfCapacity,
                                     object.printfFormats);
    std::cout.flush();
  }
  checkValidation("the launch of kernel '" + function->name + "'");
}

} // namespace

std::unique_ptr<HostBackend> nabla::mgpu::createVulkanHostBackend() {
  return std::make_unique<VulkanHostBackend>();
}
