//===- DriverHostBackend.cpp - mgpu* on a CUDA-like driver API ------------===//
//
// The CUDA and HIP back ends of libnabla_mgpu.so: each mgpu* call becomes the
// driver's call on the program's stream, like upstream's runtime wrappers,
// with two differences: the device is opened on first use with a message
// (not an abort) when there is none, and synchronizations poll with a
// timeout.
//
//===----------------------------------------------------------------------===//

#include "DriverHostBackend.h"

#include <chrono>
#include <mutex>
#include <thread>

using namespace nabla::mgpu;

DriverCalls::~DriverCalls() = default;

namespace {

class DriverHostBackend final : public HostBackend {
public:
  explicit DriverHostBackend(std::unique_ptr<DriverCalls> calls)
      : calls(std::move(calls)) {}

  const char *name() const override { return calls->name(); }

  void *loadModule(const void *data, size_t) override {
    void *module = nullptr;
    check(driver().loadModule(&module, data), "loading a GPU module");
    return module;
  }
  void unloadModule(void *module) override {
    check(driver().unloadModule(module), "unloading a GPU module");
  }
  void *getFunction(void *module, const char *name) override {
    void *function = nullptr;
    check(driver().getFunction(&function, module, name),
          (std::string("looking up kernel '") + name + "'").c_str());
    return function;
  }
  void launch(void *function, LaunchSize grid, LaunchSize block,
              uint32_t sharedMemoryBytes, void *stream, void **params,
              size_t) override {
    check(driver().launch(function, grid, block, sharedMemoryBytes, stream,
                          params),
          "launching a kernel");
  }

  void *createStream() override {
    void *stream = nullptr;
    check(driver().createStream(&stream), "creating a stream");
    return stream;
  }
  void destroyStream(void *stream) override {
    check(driver().destroyStream(stream), "destroying a stream");
  }
  void synchronizeStream(void *stream) override {
    poll([&] { return calls->queryStream(stream); }, "a stream");
  }
  void waitEvent(void *stream, void *event) override {
    check(driver().waitEvent(stream, event), "waiting for an event");
  }
  void *createEvent() override {
    void *event = nullptr;
    check(driver().createEvent(&event), "creating an event");
    return event;
  }
  void destroyEvent(void *event) override {
    check(driver().destroyEvent(event), "destroying an event");
  }
  void synchronizeEvent(void *event) override {
    poll([&] { return calls->queryEvent(event); }, "an event");
  }
  void recordEvent(void *event, void *stream) override {
    check(driver().recordEvent(event, stream), "recording an event");
  }

  void *allocate(uint64_t bytes, void *stream, bool hostShared) override {
    // Allocations are synchronous in the driver; the stream's earlier work
    // need not finish first.
    (void)stream;
    void *pointer = nullptr;
    check(driver().allocate(&pointer, bytes ? bytes : 1, hostShared),
          ("allocating " + std::to_string(bytes) + " bytes").c_str());
    return pointer;
  }
  void free(void *pointer, void *stream) override {
    if (stream)
      synchronizeStream(stream);
    check(driver().free(pointer), "freeing device memory");
  }
  void copy(void *destination, const void *source, size_t bytes,
            void *stream) override {
    check(driver().copy(destination, source, bytes, stream), "copying memory");
  }
  void fill(void *destination, uint32_t value, unsigned width, size_t count,
            void *stream) override {
    int status = width == 4 ? driver().fill32(destination, value, count, stream)
                            : driver().fill16(destination, uint16_t(value),
                                              count, stream);
    check(status, "setting memory");
  }
  void registerHostMemory(void *pointer, uint64_t bytes) override {
    if (bytes)
      check(driver().registerHost(pointer, bytes), "registering host memory");
  }
  void unregisterHostMemory(void *pointer) override {
    check(driver().unregisterHost(pointer), "unregistering host memory");
  }
  void setDefaultDevice(int device) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (opened && device != deviceIndex)
      fatal("mgpuSetDefaultDevice(" + std::to_string(device) + ") after the " +
            calls->name() + " device was opened");
    deviceIndex = device;
  }

private:
  std::unique_ptr<DriverCalls> calls;
  std::mutex mutex;
  bool opened = false;
  int deviceIndex = -1;

  /// The driver, opened on first use and current on this thread.
  DriverCalls &driver() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!opened) {
        std::string error;
        if (!calls->open(deviceIndex, error))
          fatal(error);
        opened = true;
      }
    }
    check(calls->makeCurrent(), "making the device current");
    return *calls;
  }

  void check(int status, const char *what) {
    if (status != 0)
      fatal(calls->describe(what, status));
  }

  /// Polls `query` until it stops reporting pending work, up to the timeout.
  template <typename Query> void poll(Query query, const char *what) {
    driver();
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::seconds(timeoutSeconds());
    int status;
    while ((status = query()) == calls->notReady()) {
      if (std::chrono::steady_clock::now() > deadline)
        fatal(std::string("the device did not finish the work of ") + what +
              " within " + std::to_string(timeoutSeconds()) +
              " s (set $NABLA_TIMEOUT)");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    check(status, (std::string("waiting for ") + what).c_str());
  }
};

} // namespace

std::unique_ptr<HostBackend>
nabla::mgpu::createDriverHostBackend(std::unique_ptr<DriverCalls> calls) {
  return std::make_unique<DriverHostBackend>(std::move(calls));
}

std::unique_ptr<HostBackend> nabla::mgpu::createCUDAHostBackend() {
  return createDriverHostBackend(createCUDADriverCalls());
}

std::unique_ptr<HostBackend> nabla::mgpu::createHIPHostBackend() {
  return createDriverHostBackend(createHIPDriverCalls());
}
