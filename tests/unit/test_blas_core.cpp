// tests/unit/test_blas_core.cpp — better_blas_core: which OpenBLAS core replaces which, for CPU
// features by core name; switching cores in place; gemm_error and the loaded BLAS's GEMMs against
// the float64 reference.
#include <doctest/doctest.h>

#include <string>

#include <ATen/ATen.h>

#include "common/blas_core.hpp"

namespace mnist_ddp {
namespace {

CpuFeatures sse_only() { return {}; }

CpuFeatures avx2_fma() {
  CpuFeatures f;
  f.avx2 = true;
  f.fma = true;
  return f;
}

CpuFeatures avx512() {
  CpuFeatures f = avx2_fma();
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = true;
  return f;
}

TEST_CASE("better_blas_core: features x OpenBLAS's core -> the core to run instead") {
  struct Row {
    CpuFeatures features;
    const char* features_name;
    const char* core;
    const char* expected;  // "" keeps OpenBLAS's core
  };
  CpuFeatures avx2_no_fma = avx2_fma();
  avx2_no_fma.fma = false;
  CpuFeatures avx512_no_vl = avx512();
  avx512_no_vl.avx512vl = false;
  CpuFeatures avx512f_only = sse_only();
  avx512f_only.avx512f = true;
  const Row rows[] = {
      {avx512(), "avx512", "Prescott", "SkylakeX"},
      {avx512(), "avx512", "Nehalem", "SkylakeX"},
      {avx512(), "avx512", "Unknown", "SkylakeX"},
      {avx512(), "avx512", "Sandybridge", "SkylakeX"},
      {avx512(), "avx512", "Haswell", ""},  // AVX2 kernels: OpenBLAS's informed choice
      {avx512(), "avx512", "Zen", ""},      // AVX2 kernels too
      {avx512(), "avx512", "SkylakeX", ""},
      {avx512(), "avx512", "Cooperlake", ""},
      {avx512(), "avx512", "SapphireRapids", ""},
      {avx512(), "avx512", "prescott", "SkylakeX"},  // any case
      {avx512(), "avx512", "SomeFutureCore", ""},    // unknown names are kept
      {avx512(), "avx512", "", ""},
      {avx2_fma(), "avx2+fma", "Prescott", "Haswell"},
      {avx2_fma(), "avx2+fma", "Core2", "Haswell"},
      {avx2_fma(), "avx2+fma", "Sandybridge", "Haswell"},
      {avx2_fma(), "avx2+fma", "Bulldozer", "Haswell"},
      {avx2_fma(), "avx2+fma", "Haswell", ""},
      {avx2_fma(), "avx2+fma", "Zen", ""},
      {avx2_fma(), "avx2+fma", "SkylakeX", ""},
      {avx512_no_vl, "avx512 without vl", "Prescott", "Haswell"},
      {avx512_no_vl, "avx512 without vl", "Haswell", ""},
      {avx512f_only, "avx512f alone", "Prescott", ""},
      {avx2_no_fma, "avx2 without fma", "Prescott", ""},
      {sse_only(), "sse", "Prescott", ""},
      {sse_only(), "sse", "Katmai", ""},
  };
  for (const Row& row : rows) {
    CAPTURE(row.features_name);
    CAPTURE(row.core);
    CHECK(better_blas_core(row.features, row.core) == row.expected);
  }
}

TEST_CASE("gemm_error: zero for an exact product, the size of a wrong entry otherwise") {
  const at::Tensor a = at::tensor({1.0F, 2.0F, 3.0F, 4.0F}).reshape({2, 2});
  const at::Tensor b = at::tensor({0.5F, -1.0F, 2.0F, 0.25F}).reshape({2, 2});
  const at::Tensor exact = at::tensor({4.5F, -0.5F, 9.5F, -2.0F}).reshape({2, 2});
  CHECK(gemm_error(a, b, exact) == 0.0);
  at::Tensor wrong = exact.clone();
  wrong[1][0] += 0.75F;
  CHECK(gemm_error(a, b, wrong) == doctest::Approx(0.75));
}

TEST_CASE("blas_gemm_disagreement: the loaded BLAS's sgemm agrees with the reference") {
  CHECK(blas_gemm_disagreement() == "");
}

TEST_CASE("switch_blas_core: the named core runs at once and computes right; \"\" is OpenBLAS's") {
  const std::string before = switch_blas_core("Prescott");
  if (before.empty()) {
    MESSAGE("no OpenBLAS that chooses its core at run time is loaded");
    return;
  }
  CHECK(before == "Prescott");
  CHECK(blas_gemm_disagreement() == "");
  const std::string own = switch_blas_core("");
  CHECK(own != "");
  CHECK(blas_gemm_disagreement() == "");
  const std::string better = better_blas_core(cpu_features(), "Prescott");
  if (!better.empty()) {
    CHECK(switch_blas_core(better) == better);
    CHECK(blas_gemm_disagreement() == "");
  }
  switch_blas_core(own);
}

}  // namespace
}  // namespace mnist_ddp
