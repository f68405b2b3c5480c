// Enzyme's C/C++ convention for gradient requests inside device code: the
// activity markers are globals whose loads tag the next argument, and
// __enzyme_autodiff / __enzyme_fwddiff are declared, never defined.
#pragma once
extern __device__ int enzyme_dup;
extern __device__ int enzyme_dupnoneed;
extern __device__ int enzyme_const;
extern __device__ int enzyme_out;
extern __device__ int enzyme_allocated;
extern __device__ int enzyme_tape;
extern __device__ int enzyme_nofree;
template <typename Ret, typename... Args>
__device__ Ret __enzyme_autodiff(void *, Args...);
template <typename Ret, typename... Args>
__device__ Ret __enzyme_fwddiff(void *, Args...);
template <typename... Args>
__device__ unsigned long __enzyme_augmentsize(void *, Args...);
template <typename... Args>
__device__ void __enzyme_augmentfwd(void *, Args...);
template <typename... Args>
__device__ void __enzyme_reverse(void *, Args...);
