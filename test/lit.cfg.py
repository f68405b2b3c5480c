# -*- Python -*-
#===- lit.cfg.py - Nabla's lit configuration -----------------------------===#
#
# Runs every .mlir test under test/ with Nabla's tools first on PATH, then the
# LLVM 22 tools (FileCheck, not, split-file).
#
#===----------------------------------------------------------------------===#

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Nabla"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.nabla_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%nabla_src_root", config.nabla_src_root))
config.substitutions.append(
    ("%expect_exit",
     "/usr/bin/python3 " + os.path.join(config.nabla_src_root, "test", "Inputs",
                                        "expect_exit.py")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.nabla_tools_dir, append_path=True)

# The kernel cache is off unless a test turns it on (env -u NABLA_NO_CACHE
# with its own NABLA_CACHE_DIR): tests neither write the user's cache nor
# depend on what an earlier run left in it.
config.environment["NABLA_NO_CACHE"] = "1"

tool_dirs = [config.nabla_tools_dir, config.llvm_tools_dir]
tools = ["nabla-opt", "nabla-test-opt", "nabla-compile"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Host programs (test/Integration/host): the mgpu* wrappers and MLIR's runner
# libraries for mlir-runner --shared-libs.
config.substitutions.append(
    ("%nabla_mgpu", os.path.join(config.nabla_obj_root, "lib",
                                 "libnabla_mgpu.so")))
for runtime in ["mlir_runner_utils", "mlir_c_runner_utils",
                "mlir_async_runtime"]:
    config.substitutions.append(
        ("%" + runtime, os.path.join(config.llvm_lib_dir,
                                     "lib" + runtime + ".so")))

# A sanitized build (scripts/sanitize.sh): mlir-runner is not instrumented,
# so the ASan runtime is preloaded for it to load the instrumented
# libnabla_mgpu (Python's interpreter is handled the same way).
if config.asan_runtime:
    config.substitutions.append(
        (r"(?<![\w-])mlir-runner(?![\w-])",
         "env LD_PRELOAD=" + config.asan_runtime +
         " ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 mlir-runner"))

# Validators of the produced artifacts.
config.substitutions.append(("spirv-val", config.spirv_val))
if config.ptxas and not config.ptxas.endswith("NOTFOUND"):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
