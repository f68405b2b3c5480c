//===- VulkanLaunch.cpp - Launch a kernel on the Vulkan device ------------===//
//
// The flat LLVM arguments become descriptor bindings (binding k is parameter
// k, then the size bindings, then the module globals' buffers, then the
// printf buffer; see VulkanDevice.cpp
// for the memory model), the dispatch is recorded with timestamps when the
// launch is timed, submitted and waited for, and staged arguments are copied
// back.
//
//===----------------------------------------------------------------------===//

#include "VulkanDevice.h"

#include <algorithm>
#include <iostream>

using namespace nabla::runtime;
using namespace nabla::runtime::vulkan;

namespace {

std::string text(Dim3 size) {
  return std::to_string(size.x) + "," + std::to_string(size.y) + "," +
         std::to_string(size.z);
}

/// Copies a memref view's elements to (toDevice) or from a packed device
/// buffer, converting index elements between 64 and 32 bits.
Error transfer(const MemRefView &view, const std::string &type, uint8_t *device,
               bool toDevice, const std::string &what) {
  int64_t total = view.count();
  if (total <= 0)
    return Error::success();
  unsigned hostBytes = hostElementBytes(type);
  unsigned deviceBytes = deviceElementBytes(type);
  if (view.contiguous() && hostBytes == deviceBytes) {
    if (toDevice)
      std::memcpy(device, view.start, total * hostBytes);
    else
      std::memcpy(view.start, device, total * hostBytes);
    return Error::success();
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
          return makeError("element " + std::to_string(linear) + " (" +
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
  return Error::success();
}

} // namespace

Error VulkanDevice::checkLaunchSize(const Function &function, Dim3 grid,
                                    Dim3 block) {
  const VkPhysicalDeviceLimits &limits = vk->properties.limits;
  if (block.x > limits.maxComputeWorkGroupSize[0] ||
      block.y > limits.maxComputeWorkGroupSize[1] ||
      block.z > limits.maxComputeWorkGroupSize[2] ||
      block.product() > limits.maxComputeWorkGroupInvocations)
    return makeError("kernel '" + function.name + "' launched with blocks of " +
                     text(block) + " threads, more than '" + vk->deviceName() +
                     "' allows (at most " +
                     std::to_string(limits.maxComputeWorkGroupInvocations) +
                     " threads, " +
                     std::to_string(limits.maxComputeWorkGroupSize[0]) + "," +
                     std::to_string(limits.maxComputeWorkGroupSize[1]) + "," +
                     std::to_string(limits.maxComputeWorkGroupSize[2]) + ")");
  if (grid.x > limits.maxComputeWorkGroupCount[0] ||
      grid.y > limits.maxComputeWorkGroupCount[1] ||
      grid.z > limits.maxComputeWorkGroupCount[2])
    return makeError("kernel '" + function.name + "' launched with a grid of " +
                     text(grid) + " blocks, more than '" + vk->deviceName() +
                     "' allows");
  const EntryPoint &entry = *function.entry;
  if (entry.localSize) {
    const std::array<uint32_t, 3> &size = *entry.localSize;
    if (size[0] != block.x || size[1] != block.y || size[2] != block.z)
      return makeError("kernel '" + function.name +
                       "' was compiled for blocks of " +
                       std::to_string(size[0]) + "," + std::to_string(size[1]) +
                       "," + std::to_string(size[2]) +
                       " threads but launched with " + text(block));
  } else if (!entry.sizeSpecIds) {
    return makeError("kernel '" + function.name +
                     "' has no workgroup size (neither LocalSize nor a "
                     "WorkgroupSize built-in)");
  }
  return Error::success();
}

/// Removes the loop-limit reports (runtime::kLoopLimitReport lines) from
/// `printed`; returns the first, without its prefix ("" when none).
static std::string takeLoopLimitReports(std::string &printed) {
  const std::string prefix = kLoopLimitReport;
  std::string kept, first;
  size_t at = 0;
  while (at < printed.size()) {
    size_t end = printed.find('\n', at);
    end = end == std::string::npos ? printed.size() : end + 1;
    std::string line = printed.substr(at, end - at);
    if (line.compare(0, prefix.size(), prefix) != 0) {
      kept += line;
    } else if (first.empty()) {
      first = line.substr(prefix.size());
      while (!first.empty() && (first.back() == '\n' || first.back() == ' '))
        first.pop_back();
    }
    at = end;
  }
  printed = std::move(kept);
  return first;
}

Error VulkanDevice::bindArguments(const Function &function, void **args,
                                  std::vector<VkDescriptorBufferInfo> &bindings,
                                  std::vector<StagingBuffer> &staged) {
  std::vector<int32_t> sizeValues;
  const VkDeviceSize alignment =
      vk->properties.limits.minStorageBufferOffsetAlignment;
  auto stage = [&](uint64_t bytes) -> Expected<StagingBuffer *> {
    Expected<StagingBuffer> staging = createStaging(bytes);
    if (!staging)
      return staging.takeError();
    staged.push_back(*staging);
    bindings.push_back({staging->buffer, 0, VK_WHOLE_SIZE});
    return &staged.back();
  };
  size_t next = 0;
  for (unsigned index = 0; index < function.params->size(); ++index) {
    const KernelParam &param = (*function.params)[index];
    std::string what = "argument #" + std::to_string(index) + " of kernel '" +
                       function.name + "'";
    void **fields = args + next;
    next += param.llvmArgumentCount();
    unsigned deviceBytes = deviceElementBytes(param.type);
    if (!param.buffer) {
      Expected<StagingBuffer *> staging = stage(deviceBytes);
      if (!staging)
        return staging.takeError();
      if (param.type == "index") {
        int64_t wide;
        std::memcpy(&wide, fields[0], 8);
        if (wide < INT32_MIN || wide > INT32_MAX)
          return makeError(what + " (" + std::to_string(wide) +
                           ") does not fit the 32-bit SPIR-V index");
        int32_t narrow = static_cast<int32_t>(wide);
        std::memcpy((*staging)->mapped, &narrow, 4);
      } else {
        std::memcpy((*staging)->mapped, fields[0], deviceBytes);
      }
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
        return makeError(what + " has a negative size");
      view.sizes.push_back(size);
      view.strides.push_back(stride);
      if (param.hasSizeBindings() && param.shape[d] < 0) {
        if (size > INT32_MAX)
          return makeError(what + " has an extent that does not fit SPIR-V's "
                                  "32-bit index");
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
          // Whole 32-bit words: a kernel reaches the last of an odd number
          // of halves through the word holding it (SPIR-V's 16-bit
          // atomics), which the allocation's 16-byte rounding covers.
          VkDeviceSize range =
              std::min<VkDeviceSize>((bytes + 3) / 4 * 4,
                                     allocation->bytes - at);
          bindings.push_back({allocation->buffer, at, range});
          continue;
        }
      }
    }
    Expected<StagingBuffer *> staging = stage(bytes);
    if (!staging)
      return staging.takeError();
    (*staging)->copyBack = true;
    (*staging)->view = view;
    (*staging)->type = param.type;
    (*staging)->parameter = index;
    if (Error e = transfer(view, param.type, (*staging)->mapped,
                           /*toDevice=*/true, what))
      return e;
  }
  for (int32_t size : sizeValues) {
    Expected<StagingBuffer *> staging = stage(4);
    if (!staging)
      return staging.takeError();
    std::memcpy((*staging)->mapped, &size, 4);
  }
  // The module globals' buffers, the module's own.
  for (const Allocation *global : function.globals)
    bindings.push_back({global->buffer, 0, VK_WHOLE_SIZE});
  // The printf buffer: a zero counter, then room for the records.
  if (function.prints) {
    uint64_t bytes = (uint64_t(function.module->object.printfCapacity) + 1) * 4;
    Expected<StagingBuffer *> staging = stage(bytes);
    if (!staging)
      return staging.takeError();
    std::memset((*staging)->mapped, 0, bytes);
  }
  if (bindings.size() != function.bindingCount)
    return makeError("internal error: kernel '" + function.name + "' has " +
                     std::to_string(function.bindingCount) +
                     " bindings, the launch made " +
                     std::to_string(bindings.size()));
  return Error::success();
}

Error VulkanDevice::dispatch(const Function &function, VkPipeline pipeline,
                             VkDescriptorSet set, Dim3 grid, double *kernelNs) {
  VkCommandBufferAllocateInfo commandInfo{
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  commandInfo.commandPool = commandPool;
  commandInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  commandInfo.commandBufferCount = 1;
  VkCommandBuffer commands;
  if (Error e = check(
          vk->vkAllocateCommandBuffers(vk->device, &commandInfo, &commands),
          "vkAllocateCommandBuffers"))
    return e;
  Cleanup cleanup;
  cleanup.add([this, commands] {
    vk->vkFreeCommandBuffers(vk->device, commandPool, 1, &commands);
  });
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (Error e = check(vk->vkBeginCommandBuffer(commands, &begin),
                      "vkBeginCommandBuffer"))
    return e;
  vk->vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vk->vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                              function.pipelineLayout, 0, 1, &set, 0, nullptr);
  // The measured interval: from the start timestamp (top of pipe: the queue
  // is idle, nothing earlier in it runs) to the end timestamp (bottom of
  // pipe: written once every invocation of the dispatch has completed).
  if (kernelNs) {
    vk->vkCmdResetQueryPool(commands, timestamps, 0, 2);
    vk->vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                            timestamps, 0);
  }
  vk->vkCmdDispatch(commands, grid.x, grid.y, grid.z);
  if (kernelNs)
    vk->vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                            timestamps, 1);
  // The fence makes the kernel's writes available; this barrier makes them
  // visible to the host's reads after the wait.
  VkMemoryBarrier toHost{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  toHost.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk->vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &toHost, 0,
                           nullptr, 0, nullptr);
  if (Error e = check(vk->vkEndCommandBuffer(commands), "vkEndCommandBuffer"))
    return e;

  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  if (Error e =
          check(vk->vkResetFences(vk->device, 1, &fence), "vkResetFences"))
    return e;
  if (Error e = check(vk->vkQueueSubmit(vk->queue, 1, &submit, fence),
                      "vkQueueSubmit"))
    return e;
  VkResult waited = vk->vkWaitForFences(vk->device, 1, &fence, VK_TRUE,
                                        uint64_t(timeout()) * 1000000000ull);
  if (waited == VK_TIMEOUT) {
    std::string message = "kernel '" + function.name +
                          "' did not finish within " +
                          std::to_string(timeout()) + " s";
    // The device still runs (or compiles) it: releasing what the launch
    // holds would wait for it, then fail.
    if (endsProcessOnTimeout())
      endProcessAfterTimeout(message);
    return makeError(message);
  }
  if (Error e = check(waited, "vkWaitForFences"))
    return e;
  if (kernelNs) {
    uint64_t ticks[2] = {};
    if (Error e = check(vk->vkGetQueryPoolResults(
                            vk->device, timestamps, 0, 2, sizeof(ticks), ticks,
                            sizeof(uint64_t),
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                        "vkGetQueryPoolResults"))
      return e;
    // Timestamps count ticks of timestampPeriod ns in their valid bits (they
    // may wrap there).
    const uint64_t tickMask = vk->timestampValidBits >= 64
                                  ? ~uint64_t(0)
                                  : (uint64_t(1) << vk->timestampValidBits) - 1;
    uint64_t elapsed = (ticks[1] - ticks[0]) & tickMask;
    *kernelNs = double(elapsed) * vk->properties.limits.timestampPeriod;
  }
  return Error::success();
}

