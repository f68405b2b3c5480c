//===- VulkanDevice.cpp - Run SPIR-V kernels through Vulkan ---------------===//
//
// The embedded default back end, on a VulkanContext (the loader opened at
// run time, a real GPU preferred over Mesa's lavapipe, every supported
// feature enabled, since the SPIR-V module declares exactly the capabilities
// it uses).
//
// Binding k of descriptor set 0 is parameter k (see docs/Targets.md): buffers
// are copied in and out of host-visible storage buffers, scalars and sizes
// are one-element storage buffers.
//
// A timed launch brackets the dispatch with two timestamp queries in the
// same command buffer (the compute-to-host barrier after it is outside);
// repeats resubmit the one command buffer after restoring the inputs in the
// mapped buffers from the host.
//
// $NABLA_VULKAN_VALIDATION=1 runs everything under the Khronos validation
// layer (VulkanValidation.h): a message fails the open or the launch that
// caused it, before a kernel is dispatched with a pipeline the layer rejected.
//
//===----------------------------------------------------------------------===//

#include "SPIRVReflection.h"
#include "VulkanContext.h"

#include "nabla/Runtime/Device.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

using namespace nabla::runtime;

namespace {

class VulkanDevice final : public Device, private VulkanContext {
public:
  using VulkanContext::open;

