#!/usr/bin/env bash
#===- install-deps.sh - Install every Debian package Nabla needs ----------===#
#
# Idempotent: packages already present are skipped by apt-get. Runs as root or
# through sudo. The list is the single source of truth for the project's
# system dependencies (see DEVELOPERS.md).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

PACKAGES=(
  # Build tools.
  cmake ninja-build g++ python3
  # LLVM/MLIR 22 (shared libMLIR/libLLVM, TableGen, lit tools, lld, clang).
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22 clang-22
  # Unit tests.
  libgtest-dev
  # GPU targets: AMD device libraries (ocml/ockl bitcode), SPIR-V validation
  # (spirv-val, libSPIRV-Tools), SPIRV-Cross for Metal Shading Language.
  rocm-device-libs spirv-tools libspirv-cross-c-shared-dev
  # Runtime: Vulkan headers and loader, Mesa's lavapipe (a Vulkan device on the
  # CPU, the default execution target without a GPU), and the Khronos
  # validation layer the tests run every launch under (NABLA_VULKAN_VALIDATION).
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
  # Runtime: manifest.json reader (header-only; nabla-launch links no LLVM).
  nlohmann-json3-dev
  # Integration tests compare against numpy references under pytest; the
  # Python package is built with pybind11 against Debian's python3.
  python3-numpy python3-pytest pybind11-dev python3-dev
  # Benchmark charts (bench/run.py writes PNGs with matplotlib).
  python3-matplotlib
  # nabla.torch (kernels as torch.autograd.Functions) and its tests; the
  # package imports without it.
  python3-torch
  # libFuzzer and the ASan/UBSan runtimes for clang-22 (scripts/fuzz.sh,
  # scripts/sanitize.sh, the CI fuzz replay).
  libclang-rt-22-dev
  # MPI for host programs across processes (upstream's mpi dialect lowered by
  # mpi-to-llvm): MPICH, whose ABI MLIR 22 supports and which runs as root
  # without extra flags (CI runs as root; OpenMPI refuses).
  mpich libmpich-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