Error VulkanDevice::launch(void *handle, const LaunchConfig &config,
                           void **args, size_t count) {
  std::lock_guard<std::mutex> lock(mutex);
  auto *function = static_cast<Function *>(handle);
  if (!functions.count(function))
    return makeError("launching a function that no loaded module holds");
  if (!function->params)
    return makeError("kernel '" + function->name +
                     "' cannot be launched: its module carries no launch "
                     "description (compile the host program with a "
                     "nabla-to-spirv pipeline)");
  // Dynamic shared memory (config.sharedMemoryBytes) is compiled into a
  // Vulkan kernel: the size its host program's launches agree on, or the
  // pipelines' dynamic-shared-memory option (compilation checks they match).
  if (config.kernelNs && !timestamps)
    return makeError("Vulkan device '" + info_.name +
                     "' cannot time kernels: " + info_.timingProblem);
  size_t expected = 0;
  for (const KernelParam &param : *function->params)
    expected += param.llvmArgumentCount();
  if (expected != count)
    return makeError("kernel '" + function->name + "' takes " +
                     std::to_string(expected) +
                     " LLVM arguments, the launch "
                     "passed " +
                     std::to_string(count));
  if (Error e = checkLaunchSize(*function, config.grid, config.block))
    return e;
  if (Error e = prepare(*function))
    return e;

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
  // `staged` grows while bindings point into it: reserve it all first.
  staged.reserve(function->bindingCount);
  std::vector<VkDescriptorBufferInfo> bindings;
  if (Error e = bindArguments(*function, args, bindings, staged))
    return e;

  Expected<VkPipeline> pipeline =
      getPipeline(*function, {config.block.x, config.block.y, config.block.z});
  if (!pipeline)
    return pipeline.takeError();

  VkDescriptorPoolSize poolSize{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                std::max<uint32_t>(1, bindings.size())};
  VkDescriptorPoolCreateInfo poolInfo{
      VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  poolInfo.maxSets = 1;
  poolInfo.poolSizeCount = 1;
  poolInfo.pPoolSizes = &poolSize;
  VkDescriptorPool pool;
  if (Error e = check(
          vk->vkCreateDescriptorPool(vk->device, &poolInfo, nullptr, &pool),
          "vkCreateDescriptorPool"))
    return e;
  cleanup.add(
      [this, pool] { vk->vkDestroyDescriptorPool(vk->device, pool, nullptr); });
  VkDescriptorSetAllocateInfo setInfo{
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  setInfo.descriptorPool = pool;
  setInfo.descriptorSetCount = 1;
  setInfo.pSetLayouts = &function->setLayout;
  VkDescriptorSet set;
  if (Error e = check(vk->vkAllocateDescriptorSets(vk->device, &setInfo, &set),
                      "vkAllocateDescriptorSets"))
    return e;
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
  if (Error e =
          dispatch(*function, *pipeline, set, config.grid, config.kernelNs))
    return e;

  for (StagingBuffer &staging : staged)
    if (staging.copyBack)
      if (Error e = transfer(staging.view, staging.type, staging.mapped,
                             /*toDevice=*/false,
                             "argument #" + std::to_string(staging.parameter)))
        return e;
  if (function->prints) {
    const HostObject &object = function->module->object;
    const auto *words =
        reinterpret_cast<const uint32_t *>(staged.back().mapped);
    std::string printed =
        formatPrintfRecords(words, object.printfCapacity, object.printfFormats);
    // A thread that reached the device's loop-iteration limit
    // (nabla-detect-loop-limit): the device ended its loops early.
    std::string reached = takeLoopLimitReports(printed);
    std::cout << printed;
    std::cout.flush();
    if (!reached.empty() && loopIterationLimit(info_.name) > 0)
      return makeError(
          reached + ", and '" + info_.name +
          "' ends every loop of a thread once it has run " +
          std::to_string(loopIterationLimit(info_.name)) +
          " iterations in all (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS): the "
          "launch's results are wrong; give each thread less work (more "
          "threads, a smaller problem), or run on another device");
  }
  return checkValidation("the launch of kernel '" + function->name + "'");
}
