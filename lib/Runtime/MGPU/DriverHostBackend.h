//===- DriverHostBackend.h - mgpu* on a CUDA-like driver API ----*- C++ -*-===//
//
// CUDA's driver API and HIP's module API have the same shape: modules,
// functions, streams, events, device pointers that are host-addressable
// under unified addressing. DriverCalls is that shape, implemented once per
// driver (CUDADriver.cpp, HIPDriver.cpp, each loading its library at run
// time so that builds need no GPU software), and createDriverHostBackend
// builds the HostBackend on top of it: launches and copies go to the
// program's streams as in upstream's runtime wrappers, and every wait polls
// with the timeout of HostBackend.h instead of blocking forever.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_LIB_RUNTIME_MGPU_DRIVERHOSTBACKEND_H
#define NABLA_LIB_RUNTIME_MGPU_DRIVERHOSTBACKEND_H

#include "HostBackend.h"

namespace nabla::mgpu {

/// One driver's calls; each returns the driver's status (0: success,
/// notReady(): a query found work pending).
class DriverCalls {
public:
  virtual ~DriverCalls();
  virtual const char *name() const = 0;
  /// Loads the library and opens device `index` (-1: the first); false
  /// with `error`.
  virtual bool open(int index, std::string &error) = 0;
  /// Makes the device current on the calling thread.
  virtual int makeCurrent() = 0;
  virtual int notReady() const = 0;
  virtual std::string describe(const char *what, int status) = 0;

  virtual int loadModule(void **module, const void *data) = 0;
  virtual int unloadModule(void *module) = 0;
  virtual int getFunction(void **function, void *module, const char *name) = 0;
  virtual int launch(void *function, LaunchSize grid, LaunchSize block,
                     uint32_t sharedMemoryBytes, void *stream,
                     void **params) = 0;
  virtual int createStream(void **stream) = 0;
  virtual int destroyStream(void *stream) = 0;
  virtual int queryStream(void *stream) = 0;
  virtual int waitEvent(void *stream, void *event) = 0;
  virtual int createEvent(void **event) = 0;
  virtual int destroyEvent(void *event) = 0;
  virtual int recordEvent(void *event, void *stream) = 0;
  virtual int queryEvent(void *event) = 0;
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
};

std::unique_ptr<DriverCalls> createCUDADriverCalls();
std::unique_ptr<DriverCalls> createHIPDriverCalls();

/// The mgpu* back end on `calls`.
std::unique_ptr<HostBackend>
createDriverHostBackend(std::unique_ptr<DriverCalls> calls);

} // namespace nabla::mgpu

#endif // NABLA_LIB_RUNTIME_MGPU_DRIVERHOSTBACKEND_H
