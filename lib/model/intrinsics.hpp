// lib/model/intrinsics.hpp — <immintrin.h>, without GCC 12's warnings about it.
#pragma once

// GCC 12's intrinsics read a deliberately undefined register (its bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
