// lib/common/blas_core.hpp — provides: choose_blas_core (OpenBLAS's fallback core replaced by the
// one the CPU's features allow, Note [BLAS core]), check_blas_core, blas_core_account.
#pragma once

#include <string>

namespace at {
class Tensor;
}  // namespace at

namespace mnist_ddp {

/// The CPU features that decide which OpenBLAS kernels can run (usable: the OS saves the
/// registers).
struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512dq = false;
  bool avx512vl = false;
};

/// This CPU's features; none off x86.
CpuFeatures cpu_features();

/// The core to run instead of OpenBLAS's `core` (a name as openblas_get_corename gives it, any
/// case) where `core`'s kernels predate AVX2: "SkylakeX" with AVX-512F/BW/DQ/VL, "Haswell" with
/// AVX2 and FMA; "" to keep `core` (also for a name this table does not know).
std::string better_blas_core(const CpuFeatures& features, const std::string& core);

/// Makes OpenBLAS run `core` ("": its own choice) from now on; returns the core that runs, ""
/// where the loaded BLAS is no OpenBLAS that chooses its core at run time. No BLAS call may be
/// running.
std::string switch_blas_core(const std::string& core);

/// The largest difference between `product` and a float64 product of `a` and `b` computed
/// without BLAS.
double gemm_error(const at::Tensor& a, const at::Tensor& b, const at::Tensor& product);

/// "" where the loaded BLAS's float GEMMs (plain and transposed) match a float64 reference;
/// otherwise what differs.
std::string blas_gemm_disagreement();

/// A .preinit_array function of the program: runs before any library's initialisation, so
/// before OpenBLAS reads OPENBLAS_CORETYPE; replaces a fallback core there.
void choose_blas_core(int argc, char** argv, char** envp);

/// In main, once LibTorch runs: a core choose_blas_core put in place that computes a wrong
/// product is replaced by OpenBLAS's own choice again.
void check_blas_core();

/// The banner's account of the OpenBLAS core: which runs and why; "" without OpenBLAS.
std::string blas_core_account();

}  // namespace mnist_ddp
