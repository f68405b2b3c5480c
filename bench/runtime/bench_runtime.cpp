//===- bench_runtime.cpp - Launch latency and copy bandwidth --------------===//
//
// bench_runtime DIR [--target=vulkan|cuda] [--repeat=N] [--mib=M]
// DIR is a nabla-compile output of bench/runtime/kernels.mlir. Measures, in
// one run and interleaved: the launch-plus-sync latency of the empty kernel,
// next to a host call of a trivial function (the floor), and the copy
// kernel's effective bandwidth next to host memcpy of the same bytes.
// Prints medians and both ratios. A Device::launch includes everything a
// nabla-run launch does per call (buffers, pipeline, copies in and out).
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Device.h"
#include "nabla/Runtime/KernelLaunch.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace nabla::runtime;
using Clock = std::chrono::steady_clock;

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_runtime DIR [--target=T] [--repeat=N] "
                         "[--mib=M]\n");
    return 2;
  }
  std::string dir = argv[1], target = "vulkan";
  int repeat = 15, mib = 32;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--target=", 0) == 0)
      target = a.substr(9);
    else if (a.rfind("--repeat=", 0) == 0)
      repeat = std::atoi(a.c_str() + 9);
    else if (a.rfind("--mib=", 0) == 0)
      mib = std::atoi(a.c_str() + 6);
  }
  std::ifstream in(dir + "/manifest.json");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  Manifest manifest;
  std::string error;
  if (!parseManifest(text, manifest, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::string ext = target == "vulkan" ? "spv" : "cubin";
  std::ifstream objectFile(dir + "/kernels." + ext, std::ios::binary);
  std::vector<uint8_t> image((std::istreambuf_iterator<char>(objectFile)),
                             std::istreambuf_iterator<char>());
  std::unique_ptr<Device> device = openDevice(target, -1, error);
  if (!device) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  const KernelInfo *empty = manifest.findKernel("empty");
  const KernelInfo *copy = manifest.findKernel("copy");
  if (!empty || !copy || image.empty()) {
    std::fprintf(stderr, "error: %s lacks the benchmark kernels\n",
                 dir.c_str());
    return 1;
  }
  uint32_t block = empty->workgroupSize ? (*empty->workgroupSize)[0] : 256;

  // Parameters.
  int64_t n = int64_t(mib) * 1024 * 1024 / 4;
  std::vector<HostParam> emptyParams(1), copyParams(3);
  emptyParams[0].info = &empty->params[0];
  emptyParams[0].buffer = {"f4", {1}, std::vector<uint8_t>(4)};
  copyParams[0].info = &copy->params[0];
  copyParams[0].buffer = {"f4", {n}, std::vector<uint8_t>(n * 4, 1)};
  copyParams[1].info = &copy->params[1];
  copyParams[1].buffer = {"f4", {n}, std::vector<uint8_t>(n * 4)};
  copyParams[2].info = &copy->params[2];
  copyParams[2].scalarBytes = 8;
  std::memcpy(copyParams[2].scalar, &n, 8);

  LaunchSpec emptySpec{empty, {1, 1, 1}, {block, 1, 1}, &image, ext};
  LaunchSpec copySpec{copy,
                      {uint32_t((n + block - 1) / block), 1, 1},
                      {block, 1, 1},
                      &image,
                      ext};

  volatile int sink = 0;
  auto trivial = [&] { sink = sink + 1; };
  std::vector<double> launchTimes, callTimes, copyTimes, memcpyTimes;
  std::vector<uint8_t> hostDst(n * 4);
  for (int r = 0; r < repeat; ++r) {
    auto t0 = Clock::now();
    if (Error e = launchKernel(*device, emptySpec, emptyParams)) {
      std::fprintf(stderr, "error: %s\n", e.message().c_str());
      return 1;
    }
    auto t1 = Clock::now();
    trivial();
    auto t2 = Clock::now();
    if (Error e = launchKernel(*device, copySpec, copyParams)) {
      std::fprintf(stderr, "error: %s\n", e.message().c_str());
      return 1;
    }
    auto t3 = Clock::now();
    std::memcpy(hostDst.data(), copyParams[0].buffer.data.data(), n * 4);
    auto t4 = Clock::now();
    launchTimes.push_back(std::chrono::duration<double>(t1 - t0).count());
    callTimes.push_back(std::chrono::duration<double>(t2 - t1).count());
    copyTimes.push_back(std::chrono::duration<double>(t3 - t2).count());
    memcpyTimes.push_back(std::chrono::duration<double>(t4 - t3).count());
  }
  if (copyParams[1].buffer.data != copyParams[0].buffer.data) {
    std::fprintf(stderr, "error: the copy kernel produced wrong data\n");
    return 1;
  }
  double launch = median(launchTimes), call = median(callTimes);
  double copyTime = median(copyTimes), hostCopy = median(memcpyTimes);
  double bytes = double(n) * 4;
  std::printf("device: %s (%s), %d repetitions, medians\n",
              device->info().name.c_str(), target.c_str(), repeat);
  std::printf("empty kernel launch+sync: %10.1f us   host call: %8.3f us   "
              "ratio %.0fx\n",
              launch * 1e6, call * 1e6, launch / std::max(call, 1e-9));
  std::printf("copy %d MiB: kernel %8.2f GB/s (%.1f ms, incl. transfers)   "
              "host memcpy %8.2f GB/s   ratio %.2f\n",
              mib, bytes / copyTime / 1e9, copyTime * 1e3,
              bytes / hostCopy / 1e9, copyTime / hostCopy);
  return 0;
}
