// bench/dot_product_peak.cpp — one core's multiply-adds per second: float32 FMA (vfmadd231ps)
// against the bf16 dot product (vdpbf16ps), 512-bit, with enough independent sums to hide latency.
//
//   g++ -O3 -march=native bench/dot_product_peak.cpp -o /tmp/peak && /tmp/peak
#include <immintrin.h>

#include <chrono>
#include <cstdio>

namespace {

constexpr int kSums = 24;  // independent accumulators: latency x throughput, with room
constexpr long kRounds = 10'000'000;

/// Seconds for kRounds x kSums instructions of `step`, and a value that keeps them alive.
template <typename Step>
[[gnu::always_inline]] inline double time_rounds(Step step, float* keep) {
  __m512 sum[kSums];
  for (int k = 0; k < kSums; ++k) sum[k] = _mm512_set1_ps(static_cast<float>(k));
  const auto start = std::chrono::steady_clock::now();
  for (long r = 0; r < kRounds; ++r) {
#pragma GCC unroll 24
    for (int k = 0; k < kSums; ++k) sum[k] = step(sum[k]);
  }
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  alignas(64) float lanes[16];
  for (int k = 0; k < kSums; ++k) {
    _mm512_store_ps(lanes, sum[k]);
    for (const float lane : lanes) *keep += lane;
  }
  return seconds.count();
}

#ifdef __AVX512F__
[[gnu::noinline]] double fma_seconds(float* keep) {
  __m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(1e-9f);
  __asm__ volatile("" : "+v"(a), "+v"(b));  // not constants the compiler could fold
  return time_rounds([&](__m512 s) { return _mm512_fmadd_ps(a, b, s); }, keep);
}
#endif
#ifdef __AVX512BF16__
[[gnu::noinline]] double bf16_seconds(float* keep) {
  __m512i pairs = _mm512_set1_epi32(0x30003000);  // bf16 pairs of small values
  __asm__ volatile("" : "+v"(pairs));
  const __m512bh a = reinterpret_cast<__m512bh>(pairs);
  return time_rounds([&](__m512 s) { return _mm512_dpbf16_ps(s, a, a); }, keep);
}
#endif

void report(const char* name, double seconds, int macs_per_instruction) {
  const double instructions = static_cast<double>(kRounds) * kSums;
  std::printf("%-24s %6.2f G instructions/s  %6.1f G multiply-adds/s\n", name,
              instructions / seconds / 1e9, instructions * macs_per_instruction / seconds / 1e9);
}

}  // namespace

int main() {
  float keep = 0;
#ifdef __AVX512F__
  report("vfmadd231ps zmm (fp32)", fma_seconds(&keep), 16);
#else
  std::puts("this CPU lacks AVX-512F");
#endif
#ifdef __AVX512BF16__
  report("vdpbf16ps zmm (bf16)", bf16_seconds(&keep), 32);
#else
  std::puts("this CPU lacks AVX512_BF16");
#endif
  std::printf("(checksum %g)\n", keep);
}
