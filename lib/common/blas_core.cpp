// lib/common/blas_core.cpp — OpenBLAS's core checked against the CPU's features before it loads.
#include "common/blas_core.hpp"

#include <dlfcn.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <ATen/ATen.h>

namespace mnist_ddp {

// Note [BLAS core]
// ~~~~~~~~~~~~~~~~
// OpenBLAS picks its kernels (its "core") from the CPU model when it initialises, before main,
// and gives a model it does not know old SSE3 kernels; OPENBLAS_CORETYPE, read only then, names
// the core instead. So the program's .preinit_array function, run before any library initialises,
// asks OpenBLAS's detection (gotoblas_dynamic_init) which core it picks and, where the CPU allows
// newer kernels, installs that core (gotoblas_dynamic_quit, init with OPENBLAS_CORETYPE set), which
// OpenBLAS's constructor keeps. No process starts twice. libc sets `environ` only after preinit:
// this function sets it from its argument, its changes gone once libc starts. main then checks the
// new kernels against a float64 reference and goes back to OpenBLAS's choice if they differ. A
// user's OPENBLAS_CORETYPE is never overridden; without the symbols nothing changes.
// MNIST_DDP_SIMULATE_BLAS_FALLBACK, a testing aid: =1 takes Prescott as OpenBLAS's choice,
// =uncorrected also keeps it, =rejected fails the check.
namespace {

constexpr const char* kCoreVariable = "OPENBLAS_CORETYPE";
constexpr const char* kSimulateVariable = "MNIST_DDP_SIMULATE_BLAS_FALLBACK";
constexpr const char* kSimulatedCore = "Prescott";
// A float GEMM of these sizes runs OpenBLAS's full and edge kernels in microseconds.
constexpr int64_t kRows = 67;
constexpr int64_t kInner = 71;
constexpr int64_t kColumns = 53;
// float32 rounding over 71 terms of at most 1 stays far below; wrong kernels are off by ~1.
constexpr double kGemmTolerance = 1e-3;

/// What choose_blas_core decided: plain chars, as static constructors run after it and would reset.
struct LoadChoice {
  char from[32];       // OpenBLAS's choice
  char to[32];         // the core installed instead; empty: none
  char simulate[16];   // MNIST_DDP_SIMULATE_BLAS_FALLBACK's value
  char rejected[160];  // why `to` was replaced by `from` again
  char user_core[32];  // the user's OPENBLAS_CORETYPE
};
LoadChoice load_choice;

template <std::size_t N>
void copy_text(char (&to)[N], const char* from) {
  std::snprintf(to, N, "%s", from != nullptr ? from : "");
}

/// OpenBLAS's cores (as openblas_get_corename names them) whose kernels predate AVX2.
constexpr std::array kCoresBeforeAvx2 = {
    "Unknown",   "Katmai", "Coppermine", "Northwood",   "Prescott",  "Banias",     "Atom",
    "Core2",     "Penryn", "Dunnington", "Nehalem",     "Athlon",    "Opteron",    "Opteron_SSE3",
    "Barcelona", "Nano",   "Bobcat",     "Sandybridge", "Bulldozer", "Piledriver", "Steamroller"};

bool has_avx512(const CpuFeatures& f) {
  return f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl;
}

std::string simulated_note() {
  return load_choice.simulate[0] != '\0' ? std::string(" (simulated by ") + kSimulateVariable + ")"
                                         : "";
}

/// The running OpenBLAS core's name; "" where no OpenBLAS is loaded.
std::string running_core() {
  using CorenameFn = char* (*)();
  auto corename = reinterpret_cast<CorenameFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = corename != nullptr ? corename() : nullptr;
  return name != nullptr ? name : "";
}

/// Sets OPENBLAS_CORETYPE to `value`, or unsets it where `value` is null.
void set_core_variable(const char* value) {
  if (value != nullptr) {
    setenv(kCoreVariable, value, 1);
  } else {
    unsetenv(kCoreVariable);
  }
}

}  // namespace

CpuFeatures cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // GCC reports AVX and AVX-512 features only where the OS saves their registers (XCR0).
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
#endif
  return f;
}

std::string better_blas_core(const CpuFeatures& features, const std::string& core) {
  const auto older = [&core](const char* name) { return strcasecmp(name, core.c_str()) == 0; };
  // A core with AVX2 kernels is OpenBLAS's informed choice, kept even on a CPU with AVX-512.
  if (std::none_of(kCoresBeforeAvx2.begin(), kCoresBeforeAvx2.end(), older)) return "";
  if (has_avx512(features)) return "SkylakeX";
  if (features.avx2 && features.fma) return "Haswell";
  return "";
}