  std::string backend() const override { return "vulkan"; }
  std::string name() const override { return deviceName(); }
  std::string chip() const override { return ""; }
  unsigned subgroupSize() const override { return subgroupLanes; }
  bool launch(const LaunchSpec &spec, std::vector<HostParam> &params,
              std::string &error) override;

private:
  /// The launch proper; every object it creates is destroyed on return.
  bool runKernel(const LaunchSpec &spec, std::vector<HostParam> &params,
                 std::string &error);
};

/// An index buffer's bytes for SPIR-V, whose index is 32-bit: the host holds
/// int64 elements (.npy 'i8'), the kernel reads int32 ones.
bool narrowIndexBuffer(const NpyArray &array, std::vector<uint8_t> &bytes,
                       std::string &error) {
  size_t count = array.data.size() / 8;
  bytes.resize(count * 4);
  for (size_t k = 0; k < count; ++k) {
    int64_t wide;
    std::memcpy(&wide, array.data.data() + 8 * k, 8);
    if (wide < INT32_MIN || wide > INT32_MAX) {
      error = "element " + std::to_string(k) + " (" + std::to_string(wide) +
              ") of an index buffer does not fit the 32-bit SPIR-V index";
      return false;
    }
    int32_t narrow = static_cast<int32_t>(wide);
    std::memcpy(bytes.data() + 4 * k, &narrow, 4);
  }
  return true;
}

/// Reads an index buffer back from `mapped` (int32) into `array` (int64).
void widenIndexBuffer(const void *mapped, NpyArray &array) {
  size_t count = array.data.size() / 8;
  for (size_t k = 0; k < count; ++k) {
    int32_t narrow;
    std::memcpy(&narrow, static_cast<const uint8_t *>(mapped) + 4 * k, 4);
    int64_t wide = narrow;
    std::memcpy(array.data.data() + 8 * k, &wide, 8);
  }
}

/// The bytes a binding holds before the launch.
bool bindingBytes(const BindingInfo &binding,
                  const std::vector<HostParam> &params,
                  std::vector<uint8_t> &bytes, std::string &error) {
  if (binding.param >= params.size()) {
    error = "manifest binding refers to parameter " +
            std::to_string(binding.param) + ", which does not exist";
    return false;
  }
  const HostParam &param = params[binding.param];
  if (binding.kind == "buffer" && param.info->element == "index")
    return narrowIndexBuffer(param.buffer, bytes, error);
  if (binding.kind == "buffer") {
    bytes = param.buffer.data;
    return true;
  }
  if (binding.kind == "size") {
    if (binding.dim < 0 ||
        binding.dim >= static_cast<int>(param.buffer.shape.size())) {
      error = "manifest size binding has a bad dimension";
      return false;
    }
    int64_t extent = param.buffer.shape[binding.dim];
    if (extent > INT32_MAX) {
      error = "extent " + std::to_string(extent) +
              " does not fit the 32-bit SPIR-V index";
      return false;
    }
    int32_t v = static_cast<int32_t>(extent);
    bytes.assign(reinterpret_cast<uint8_t *>(&v),
                 reinterpret_cast<uint8_t *>(&v) + 4);
    return true;
  }
  // A scalar; index is 32-bit in SPIR-V.
  if (param.info->type == "index") {
    int64_t v = param.scalarAsInteger();
    if (v < INT32_MIN || v > INT32_MAX) {
      error = "index argument " + std::to_string(v) +
              " does not fit the 32-bit SPIR-V index";
      return false;
    }
    int32_t narrow = static_cast<int32_t>(v);
    bytes.assign(reinterpret_cast<uint8_t *>(&narrow),
                 reinterpret_cast<uint8_t *>(&narrow) + 4);
    return true;
  }
  bytes.assign(param.scalar, param.scalar + param.scalarBytes);
  return true;
}

bool VulkanDevice::launch(const LaunchSpec &spec,
                          std::vector<HostParam> &params, std::string &error) {
  if (!refuseDeviceBuffers(params, backend(), error))
    return false;
  bool ran = runKernel(spec, params, error);
  // After runKernel, whose objects are gone: their destruction is checked
  // too. A failed launch keeps its own error; its messages are printed.
  std::string validationError;
  if (!validated("the launch of kernel '" + spec.kernel->name + "'",
                 validationError)) {
    if (ran)
      error = validationError;
    return false;
  }
  return ran;
}

bool VulkanDevice::runKernel(const LaunchSpec &spec,
                             std::vector<HostParam> &params,
                             std::string &error) {
  if (!spec.patches.empty()) {
    error = "relocation record '" + spec.patches.front().key +
            "' was compiled with the patch strategy, but Vulkan cannot look "
            "up module globals: compile for Vulkan with the table strategy";
    return false;
  }
  const VkPhysicalDeviceLimits &limits = properties.limits;
  const Dim3 &b = spec.block, &g = spec.grid;
  if (b.x > limits.maxComputeWorkGroupSize[0] ||
      b.y > limits.maxComputeWorkGroupSize[1] ||
      b.z > limits.maxComputeWorkGroupSize[2] ||
      b.product() > limits.maxComputeWorkGroupInvocations) {
    error = "block " + std::to_string(b.x) + "," + std::to_string(b.y) + "," +
            std::to_string(b.z) + " exceeds what '" + name() +
            "' allows (at most " +
            std::to_string(limits.maxComputeWorkGroupInvocations) +
            " invocations, " +
            std::to_string(limits.maxComputeWorkGroupSize[0]) + "," +
            std::to_string(limits.maxComputeWorkGroupSize[1]) + "," +
            std::to_string(limits.maxComputeWorkGroupSize[2]) + ")";
    return false;
  }
  if (g.x > limits.maxComputeWorkGroupCount[0] ||
      g.y > limits.maxComputeWorkGroupCount[1] ||
      g.z > limits.maxComputeWorkGroupCount[2]) {
    error = "grid exceeds the device's maximum workgroup count";
    return false;
  }
  // One storage buffer per buffer and scalar parameter (and per relocation
  // record).
  if (!checkStorageBufferBindings(spec.kernel->name,
                                  spec.kernel->bindings.size(), error))
    return false;
  if (spec.image->size() % 4 != 0 || spec.image->empty()) {
    error = "the SPIR-V object is not a whole number of words";
    return false;
  }
  if (spec.timing && !timestampValidBits) {
    error = std::string("Vulkan device '") + name() +
            "' cannot time kernels: its compute queue has no timestamps "
            "(timestampValidBits 0, timestampComputeAndGraphics " +
            (limits.timestampComputeAndGraphics ? "true" : "false") + ")";
    return false;
  }
  if (spec.timing && !(limits.timestampPeriod > 0)) {
    error = std::string("Vulkan device '") + name() +
            "' cannot time kernels: it reports timestampPeriod " +
            std::to_string(limits.timestampPeriod);
    return false;
  }

  Cleanup cleanup;
  const std::vector<BindingInfo> &bindings = spec.kernel->bindings;
  std::vector<VkBuffer> buffers(bindings.size(), VK_NULL_HANDLE);
  std::vector<VkDeviceMemory> memories(bindings.size(), VK_NULL_HANDLE);
  std::vector<VkDeviceSize> sizes(bindings.size());
  std::vector<void *> mapped(bindings.size(), nullptr);
  // Each binding's bytes before the launch, written again before every
  // repeat: host-visible coherent memory, so an upload is a copy into the
  // mapping (the submission makes it visible to the device).
  std::vector<std::vector<uint8_t>> initial(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    if (!bindingBytes(bindings[i], params, initial[i], error))
      return false;
    // Storage buffers may not be empty; keep 16-byte granules.
    sizes[i] = std::max<VkDeviceSize>(16, (initial[i].size() + 15) / 16 * 16);
    if (!createBuffer(sizes[i], buffers[i], memories[i], error))
      return false;
    VkBuffer buffer = buffers[i];
    VkDeviceMemory memory = memories[i];
    cleanup.add([this, buffer, memory] {
      vkDestroyBuffer(device, buffer, nullptr);
      vkFreeMemory(device, memory, nullptr);
    });
    if (VkResult r = vkMapMemory(device, memory, 0, sizes[i], 0, &mapped[i])) {
      error = vkError("vkMapMemory", r);
      return false;
    }
    cleanup.add([this, memory] { vkUnmapMemory(device, memory); });
  }
  auto upload = [&] {
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < bindings.size(); ++i) {
      std::memset(mapped[i], 0, sizes[i]);
      std::memcpy(mapped[i], initial[i].data(), initial[i].size());
    }
    if (spec.timing)
      spec.timing->uploadNs.push_back(elapsedNs(start));
  };

