//===- HostProgram.h - nabla-run --entry: whole GPU programs ----*- C++ -*-===//
//
// `nabla-run FILE.mlir --entry=NAME` compiles a host program (host code plus
// kernels) with the target's nabla-to-* pipeline and runs function NAME in
// process with MLIR's ExecutionEngine, against libnabla_mgpu.so and MLIR's
// runner utilities, printing what the program prints.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_TOOLS_NABLA_RUN_HOSTPROGRAM_H
#define NABLA_TOOLS_NABLA_RUN_HOSTPROGRAM_H

namespace nabla {

/// True if the command line asks for a host program (`--entry=`).
bool isHostProgramRun(int argc, char **argv);

/// Runs the host program the command line names; returns the exit status
/// (0 success or the entry's i32 result, 1 compile or runtime error, 2
/// usage error).
int runHostProgram(int argc, char **argv);

} // namespace nabla

#endif // NABLA_TOOLS_NABLA_RUN_HOSTPROGRAM_H