std::string switch_blas_core(const std::string& core) {
  using Fn = void (*)();
  using CorenameFn = char* (*)();
  auto init = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  auto quit = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  auto corename = reinterpret_cast<CorenameFn>(dlsym(RTLD_DEFAULT, "gotoblas_corename"));
  if (init == nullptr || quit == nullptr || corename == nullptr) return "";
  const char* before = std::getenv(kCoreVariable);
  const std::string previous = before != nullptr ? before : "";
  set_core_variable(core.empty() ? nullptr : core.c_str());
  quit();
  init();  // reads OPENBLAS_CORETYPE, else detects
  set_core_variable(before != nullptr ? previous.c_str() : nullptr);
  return corename();
}

double gemm_error(const at::Tensor& a, const at::Tensor& b, const at::Tensor& product) {
  // Each term by itself, summed in float64: no BLAS takes part in the reference.
  const at::Tensor reference =
      (a.to(at::kDouble).unsqueeze(2) * b.to(at::kDouble).unsqueeze(0)).sum(1);
  return (product.to(at::kDouble) - reference).abs().max().item<double>();
}

std::string blas_gemm_disagreement() {
  const at::Tensor a =
      at::sin(at::arange(kRows * kInner, at::kFloat) * 0.37).reshape({kRows, kInner});
  const at::Tensor b =
      at::cos(at::arange(kInner * kColumns, at::kFloat) * 0.23).reshape({kInner, kColumns});
  // A layout each: GEMM without transposes, with A transposed, with B transposed.
  const std::pair<const char*, at::Tensor> products[] = {
      {"A*B", at::mm(a, b)},
      {"A^T*B", at::mm(a.t().contiguous().t(), b)},
      {"A*B^T", at::mm(a, b.t().contiguous().t())},
  };
  for (const auto& [name, product] : products) {
    const double error = gemm_error(a, b, product);
    if (!(error <= kGemmTolerance)) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "its sgemm %s (%" PRId64 "x%" PRId64 "x%" PRId64
                    ") differs from a float64 reference by %g",
                    name, kRows, kInner, kColumns, error);
      return text;
    }
  }
  return "";
}

void choose_blas_core(int /*argc*/, char** /*argv*/, char** envp) {
  environ = envp;
  const char* user = std::getenv(kCoreVariable);
  if (user != nullptr && *user != '\0') {
    copy_text(load_choice.user_core, user);
    return;
  }
  copy_text(load_choice.simulate, std::getenv(kSimulateVariable));
  const std::string simulate = load_choice.simulate;
  const std::string choice = switch_blas_core(simulate.empty() ? "" : kSimulatedCore);
  copy_text(load_choice.from, choice.c_str());
  const std::string better =
      simulate == "uncorrected" ? "" : better_blas_core(cpu_features(), choice);
  if (!better.empty()) copy_text(load_choice.to, switch_blas_core(better).c_str());
}

void check_blas_core() {
  if (load_choice.to[0] == '\0') return;
  std::string disagreement = blas_gemm_disagreement();
  if (std::strcmp(load_choice.simulate, "rejected") == 0 && disagreement.empty()) {
    disagreement = "a disagreement was simulated";
  }
  if (disagreement.empty()) return;
  copy_text(load_choice.rejected, disagreement.c_str());
  switch_blas_core(load_choice.simulate[0] != '\0' ? load_choice.from : "");
}

std::string blas_core_account() {
  const std::string core = running_core();
  if (core.empty()) return "";
  const LoadChoice& c = load_choice;
  const std::string running = "core " + core + ": ";
  if (c.user_core[0] != '\0') {
    return running + "the user's setting (" + kCoreVariable + "=" + c.user_core + ")";
  }
  if (c.rejected[0] != '\0') {
    return running + "OpenBLAS's choice" + simulated_note() + "; " + c.to + " was rejected, " +
           c.rejected;
  }
  if (c.to[0] != '\0') {
    return running + "corrected from OpenBLAS's choice " + c.from + simulated_note() +
           ", as the CPU has " +
           (has_avx512(cpu_features()) ? "AVX-512F/BW/DQ/VL" : "AVX2 and FMA");
  }
  const bool kept = std::strcmp(c.simulate, "uncorrected") == 0;
  return running + "OpenBLAS's choice" + simulated_note() + (kept ? ", kept as asked" : "");
}

}  // namespace mnist_ddp
