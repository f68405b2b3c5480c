//===- DriverCalls.h - CUDA's and HIP's driver calls, one table -*- C++ -*-===//
//
// CUDA's driver API and HIP's module API have the same shape: modules,
// functions, globals, streams, events, device pointers that are
// host-addressable under unified addressing. DriverCalls is that shape,
// declared once and implemented once per driver (CUDADriver.cpp,
// HIPDriver.cpp), each loading its library at run time so that builds need no
// GPU software. DriverDevice.cpp builds the one Device of both on top.
// Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_DRIVER_DRIVERCALLS_H
#define NABLA_LIB_RUNTIME_DRIVER_DRIVERCALLS_H

#include "nabla/Runtime/Device.h"

#include <cstddef>
#include <cstdint>
#include <dlfcn.h>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>

namespace nabla::runtime {

/// A driver's shared library, opened at run time, and its entry points.
class DriverLibrary {
public:
  /// Opens the first of `files` that the dynamic loader finds.
  bool open(std::initializer_list<const char *> files) {
    for (const char *file : files)
      if ((handle = dlopen(file, RTLD_NOW | RTLD_LOCAL)))
        return true;
    return false;
  }
  /// Fetches `symbol` into `fn`; a missing one is remembered.
  template <typename Fn> void get(Fn &fn, const char *symbol) {
    fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (!fn && missing.empty())
      missing = symbol;
  }
  /// True if every entry point was found; else false with `error` naming
  /// the first missing one.
  bool complete(const std::string &what, std::string &error) const {
    if (missing.empty())
      return true;
    error = what + " lacks " + missing;
    return false;
  }

private:
  void *handle = nullptr;
  std::string missing;
};

/// False with `error` when the driver reports no device, or none at
/// `index` (-1: the first).
bool checkDeviceIndex(const std::string &api, int index, int count,
                      std::string &error);

/// One driver's calls; each returns the driver's status (0: success,
/// notReady(): a query found work pending).
class DriverCalls {
public:
  virtual ~DriverCalls();
  /// "cuda" or "hip".
  virtual const char *name() const = 0;
  /// Loads the library and opens device `index` (-1: the first), filling
  /// `info`'s name, chip and limits; false with `error`.
  virtual bool open(int index, DeviceInfo &info, std::string &error) = 0;
  /// Makes the device current on the calling thread.
  virtual int makeCurrent() = 0;
  virtual int notReady() const = 0;
  /// "<driver>: <what> failed: <the driver's message>".
  virtual std::string describe(const char *what, int status) = 0;

  virtual int loadModule(void **module, const void *data) = 0;
  virtual int unloadModule(void *module) = 0;
  virtual int getFunction(void **function, void *module, const char *name) = 0;
  virtual int getGlobal(void **address, size_t *bytes, void *module,
                        const char *name) = 0;
  virtual int launch(void *function, Dim3 grid, Dim3 block,
                     uint32_t sharedMemoryBytes, void *stream,
                     void **params) = 0;
  virtual int createStream(void **stream) = 0;
  virtual int destroyStream(void *stream) = 0;
  virtual int queryStream(void *stream) = 0;
  virtual int waitEvent(void *stream, void *event) = 0;
  /// An event; `timing`: one elapsedTime can read.
  virtual int createEvent(void **event, bool timing) = 0;
  virtual int destroyEvent(void *event) = 0;
  virtual int recordEvent(void *event, void *stream) = 0;
  virtual int queryEvent(void *event) = 0;
  virtual int elapsedTime(float *milliseconds, void *start, void *stop) = 0;
  virtual int allocate(void **pointer, uint64_t bytes, bool managed) = 0;
  virtual int free(void *pointer) = 0;
  virtual int copy(void *destination, const void *source, size_t bytes,
                   void *stream) = 0;
  virtual int fill32(void *destination, uint32_t value, size_t count,
                     void *stream) = 0;
  virtual int fill16(void *destination, uint16_t value, size_t count,
                     void *stream) = 0;
  virtual int registerHost(void *pointer, uint64_t bytes) = 0;
  virtual int unregisterHost(void *pointer) = 0;

  /// Whether pointerRange works: a driver that cannot tell whose memory a
  /// pointer is takes no memory in place.
  virtual bool queriesPointers() const { return false; }
  /// The device ordinal owning `pointer` and its allocation's range.
  virtual int pointerRange(uint64_t pointer, int *ordinal, uint64_t *start,
                           size_t *bytes) {
    (void)pointer, (void)ordinal, (void)start, (void)bytes;
    return -1;
  }
  /// The ordinal of the open device.
  virtual int ordinal() const = 0;
};

std::unique_ptr<DriverCalls> createCUDADriverCalls();
std::unique_ptr<DriverCalls> createHIPDriverCalls();

/// The Device on `calls`, which opens device `index`.
Expected<std::unique_ptr<Device>>
openDriverDevice(std::unique_ptr<DriverCalls> calls, int index);

} // namespace nabla::runtime

#endif // NABLA_LIB_RUNTIME_DRIVER_DRIVERCALLS_H
