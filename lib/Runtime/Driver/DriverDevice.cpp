//===- DriverDevice.cpp - The Device of CUDA and HIP ----------------------===//
//
// One implementation for both drivers, on their DriverCalls: each method is
// the driver's call on the caller's stream, like upstream's runtime
// wrappers, with the device current on the calling thread, every status
// turned into an Error with the driver's message, and every wait a poll
// that gives up after the device's timeout instead of blocking forever.
//
// A timed launch records two timing events around the kernel on its stream
// and waits for the second; their elapsed time is the kernel's.
//
//===----------------------------------------------------------------------===//

#include "DriverCalls.h"

#include <chrono>
#include <cmath>
#include <thread>

using namespace nabla::runtime;

DriverCalls::~DriverCalls() = default;

bool nabla::runtime::checkDeviceIndex(const std::string &api, int index,
                                      int count, std::string &error) {
  if (count <= 0)
    error = "no " + api + " device";
  else if (index >= count)
    error = api + " device " + std::to_string(index) + " does not exist (" +
            std::to_string(count) + " devices)";
  else
    return true;
  return false;
}

namespace {

class DriverDevice final : public Device {
public:
  explicit DriverDevice(std::unique_ptr<DriverCalls> calls)
      : calls(std::move(calls)) {}

  Error open(int index) {
    info_.backend = calls->name();
    info_.dynamicSharedMemoryAtLaunch = true;
    std::string error;
    if (!calls->open(index, info_, error))
      return makeError(error);
    return Error::success();
  }

  const DeviceInfo &info() const override { return info_; }

  Expected<void *> loadModule(const ModuleImage &image) override {
    void *module = nullptr;
    if (Error e = check(driver().loadModule(&module, image.data),
                        "loading a GPU module"))
      return std::move(e).withContext(
          info_.backend == "hip"
              ? "was it compiled for " + info_.chip + "? (set NABLA_HIP_CHIP)"
              : "was it compiled for " + info_.chip + "?");
    return module;
  }
  Error unloadModule(void *module) override {
    return check(driver().unloadModule(module), "unloading a GPU module");
  }
  Expected<void *> getFunction(void *module, const std::string &name) override {
    void *function = nullptr;
    if (Error e = check(driver().getFunction(&function, module, name.c_str()),
                        ("looking up kernel '" + name + "'").c_str()))
      return std::move(e);
    return function;
  }
  Expected<GlobalSymbol> getGlobal(void *module,
                                   const std::string &symbol) override {
    GlobalSymbol global;
    if (Error e = check(driver().getGlobal(&global.address, &global.bytes,
                                           module, symbol.c_str()),
                        ("looking up @" + symbol).c_str()))
      return std::move(e);
    return global;
  }

  Error launch(void *function, const LaunchConfig &config, void **args,
               size_t) override {
    DriverCalls &d = driver();
    void *events[2] = {nullptr, nullptr};
    auto release = [&] {
      for (void *event : events)
        if (event)
          (void)d.destroyEvent(event);
    };
    if (config.kernelNs)
      for (void *&event : events)
        if (Error e = check(d.createEvent(&event, /*timing=*/true),
                            "creating a timing event")) {
          release();
          return e;
        }
    Error launched = Error::success();
    if (config.kernelNs)
      launched =
          check(d.recordEvent(events[0], config.stream), "recording an event");
    if (!launched)
      launched = check(d.launch(function, config.grid, config.block,
                                config.sharedMemoryBytes, config.stream, args),
                       "launching a kernel");
    if (!launched && config.kernelNs) {
      launched =
          check(d.recordEvent(events[1], config.stream), "recording an event");
      if (!launched)
        launched = synchronize(config.stream);
      float milliseconds = 0;
      if (!launched)
        launched = check(d.elapsedTime(&milliseconds, events[0], events[1]),
                         "reading the kernel's time");
      // Whole nanoseconds: the float milliseconds carry about 7 digits.
      if (!launched)
        *config.kernelNs = std::round(double(milliseconds) * 1e6);
    }
    release();
    return launched;
  }

  Expected<void *> createStream() override {
    void *stream = nullptr;
    if (Error e = check(driver().createStream(&stream), "creating a stream"))
      return std::move(e);
    return stream;
  }
  Error destroyStream(void *stream) override {
    return check(driver().destroyStream(stream), "destroying a stream");
  }
  Error synchronize(void *stream) override {
    return poll([&] { return calls->queryStream(stream); }, "a stream");
  }
  Error waitEvent(void *stream, void *event) override {
    return check(driver().waitEvent(stream, event), "waiting for an event");
  }
  Expected<void *> createEvent() override {
    void *event = nullptr;
    if (Error e = check(driver().createEvent(&event, /*timing=*/false),
                        "creating an event"))
      return std::move(e);
    return event;
  }
  Error destroyEvent(void *event) override {
    return check(driver().destroyEvent(event), "destroying an event");
  }
  Error synchronizeEvent(void *event) override {
    return poll([&] { return calls->queryEvent(event); }, "an event");
  }
  Error recordEvent(void *event, void *stream) override {
    return check(driver().recordEvent(event, stream), "recording an event");
  }

