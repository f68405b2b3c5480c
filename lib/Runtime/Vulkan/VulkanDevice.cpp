//===- VulkanDevice.cpp - The Device of Vulkan ----------------------------===//
//
// On a VulkanContext: the loader opened at run time, a real GPU preferred
// over Mesa's lavapipe, every supported feature enabled (the SPIR-V module
// declares exactly the capabilities it uses).
//
// Memory model. Device memory (Device::allocate) is a host-visible, coherent
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
// waits for its fence (with the device's timeout), so streams and
// events need no state, and the program order of calls is the device order
// (stronger than CUDA's stream semantics, never weaker). A timed launch
// brackets the dispatch with two timestamp queries in its command buffer.
//
// Module globals. A `__device__` variable or a large constant table of a
// SPIR-V module (nabla-bind-module-globals) lives in a buffer the module owns:
// allocated and filled from its initial contents at load, bound after the
// size bindings at each launch of a kernel that reads it, freed at unload.
// Launches see each other's writes, as CUDA's launches of one module do.
//
// gpu.printf. A kernel compiled by nabla-lower-printf-to-buffer has one more
// binding, after all others: a zeroed buffer it appends records to. Once the
// launch has completed the records are formatted with the module's format
// strings and written to stdout, in the order the threads reserved them.
//
// Arguments. A launch passes the flat LLVM arguments (Device.h); the
// module's host object (nabla/Runtime/HostObject.h), or the parameter list
// given with bare SPIR-V, says which kernel parameter each belongs to:
// binding k is parameter k (a buffer, or a one-element buffer holding a
// scalar), then an i32 size binding per dynamic extent of each flattened
// multi-dimensional memref (docs/Targets.md).
//
// $NABLA_VULKAN_VALIDATION=1 runs everything under the Khronos validation
// layer (VulkanValidation.h): a message fails the pipeline creation or the
// launch that caused it, before a kernel is dispatched with a pipeline the
// layer rejected.
//
//===----------------------------------------------------------------------===//

#include "VulkanDevice.h"

#include <algorithm>
#include <cstring>

using namespace nabla::runtime;
using namespace nabla::runtime::vulkan;

VulkanDevice::~VulkanDevice() {
  if (!vk)
    return;
  for (auto &[handle, module] : modules)
    destroyModule(*module);
  for (auto &[address, allocation] : allocations)
    destroyAllocation(allocation);
  if (timestamps)
    vk->vkDestroyQueryPool(vk->device, timestamps, nullptr);
  if (fence)
    vk->vkDestroyFence(vk->device, fence, nullptr);
  if (commandPool)
    vk->vkDestroyCommandPool(vk->device, commandPool, nullptr);
  // Destroys the device and the instance; the validation layer reports any
  // object left behind, which fails the process.
  vk.reset();
}

