//===- Pipelines.h - Nabla's named lowering pipelines -----------*- C++ -*-===//
//
// The `nabla-to-nvvm`, `nabla-to-rocdl`, `nabla-to-spirv` and `nabla-to-metal`
// pipelines: each takes target-neutral GPU modules to gpu.binary ops holding
// the target's objects. Options structs are shared with nabla-compile and the
// Python bindings.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_PIPELINES_PIPELINES_H
#define NABLA_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace nabla {

/// Options every pipeline takes.
template <typename Derived>
struct CommonPipelineOptions : public mlir::PassPipelineOptions<Derived> {
  mlir::detail::PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("Optimization level (0-3)"),
      llvm::cl::init(2)};
  mlir::detail::PassOptions::Option<std::string> abi{
      *this, "abi",
      llvm::cl::desc("Relocation convention: v1 (baked addresses) or v2 "
                     "(symbolic, relocated at load)"),
      llvm::cl::init("v2")};
  mlir::detail::PassOptions::Option<std::string> relocStrategy{
      *this, "reloc-strategy",
      llvm::cl::desc("reloc-lower strategy overriding the ABI's default "
                     "(v1: bake-or-materialize; v2: patch for nvvm/rocdl, "
                     "table for spirv/metal)")};
  mlir::detail::PassOptions::Option<bool> hostLowering{
      *this, "host-lowering",
      llvm::cl::desc("Also lower host code that uses the GPU to LLVM calling "
                     "the mgpu* API of libnabla_mgpu.so (a no-op for "
                     "kernel-only modules)"),
      llvm::cl::init(true)};
};

struct NablaToNVVMOptions : public CommonPipelineOptions<NablaToNVVMOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("SM architecture"),
                           llvm::cl::init("sm_80")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features; default: the lowest PTX version the chip "
                     "needs, e.g. +ptx78 for sm_90")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit (libdevice, ptxas); default $CUDA_PATH or "
                     "/usr/local/cuda")};
  Option<bool> cubin{*this, "cubin",
                     llvm::cl::desc("Also assemble a cubin with ptxas"),
                     llvm::cl::init(true)};
};

struct NablaToROCDLOptions : public CommonPipelineOptions<NablaToROCDLOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("AMDGPU architecture"),
                           llvm::cl::init("gfx90a")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("Directory with llvm/bin/ld.lld and amdgcn/bitcode; "
                     "default: the one Nabla's build made from lld-22 and "
                     "rocm-device-libs")};
  Option<bool> wave64{*this, "wave64", llvm::cl::desc("Use 64-wide wavefronts"),
                      llvm::cl::init(true)};
};

struct NablaToSPIRVOptions : public CommonPipelineOptions<NablaToSPIRVOptions> {
  ListOption<int64_t> workgroupSize{
      *this, "workgroup-size",
      llvm::cl::desc("Workgroup size x[,y[,z]] (the launch's block size) of "
                     "kernels without known_block_size")};
  Option<unsigned> subgroupSize{
      *this, "subgroup-size",
      llvm::cl::desc("Subgroup size of the device (nabla-run passes the "
                     "device's)"),
      llvm::cl::init(32)};
  Option<bool> emulateFloatAtomics{
      *this, "emulate-float-atomics",
      llvm::cl::desc("Float atomic add as a compare-exchange loop, for "
                     "devices without VK_EXT_shader_atomic_float"),
      llvm::cl::init(false)};
  Option<int64_t> dynamicSharedMemory{
      *this, "dynamic-shared-memory",
      llvm::cl::desc("Bytes of dynamic shared memory (extern __shared__) the "
                     "kernels are launched with, compiled in; -1: not given"),
      llvm::cl::init(-1)};
  Option<int64_t> loopLimit{
      *this, "loop-limit",
      llvm::cl::desc("Report a thread that runs this many loop iterations, "
                     "where the device ends its loops (lavapipe: 65535; "
                     "nabla-run and Python pass it); 0: no check"),
      llvm::cl::init(0)};
};

