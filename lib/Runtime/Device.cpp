//===- Device.cpp - What every device shares ------------------------------===//
//
// Opening a device by back-end name, the kernel ABI's element sizes, and the
// defaults of the Device interface.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Device.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace nabla::runtime;

Device::~Device() = default;

struct UninterruptibleCallGuard::State {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  std::thread watcher;
};

UninterruptibleCallGuard::UninterruptibleCallGuard(const Device &device,
                                                   std::string what) {
  if (!device.endsProcessOnTimeout())
    return;
  state = std::make_unique<State>();
  unsigned seconds = device.timeout();
  State *s = state.get();
  s->watcher = std::thread([s, seconds, what = std::move(what)] {
    std::unique_lock<std::mutex> lock(s->mutex);
    if (s->done.wait_for(lock, std::chrono::seconds(seconds),
                         [s] { return s->finished; }))
      return;
    endProcessAfterTimeout(what + " did not finish within " +
                           std::to_string(seconds) +
                           " s (the --timeout; the driver cannot be "
                           "interrupted there)");
  });
}

void nabla::runtime::endProcessAfterTimeout(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  _exit(1);
}

UninterruptibleCallGuard::~UninterruptibleCallGuard() {
  if (!state)
    return;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->finished = true;
  }
  state->done.notify_all();
  state->watcher.join();
}

Error Device::adoptExternalBuffer(uint64_t, uint64_t, uint64_t) {
  return makeError("the " + info().backend +
                   " back end takes host data only (device memory is passed "
                   "in place to CUDA launches)");
}

Expected<std::unique_ptr<Device>>
nabla::runtime::openDevice(const std::string &backend, int index) {
  if (backend == "vulkan")
    return openVulkanDevice(index);
  if (backend == "cuda")
    return openCUDADevice(index);
  if (backend == "hip")
    return openHIPDevice(index);
  return makeError("unknown target '" + backend +
                   "' (expected vulkan, cuda or hip)");
}

std::unique_ptr<Device> nabla::runtime::openDevice(const std::string &target,
                                                   int index,
                                                   std::string &error) {
  if (index < 0)
    if (const char *env = std::getenv("NABLA_DEVICE"))
      index = std::atoi(env);
  Expected<std::unique_ptr<Device>> device = openDevice(target, index);
  if (!device) {
    error = device.takeError().message();
    return nullptr;
  }
  return std::move(*device);
}

bool KernelParam::hasSizeBindings() const {
  if (!buffer || strided || shape.size() < 2)
    return false;
  for (int64_t extent : shape)
    if (extent < 0)
      return true;
  return false;
}

unsigned nabla::runtime::hostElementBytes(const std::string &type) {
  if (type == "index")
    return 8;
  if (type == "bf16")
    return 2;
  if (type.size() >= 2 && (type[0] == 'i' || type[0] == 'f')) {
    unsigned bits = 0;
    for (size_t k = 1; k < type.size(); ++k) {
      if (type[k] < '0' || type[k] > '9' || bits > 1024)
        return 0;
      bits = bits * 10 + (type[k] - '0');
    }
    if (bits == 0 || (type[0] == 'f' && bits != 16 && bits != 32 && bits != 64))
      return 0;
    return (bits + 7) / 8;
  }
  return 0;
}

unsigned nabla::runtime::deviceElementBytes(const std::string &type) {
  return type == "index" ? 4 : hostElementBytes(type);
}

int64_t nabla::runtime::loopIterationLimit(const std::string &name) {
  return name.find("llvmpipe") != std::string::npos ? 65535 : 0;
}