Error VulkanDevice::open(int index) {
  auto opened = std::make_unique<VulkanContext>();
  std::string error;
  if (!opened->open(index, error))
    return makeError(error);
  vk = std::move(opened);
  VkCommandPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = vk->queueFamily;
  if (Error e = check(
          vk->vkCreateCommandPool(vk->device, &poolInfo, nullptr, &commandPool),
          "vkCreateCommandPool"))
    return e;
  VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (Error e =
          check(vk->vkCreateFence(vk->device, &fenceInfo, nullptr, &fence),
                "vkCreateFence"))
    return e;

  const VkPhysicalDeviceLimits &limits = vk->properties.limits;
  info_.backend = "vulkan";
  info_.name = vk->deviceName();
  info_.chip = "";
  info_.subgroupSize = vk->subgroupLanes;
  info_.maxThreadsPerBlock = limits.maxComputeWorkGroupInvocations;
  for (int d = 0; d < 3; ++d) {
    info_.maxBlock[d] = limits.maxComputeWorkGroupSize[d];
    info_.maxGrid[d] = limits.maxComputeWorkGroupCount[d];
  }
  info_.dynamicSharedMemoryAtLaunch = false;
  info_.memoryBytes = vk->bufferHeapBytes();
  if (!vk->timestampValidBits)
    info_.timingProblem =
        std::string("its compute queue has no timestamps (timestampValidBits "
                    "0, timestampComputeAndGraphics ") +
        (limits.timestampComputeAndGraphics ? "true" : "false") + ")";
  else if (!(limits.timestampPeriod > 0))
    info_.timingProblem =
        "it reports timestampPeriod " + std::to_string(limits.timestampPeriod);
  if (info_.timingProblem.empty()) {
    VkQueryPoolCreateInfo queryInfo{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    queryInfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
    queryInfo.queryCount = 2;
    if (Error e = check(
            vk->vkCreateQueryPool(vk->device, &queryInfo, nullptr, &timestamps),
            "vkCreateQueryPool"))
      return e;
  }
  return Error::success();
}

Expected<void *> VulkanDevice::loadModule(const ModuleImage &image) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!image.data || image.size == 0)
    return makeError("loading a module without a SPIR-V object (a PTX or "
                     "other text object needs the CUDA back end: set "
                     "NABLA_TARGET=cuda)");
  auto module = std::make_unique<Module>();
  std::string error;
  if (!readHostObject(image.data, image.size, module->object, error))
    return makeError("cannot load a GPU module on Vulkan: " + error);
  if (image.abi) {
    module->object.kernels = *image.abi;
    module->object.described = true;
  }
  if (image.printf) {
    module->object.printing.insert(image.printf->kernels.begin(),
                                   image.printf->kernels.end());
    module->object.printfFormats = image.printf->formats;
    module->object.printfCapacity = image.printf->capacity;
  }
  if (image.globals)
    module->object.globals = *image.globals;
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = module->object.words.size() * 4;
  info.pCode = module->object.words.data();
  if (Error e = check(
          vk->vkCreateShaderModule(vk->device, &info, nullptr, &module->shader),
          "vkCreateShaderModule"))
    return std::move(e);
  if (Error e = createGlobals(*module)) {
    destroyModule(*module);
    return std::move(e);
  }
  Module *handle = module.get();
  modules[handle] = std::move(module);
  return static_cast<void *>(handle);
}

Error VulkanDevice::unloadModule(void *handle) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = modules.find(static_cast<Module *>(handle));
  if (it == modules.end())
    return makeError("unloading a module that is not loaded");
  destroyModule(*it->second);
  modules.erase(it);
  // The destruction is checked too.
  return checkValidation("unloading a module");
}

Error VulkanDevice::createGlobals(Module &module) {
  for (const ModuleGlobal &global : module.object.globals.buffers) {
    Expected<Allocation> allocation = createMapped(global.bytes);
    if (!allocation)
      return allocation.takeError().withContext("module global '" +
                                                global.name + "'");
    if (!global.initial.empty())
      std::memcpy(allocation->mapped, global.initial.data(),
                  global.initial.size());
    std::memset(allocation->mapped + global.initial.size(), 0,
                global.bytes - global.initial.size());
    module.globals[global.name] = *allocation;
  }
  return Error::success();
}

Expected<GlobalSymbol> VulkanDevice::getGlobal(void *handle,
                                               const std::string &symbol) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = modules.find(static_cast<Module *>(handle));
  if (it == modules.end())
    return makeError("looking up global '" + symbol +
                     "' in a module that failed to load or was unloaded");
  auto global = it->second->globals.find(symbol);
  const ModuleGlobal *described = it->second->object.globals.find(symbol);
  if (global == it->second->globals.end() || !described)
    return makeError("the SPIR-V module keeps no global '" + symbol +
                     "' (Vulkan has only the module globals that "
                     "nabla-bind-module-globals gave buffers; compile "
                     "relocations for Vulkan with the table strategy)");
  return GlobalSymbol{global->second.mapped,
                      static_cast<size_t>(described->bytes)};
}