struct NablaToMetalOptions : public CommonPipelineOptions<NablaToMetalOptions> {
  ListOption<int64_t> workgroupSize{
      *this, "workgroup-size",
      llvm::cl::desc("Threadgroup size x[,y[,z]] of kernels without "
                     "known_block_size")};
  Option<unsigned> subgroupSize{*this, "subgroup-size",
                                llvm::cl::desc("SIMD-group size"),
                                llvm::cl::init(32)};
  Option<bool> emulateFloatAtomics{
      *this, "emulate-float-atomics",
      llvm::cl::desc("Float atomic add as a compare-exchange loop"),
      llvm::cl::init(false)};
  Option<int64_t> dynamicSharedMemory{
      *this, "dynamic-shared-memory",
      llvm::cl::desc("Bytes of threadgroup memory (extern __shared__) the "
                     "kernels are launched with, compiled in; -1: not given"),
      llvm::cl::init(-1)};
  Option<std::string> mslVersion{
      *this, "msl-version", llvm::cl::desc("Metal Shading Language version"),
      llvm::cl::init("3.0")};
};

void buildNablaToNVVMPipeline(mlir::OpPassManager &pm,
                              const NablaToNVVMOptions &options);
void buildNablaToROCDLPipeline(mlir::OpPassManager &pm,
                               const NablaToROCDLOptions &options);
void buildNablaToSPIRVPipeline(mlir::OpPassManager &pm,
                               const NablaToSPIRVOptions &options);
void buildNablaToMetalPipeline(mlir::OpPassManager &pm,
                               const NablaToMetalOptions &options);

/// Why a pipeline's options cannot be used, in the words of an error
/// message (the pipelines report it while they are built); empty when they
/// can. nabla-compile and the Python bindings check theirs with these too.
std::string checkPipelineOptions(const NablaToNVVMOptions &options);
std::string checkPipelineOptions(const NablaToROCDLOptions &options);
std::string checkPipelineOptions(const NablaToSPIRVOptions &options);
std::string checkPipelineOptions(const NablaToMetalOptions &options);

/// The reloc-lower strategy a pipeline for `target` ("nvvm", "rocdl",
/// "spirv", "metal") uses: `override` if set; for abi v1
/// "bake-or-materialize"; otherwise "patch" (nvvm, rocdl) or "table" (spirv,
/// metal).
std::string getRelocStrategy(llvm::StringRef target, llvm::StringRef abi,
                             llvm::StringRef override);

/// The passes every pipeline starts with: gpu-kernel-outlining,
/// nabla-annotate-launch-sizes and nabla-set-aside-host-code (host
/// programs), nabla-check-input,
/// nabla-validate, nabla-differentiate, reloc-link, reloc-lower with the
/// ABI's strategy, and the target check (which also rejects an unknown `abi`,
/// chip, a missing `toolkit` directory or a workgroup size out of range).
void addFrontendPasses(mlir::OpPassManager &pm, llvm::StringRef target,
                       llvm::StringRef chip, llvm::StringRef abi,
                       llvm::StringRef relocStrategy,
                       llvm::StringRef toolkit = "",
                       llvm::ArrayRef<int64_t> workgroupSize = {},
                       llvm::StringRef features = "");

/// The passes every pipeline ends with: nabla-restore-host-code and, if
/// `lowerHostCode`, nabla-lower-host-to-llvm for `target`.
void addHostPasses(mlir::OpPassManager &pm, llvm::StringRef target,
                   bool lowerHostCode);

/// The lowest PTX feature (e.g. "+ptx78") that supports `chip`.
std::string getDefaultPTXFeatures(llvm::StringRef chip);

/// The CUDA toolkit to use: `option` if set, else the first of $CUDA_PATH,
/// $CUDA_HOME, $CUDA_ROOT, /usr/local/cuda, /usr/lib/cuda holding
/// nvvm/libdevice; "" if none does.
std::string findCUDAToolkit(llvm::StringRef option);

/// The ROCm-layout toolkit directory Nabla's build assembled (ld.lld and
/// Debian's device bitcode), or "" if unknown.
std::string getDefaultROCmToolkit();

/// Registers the four pipelines with the global pass registry.
void registerNablaPipelines();

} // namespace nabla

#endif // NABLA_PIPELINES_PIPELINES_H