  VkShaderModuleCreateInfo shaderInfo{
      VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  shaderInfo.codeSize = spec.image->size();
  shaderInfo.pCode = reinterpret_cast<const uint32_t *>(spec.image->data());
  VkShaderModule shader;
  if (VkResult r =
          vkCreateShaderModule(device, &shaderInfo, nullptr, &shader)) {
    error = vkError("vkCreateShaderModule", r);
    return false;
  }
  cleanup.add(
      [this, shader] { vkDestroyShaderModule(device, shader, nullptr); });

  std::vector<VkDescriptorSetLayoutBinding> layoutBindings;
  for (const BindingInfo &binding : bindings) {
    VkDescriptorSetLayoutBinding b{};
    b.binding = binding.binding;
    b.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b.descriptorCount = 1;
    b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    layoutBindings.push_back(b);
  }
  VkDescriptorSetLayoutCreateInfo setLayoutInfo{
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  setLayoutInfo.bindingCount = layoutBindings.size();
  setLayoutInfo.pBindings = layoutBindings.data();
  VkDescriptorSetLayout setLayout;
  if (VkResult r = vkCreateDescriptorSetLayout(device, &setLayoutInfo, nullptr,
                                               &setLayout)) {
    error = vkError("vkCreateDescriptorSetLayout", r);
    return false;
  }
  cleanup.add([this, setLayout] {
    vkDestroyDescriptorSetLayout(device, setLayout, nullptr);
  });

  VkPipelineLayoutCreateInfo pipelineLayoutInfo{
      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pipelineLayoutInfo.setLayoutCount = 1;
  pipelineLayoutInfo.pSetLayouts = &setLayout;
  VkPipelineLayout pipelineLayout;
  if (VkResult r = vkCreatePipelineLayout(device, &pipelineLayoutInfo, nullptr,
                                          &pipelineLayout)) {
    error = vkError("vkCreatePipelineLayout", r);
    return false;
  }
  cleanup.add([this, pipelineLayout] {
    vkDestroyPipelineLayout(device, pipelineLayout, nullptr);
  });

  VkComputePipelineCreateInfo pipelineInfo{
      VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pipelineInfo.stage.sType =
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipelineInfo.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipelineInfo.stage.module = shader;
  pipelineInfo.stage.pName = spec.kernel->name.c_str();
  pipelineInfo.layout = pipelineLayout;
  // A kernel compiled without a known block size takes the launch's through
  // the specialization constants of its WorkgroupSize built-in.
  std::map<std::string, SPIRVEntryPoint> entryPoints;
  std::string reflectionError;
  VkSpecializationMapEntry sizeEntries[3];
  uint32_t sizeValues[3] = {b.x, b.y, b.z};
  VkSpecializationInfo specialization{};
  if (reflectEntryPoints(shaderInfo.pCode, spec.image->size() / 4, entryPoints,
                         reflectionError)) {
    auto entry = entryPoints.find(spec.kernel->name);
    if (entry != entryPoints.end() && entry->second.sizeSpecIds) {
      for (uint32_t d = 0; d < 3; ++d)
        sizeEntries[d] = {(*entry->second.sizeSpecIds)[d], 4 * d, 4};
      specialization.mapEntryCount = 3;
      specialization.pMapEntries = sizeEntries;
      specialization.dataSize = sizeof(sizeValues);
      specialization.pData = sizeValues;
      pipelineInfo.stage.pSpecializationInfo = &specialization;
    }
  }
  VkPipeline pipeline;
  if (VkResult r = vkCreateComputePipelines(
          device, VK_NULL_HANDLE, 1, &pipelineInfo, nullptr, &pipeline)) {
    error = vkError("vkCreateComputePipelines", r) + " for kernel '" +
            spec.kernel->name + "'";
    return false;
  }
  cleanup.add(
      [this, pipeline] { vkDestroyPipeline(device, pipeline, nullptr); });
  // A pipeline the layer rejected (the shader's interface against the
  // layout, the SPIR-V against the device) is never dispatched.
  if (!validated("pipeline creation for kernel '" + spec.kernel->name + "'",
                 error))
    return false;

  VkDescriptorPoolSize poolSize{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                std::max<uint32_t>(1, bindings.size())};
  VkDescriptorPoolCreateInfo poolInfo{
      VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  poolInfo.maxSets = 1;
  poolInfo.poolSizeCount = 1;
  poolInfo.pPoolSizes = &poolSize;
  VkDescriptorPool pool;
  if (VkResult r = vkCreateDescriptorPool(device, &poolInfo, nullptr, &pool)) {
    error = vkError("vkCreateDescriptorPool", r);
    return false;
  }
  cleanup.add([this, pool] { vkDestroyDescriptorPool(device, pool, nullptr); });
  VkDescriptorSetAllocateInfo setInfo{
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  setInfo.descriptorPool = pool;
  setInfo.descriptorSetCount = 1;
  setInfo.pSetLayouts = &setLayout;
  VkDescriptorSet set;
  if (VkResult r = vkAllocateDescriptorSets(device, &setInfo, &set)) {
    error = vkError("vkAllocateDescriptorSets", r);
    return false;
  }
  std::vector<VkDescriptorBufferInfo> bufferInfos(bindings.size());
  std::vector<VkWriteDescriptorSet> writes(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    bufferInfos[i] = {buffers[i], 0, VK_WHOLE_SIZE};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = bindings[i].binding;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &bufferInfos[i];
  }
  vkUpdateDescriptorSets(device, writes.size(), writes.data(), 0, nullptr);

  VkCommandPoolCreateInfo commandPoolInfo{
      VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  commandPoolInfo.queueFamilyIndex = queueFamily;
  VkCommandPool commandPool;
  if (VkResult r = vkCreateCommandPool(device, &commandPoolInfo, nullptr,
                                       &commandPool)) {
    error = vkError("vkCreateCommandPool", r);
    return false;
  }
  cleanup.add([this, commandPool] {
    vkDestroyCommandPool(device, commandPool, nullptr);
  });
  VkCommandBufferAllocateInfo commandInfo{
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  commandInfo.commandPool = commandPool;
  commandInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  commandInfo.commandBufferCount = 1;
  VkCommandBuffer commands;
  if (VkResult r = vkAllocateCommandBuffers(device, &commandInfo, &commands)) {
    error = vkError("vkAllocateCommandBuffers", r);
    return false;
  }
  VkQueryPool queries = VK_NULL_HANDLE;
  if (spec.timing) {
    VkQueryPoolCreateInfo queryInfo{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    queryInfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
    queryInfo.queryCount = 2;
    if (VkResult r = vkCreateQueryPool(device, &queryInfo, nullptr, &queries)) {
      error = vkError("vkCreateQueryPool", r);
      return false;
    }
    cleanup.add(
        [this, queries] { vkDestroyQueryPool(device, queries, nullptr); });
  }
  // Recorded once, submitted once per repeat.
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  if (spec.repeat <= 1)
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(commands, &begin);
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                          pipelineLayout, 0, 1, &set, 0, nullptr);
  // The measured interval: from the start timestamp (top of pipe: the queue
  // is idle, nothing earlier in it runs) to the end timestamp (bottom of
  // pipe: written once every invocation of the dispatch has completed).
  if (queries) {
    vkCmdResetQueryPool(commands, queries, 0, 2);
    vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries,
                        0);
  }
  vkCmdDispatch(commands, g.x, g.y, g.z);
  if (queries)
    vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries,
                        1);
  // The fence makes the shader's writes available on the device only; this
  // barrier makes them visible to the host reads after the wait.
  VkMemoryBarrier toHost{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  toHost.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &toHost, 0, nullptr, 0,
                       nullptr);
  if (VkResult r = vkEndCommandBuffer(commands)) {
    error = vkError("vkEndCommandBuffer", r);
    return false;
  }

  VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  if (VkResult r = vkCreateFence(device, &fenceInfo, nullptr, &fence)) {
    error = vkError("vkCreateFence", r);
    return false;
  }
  cleanup.add([this, fence] { vkDestroyFence(device, fence, nullptr); });
  // Timestamps count ticks of timestampPeriod ns in their valid bits (they
  // may wrap there).
  const uint64_t tickMask = timestampValidBits >= 64
                                ? ~uint64_t(0)
                                : (uint64_t(1) << timestampValidBits) - 1;
  for (unsigned repeat = 0; repeat < std::max(1u, spec.repeat); ++repeat) {
    if (repeat) {
      if (VkResult r = vkResetFences(device, 1, &fence)) {
        error = vkError("vkResetFences", r);
        return false;
      }
    }
    upload();
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands;
    if (VkResult r = vkQueueSubmit(queue, 1, &submit, fence)) {
      error = vkError("vkQueueSubmit", r);
      return false;
    }
    VkResult waited =
        vkWaitForFences(device, 1, &fence, VK_TRUE,
                        uint64_t(spec.timeoutSeconds) * 1000000000ull);
    if (waited == VK_TIMEOUT) {
      error = "kernel '" + spec.kernel->name + "' did not finish within " +
              std::to_string(spec.timeoutSeconds) + " s";
      return false;
    }
    if (waited != VK_SUCCESS) {
      error = vkError("vkWaitForFences", waited);
      return false;
    }
    if (queries) {
      uint64_t ticks[2] = {};
      if (VkResult r = vkGetQueryPoolResults(
              device, queries, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT)) {
        error = vkError("vkGetQueryPoolResults", r);
        return false;
      }
      uint64_t elapsed = (ticks[1] - ticks[0]) & tickMask;
      spec.timing->kernelNs.push_back(double(elapsed) * limits.timestampPeriod);
    }
  }

  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < bindings.size(); ++i) {
    if (bindings[i].kind != "buffer")
      continue;
    NpyArray &array = params[bindings[i].param].buffer;
    if (params[bindings[i].param].info->element == "index")
      widenIndexBuffer(mapped[i], array);
    else
      std::memcpy(array.data.data(), mapped[i], array.data.size());
  }
  if (spec.timing)
    spec.timing->downloadNs = elapsedNs(start);
  return true;
}

} // namespace

std::unique_ptr<Device> nabla::runtime::createVulkanDevice(int index,
                                                           std::string &error) {
  auto device = std::make_unique<VulkanDevice>();
  if (!device->open(index, error))
    return nullptr;
  return device;
}