void VulkanDevice::destroyModule(Module &module) {
  for (auto &[name, allocation] : module.globals)
    destroyAllocation(allocation);
  module.globals.clear();
  for (auto &[name, function] : module.functions) {
    for (auto &[size, pipeline] : function->pipelines)
      vk->vkDestroyPipeline(vk->device, pipeline, nullptr);
    if (function->pipelineLayout)
      vk->vkDestroyPipelineLayout(vk->device, function->pipelineLayout,
                                  nullptr);
    if (function->setLayout)
      vk->vkDestroyDescriptorSetLayout(vk->device, function->setLayout,
                                       nullptr);
    functions.erase(function.get());
  }
  vk->vkDestroyShaderModule(vk->device, module.shader, nullptr);
}

Expected<void *> VulkanDevice::getFunction(void *handle,
                                           const std::string &kernel) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = modules.find(static_cast<Module *>(handle));
  if (it == modules.end())
    return makeError("looking up kernel '" + kernel +
                     "' in a module that failed to load or was unloaded");
  Module &module = *it->second;
  std::unique_ptr<Function> &function = module.functions[kernel];
  if (function)
    return static_cast<void *>(function.get());
  auto entry = module.object.entryPoints.find(kernel);
  if (entry == module.object.entryPoints.end()) {
    std::string known;
    for (auto &[entryName, info] : module.object.entryPoints)
      known += (known.empty() ? "" : ", ") + entryName;
    module.functions.erase(kernel);
    return makeError("the SPIR-V module has no kernel '" + kernel +
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
  for (const std::string &name : module.object.globals.boundBy(kernel)) {
    auto global = module.globals.find(name);
    if (global == module.globals.end()) {
      module.functions.erase(kernel);
      return makeError("kernel '" + kernel + "' binds module global '" +
                       name + "', which its module does not describe");
    }
    function->globals.push_back(&global->second);
  }
  functions.insert(function.get());
  return static_cast<void *>(function.get());
}

/// Creates the descriptor set and pipeline layouts of a kernel.
Error VulkanDevice::prepare(Function &function) {
  if (function.setLayout)
    return Error::success();
  unsigned bindings = function.params->size() + function.globals.size() +
                      (function.prints ? 1 : 0);
  for (const KernelParam &param : *function.params)
    if (param.hasSizeBindings())
      for (int64_t extent : param.shape)
        bindings += extent < 0;
  function.bindingCount = bindings;
  std::string error;
  if (!vk->checkStorageBufferBindings(function.name, bindings, error))
    return makeError(error);
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
  if (Error e = check(vk->vkCreateDescriptorSetLayout(
                          vk->device, &setInfo, nullptr, &function.setLayout),
                      "vkCreateDescriptorSetLayout"))
    return e;
  VkPipelineLayoutCreateInfo pipelineInfo{
      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pipelineInfo.setLayoutCount = 1;
  pipelineInfo.pSetLayouts = &function.setLayout;
  return check(vk->vkCreatePipelineLayout(vk->device, &pipelineInfo, nullptr,
                                          &function.pipelineLayout),
               "vkCreatePipelineLayout");
}

Expected<VkPipeline> VulkanDevice::getPipeline(Function &function,
                                               std::array<uint32_t, 3> size) {
  // Without specialization constants one pipeline serves every launch (of
  // the LocalSize checkLaunchSize enforced). With them, the WorkgroupSize
  // built-in overrides LocalSize, so even a kernel with a fixed LocalSize is
  // specialized (to that size).
  if (!function.entry->sizeSpecIds)
    size = {0, 0, 0};
  auto known = function.pipelines.find(size);
  if (known != function.pipelines.end())
    return known->second;
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
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult result;
  {
    UninterruptibleCallGuard guard(
        *this, "creating the pipeline of kernel '" + function.name +
                   "' (the driver compiles its shader)");
    result = vk->vkCreateComputePipelines(vk->device, VK_NULL_HANDLE, 1, &info,
                                          nullptr, &pipeline);
  }
  if (result != VK_SUCCESS)
    return makeError(vkError("vkCreateComputePipelines", result) +
                     " for kernel '" + function.name + "'");
  function.pipelines[size] = pipeline;
  // A pipeline the layer rejected (the shader's interface against the
  // layout, the SPIR-V against the device) is never dispatched.
  if (Error e = checkValidation("pipeline creation for kernel '" +
                                function.name + "'"))
    return std::move(e);
  return pipeline;
}

Expected<Allocation> VulkanDevice::createMapped(uint64_t bytes) {
  Allocation allocation;
  // Storage buffers may not be empty; every allocation is a distinct
  // pointer, even of 0 bytes.
  allocation.bytes = std::max<uint64_t>(16, (bytes + 15) / 16 * 16);
  std::string error;
  if (!vk->createBuffer(allocation.bytes, allocation.buffer, allocation.memory,
                        error))
    return makeError("allocating " + std::to_string(bytes) +
                     " bytes: " + error);
  void *mapped = nullptr;
  if (VkResult r = vk->vkMapMemory(vk->device, allocation.memory, 0,
                                   VK_WHOLE_SIZE, 0, &mapped)) {
    vk->vkDestroyBuffer(vk->device, allocation.buffer, nullptr);
    vk->vkFreeMemory(vk->device, allocation.memory, nullptr);
    return makeError(vkError("vkMapMemory", r));
  }
  allocation.mapped = static_cast<uint8_t *>(mapped);
  // The rounding is reachable (a kernel updates the last of an odd number of
  // halves through its whole word, and an adjoint reads that word's other
  // half): zero, never whatever the driver's memory held.
  std::memset(allocation.mapped + bytes, 0, allocation.bytes - bytes);
  return allocation;
}

Expected<void *> VulkanDevice::allocate(uint64_t bytes, void *, bool) {
  std::lock_guard<std::mutex> lock(mutex);
  Expected<Allocation> allocation = createMapped(bytes);
  if (!allocation)
    return allocation.takeError();
  allocations[reinterpret_cast<uintptr_t>(allocation->mapped)] = *allocation;
  return static_cast<void *>(allocation->mapped);
}

Error VulkanDevice::free(void *pointer, void *) {
  if (!pointer)
    return Error::success();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocations.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == allocations.end())
    return makeError("freeing a pointer that the device did not allocate");
  destroyAllocation(it->second);
  allocations.erase(it);
  return Error::success();
}

void VulkanDevice::destroyAllocation(Allocation &allocation) {
  vk->vkUnmapMemory(vk->device, allocation.memory);
  vk->vkDestroyBuffer(vk->device, allocation.buffer, nullptr);
  vk->vkFreeMemory(vk->device, allocation.memory, nullptr);
}

Error VulkanDevice::fill(void *destination, uint32_t value, unsigned width,
                         size_t count, void *) {
  auto *bytes = static_cast<uint8_t *>(destination);
  for (size_t k = 0; k < count; ++k)
    std::memcpy(bytes + k * width, &value, width);
  return Error::success();
}

Allocation *VulkanDevice::findAllocation(const uint8_t *start, uint64_t bytes) {
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

Expected<StagingBuffer> VulkanDevice::createStaging(uint64_t bytes) {
  StagingBuffer staging;
  std::string error;
  if (!vk->createBuffer(std::max<uint64_t>(16, (bytes + 15) / 16 * 16),
                        staging.buffer, staging.memory, error))
    return makeError("staging a launch argument of " + std::to_string(bytes) +
                     " bytes: " + error);
  void *mapped = nullptr;
  if (VkResult r = vk->vkMapMemory(vk->device, staging.memory, 0, VK_WHOLE_SIZE,
                                   0, &mapped)) {
    vk->vkDestroyBuffer(vk->device, staging.buffer, nullptr);
    vk->vkFreeMemory(vk->device, staging.memory, nullptr);
    return makeError(vkError("vkMapMemory", r));
  }
  staging.mapped = static_cast<uint8_t *>(mapped);
  // As allocate(): the rounding past the argument's bytes reads as zero.
  std::memset(staging.mapped + bytes, 0,
              std::max<uint64_t>(16, (bytes + 15) / 16 * 16) - bytes);
  return staging;
}

/// "x,y,z".
Expected<std::unique_ptr<Device>> nabla::runtime::openVulkanDevice(int index) {
  auto device = std::make_unique<VulkanDevice>();
  if (Error e = device->open(index))
    return std::move(e);
  return std::unique_ptr<Device>(std::move(device));
}
