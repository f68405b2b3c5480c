//===- enzyme.h - Enzyme's gradient requests for CUDA and HIP source ------===//
//
// Device code asks for derivatives the way Enzyme users do: a call of
// __enzyme_autodiff (reverse mode) or __enzyme_fwddiff (forward mode) whose
// first argument is the function to differentiate, each following argument
// tagged by an activity marker. Nabla's LLVM IR raise (--nabla-raise-llvm,
// docs/Frontends.md) turns these calls into nabla.autodiff / nabla.fwddiff;
// the functions are declared here and never defined.
//
//   #include <enzyme.h>
//   __device__ void f(float *x, int n);
//   __global__ void grad_f(float *x, float *dx, int n) {
//     __enzyme_autodiff<void>((void *)f, enzyme_dup, x, dx, enzyme_const, n);
//   }
//
// Markers: enzyme_dup (a pointer followed by its shadow), enzyme_dupnoneed
// (the same, the primal result not needed), enzyme_const (not
// differentiated), enzyme_out (an active scalar whose gradient the call
// returns). Without a marker: pointers are dup, floating-point scalars are
// active (reverse) or dup with a tangent following (forward), the rest const.
//
// Written from Enzyme's documented C/C++ interface (https://enzyme.mit.edu);
// nabla.cuda and `nabla-run FILE.cu` put this folder on clang's include path,
// other builds add -I<prefix>/share/nabla/include.
//
//===----------------------------------------------------------------------===//

#ifndef NABLA_ENZYME_H
#define NABLA_ENZYME_H

// The attribute the CUDA and HIP headers spell __device__, written out so
// that sources compiled with -nogpuinc (HIP without ROCm) can use it too.
#if defined(__CUDA__) || defined(__HIP__)
#define NABLA_ENZYME_DEVICE __attribute__((device))
#else
#define NABLA_ENZYME_DEVICE
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Activity markers: the raise reads which global a call argument loads.
extern NABLA_ENZYME_DEVICE int enzyme_dup;
extern NABLA_ENZYME_DEVICE int enzyme_dupnoneed;
extern NABLA_ENZYME_DEVICE int enzyme_const;
extern NABLA_ENZYME_DEVICE int enzyme_out;
/// Split mode's markers: enzyme_allocated SIZE, enzyme_tape POINTER (the
/// caller's tape of SIZE bytes), enzyme_nofree.
extern NABLA_ENZYME_DEVICE int enzyme_allocated;
extern NABLA_ENZYME_DEVICE int enzyme_tape;
extern NABLA_ENZYME_DEVICE int enzyme_nofree;

#ifdef __cplusplus
}

/// Reverse mode: the shadows of enzyme_dup pointers hold the cotangent of the
/// final state on entry and are incremented by that of the initial state;
/// returns the gradient of the enzyme_out scalar (a struct of them when
/// there are several), else nothing (Ret = void).
template <typename Ret = void, typename... Args>
NABLA_ENZYME_DEVICE Ret __enzyme_autodiff(void *function, Args... args);

/// Forward mode: every enzyme_dup argument is followed by its tangent (a
/// pointer's shadow holds the tangent of its memory and receives that of
/// the final state); returns the tangent of the function's result.
template <typename Ret = void, typename... Args>
NABLA_ENZYME_DEVICE Ret __enzyme_fwddiff(void *function, Args... args);

/// Split mode (reverse mode in two calls, the function returning void):
///   size_t bytes = __enzyme_augmentsize((void *)f, enzyme_dup, enzyme_const);
///   __enzyme_augmentfwd((void *)f, enzyme_allocated, bytes, enzyme_tape,
///                       tape, enzyme_dup, x, dx, enzyme_const, n);
///   ... later, with the same arguments and tape ...
///   __enzyme_reverse((void *)f, enzyme_allocated, bytes, enzyme_tape, tape,
///                    enzyme_dup, x, dx, enzyme_const, n);
/// The augmented forward runs f and writes into the caller's `bytes` at
/// `tape` (char, int or float memory; one region per thread) what the
/// reverse reads; the reverse adds the gradients into the shadows.
template <typename... Args>
NABLA_ENZYME_DEVICE unsigned long __enzyme_augmentsize(void *function,
                                                       Args... markers);
template <typename... Args>
NABLA_ENZYME_DEVICE void __enzyme_augmentfwd(void *function, Args... args);
template <typename... Args>
NABLA_ENZYME_DEVICE void __enzyme_reverse(void *function, Args... args);
#endif // __cplusplus

// C has no variadic templates: declare the request with the types of one
// call, e.g. `void __enzyme_autodiff(void *, int, float *, float *);` (any
// function whose name contains __enzyme_autodiff or __enzyme_fwddiff is a
// request).

#endif // NABLA_ENZYME_H
