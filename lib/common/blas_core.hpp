// lib/common/blas_core.hpp — provides: choose_blas_core, check_blas_core, blas_core_account.
#pragma once

#include <string>

namespace at {
class Tensor;
}  // namespace at

namespace mnist_ddp {

/// The CPU features that decide which OpenBLAS kernels can run (usable: the OS saves registers).
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

/// The core to run instead of OpenBLAS's `core` (any case) where its kernels predate AVX2:
/// "SkylakeX" with AVX-512F/BW/DQ/VL, "Haswell" with AVX2 and FMA; "" to keep `core`.
std::string better_blas_core(const CpuFeatures& features, const std::string& core);

/// Makes OpenBLAS run `core` ("": its own choice), no BLAS call running; returns the core that
/// runs, "" where the loaded BLAS is no OpenBLAS that chooses its core at run time.
std::string switch_blas_core(const std::string& core);

/// The largest difference between `product` and a float64 product of `a` and `b` without BLAS.
double gemm_error(const at::Tensor& a, const at::Tensor& b, const at::Tensor& product);

/// "" where the BLAS's float GEMMs (plain and transposed) match a float64 reference, else what.
std::string blas_gemm_disagreement();

/// The program's .preinit_array function (Note [BLAS core]): replaces a fallback core.
void choose_blas_core(int argc, char** argv, char** envp);

/// In main, once LibTorch runs: back to OpenBLAS's choice if choose_blas_core's computes wrong.
void check_blas_core();

/// The banner's account of the OpenBLAS core: which runs and why; "" without OpenBLAS.
std::string blas_core_account();

}  // namespace mnist_ddp