  Expected<void *> allocate(uint64_t bytes, void *, bool hostShared) override {
    // Allocations are synchronous in the driver; the stream's earlier work
    // need not finish first.
    void *pointer = nullptr;
    if (Error e =
            check(driver().allocate(&pointer, bytes ? bytes : 1, hostShared),
                  ("allocating " + std::to_string(bytes) + " bytes").c_str()))
      return std::move(e);
    return pointer;
  }
  Error free(void *pointer, void *stream) override {
    if (stream)
      if (Error e = synchronize(stream))
        return e;
    return check(driver().free(pointer), "freeing device memory");
  }
  Error copy(void *destination, const void *source, size_t bytes,
             void *stream) override {
    return check(driver().copy(destination, source, bytes, stream),
                 "copying memory");
  }
  Error fill(void *destination, uint32_t value, unsigned width, size_t count,
             void *stream) override {
    int status = width == 4 ? driver().fill32(destination, value, count, stream)
                            : driver().fill16(destination, uint16_t(value),
                                              count, stream);
    return check(status, "setting memory");
  }
  Error registerHostMemory(void *pointer, uint64_t bytes) override {
    if (!bytes)
      return Error::success();
    return check(driver().registerHost(pointer, bytes),
                 "registering host memory");
  }
  Error unregisterHostMemory(void *pointer) override {
    return check(driver().unregisterHost(pointer), "unregistering host memory");
  }

  Error adoptExternalBuffer(uint64_t pointer, uint64_t bytes,
                            uint64_t stream) override {
    if (!calls->queriesPointers())
      return Device::adoptExternalBuffer(pointer, bytes, stream);
    DriverCalls &d = driver();
    std::string what = "device pointer " + std::to_string(pointer);
    int owner = -1;
    uint64_t start = 0;
    size_t size = 0;
    if (int r = d.pointerRange(pointer, &owner, &start, &size))
      return makeError(
          d.describe(("cuPointerGetAttribute of " + what).c_str(), r) +
          ": not CUDA memory");
    if (owner != d.ordinal())
      return makeError(what + " lives on CUDA device " + std::to_string(owner) +
                       ", the launch runs on device " +
                       std::to_string(d.ordinal()));
    if (pointer - start > size || bytes > size - (pointer - start))
      return makeError(what + ": " + std::to_string(bytes) +
                       " bytes do not fit in its allocation of " +
                       std::to_string(size) + " bytes at " +
                       std::to_string(start));
    if (!stream)
      return Error::success();
    return synchronize(reinterpret_cast<void *>(stream))
        .withContext("the producer's stream of " + what);
  }

private:
  std::unique_ptr<DriverCalls> calls;
  DeviceInfo info_;

  /// The driver, current on this thread (a failure shows in the next call).
  DriverCalls &driver() {
    (void)calls->makeCurrent();
    return *calls;
  }

  Error check(int status, const char *what) {
    if (status == 0)
      return Error::success();
    return makeError(calls->describe(what, status));
  }

  /// Polls `query` until it stops reporting pending work, up to the timeout.
  template <typename Query> Error poll(Query query, const char *what) {
    driver();
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(timeout());
    int status;
    while ((status = query()) == calls->notReady()) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::string message = std::string("the device did not finish the "
                                          "work of ") +
                              what + " within " + std::to_string(timeout()) +
                              " s";
        if (endsProcessOnTimeout())
          endProcessAfterTimeout(message);
        return makeError(message);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return check(status, (std::string("waiting for ") + what).c_str());
  }
};

} // namespace

Expected<std::unique_ptr<Device>>
nabla::runtime::openDriverDevice(std::unique_ptr<DriverCalls> calls,
                                 int index) {
  auto device = std::make_unique<DriverDevice>(std::move(calls));
  if (Error e = device->open(index))
    return std::move(e);
  return std::unique_ptr<Device>(std::move(device));
}

Expected<std::unique_ptr<Device>> nabla::runtime::openCUDADevice(int index) {
  return openDriverDevice(createCUDADriverCalls(), index);
}

Expected<std::unique_ptr<Device>> nabla::runtime::openHIPDevice(int index) {
  return openDriverDevice(createHIPDriverCalls(), index);
}
