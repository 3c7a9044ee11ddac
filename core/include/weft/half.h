// 16-bit float storage types: IEEE binary16 (f16) and bfloat16 (bf16, the top half of an f32).
// Both convert from float rounding to nearest, ties to even, as JAX (ml_dtypes) and XLA do;
// arithmetic happens in float.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace weft {

struct float16 {
  std::uint16_t bits = 0;

  float16() = default;
  explicit float16(float f) : bits(from_float(f)) {}
  static float16 from_bits(std::uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return to_float(bits); }

  static std::uint16_t from_float(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t magnitude = x & 0x7FFFFFFFu;
    if (magnitude >= 0x7F800000u)  // inf stays inf; NaN stays a (quiet) NaN
      return sign | (magnitude > 0x7F800000u ? 0x7E00u : 0x7C00u);
    if (magnitude >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 rounds to inf
    if (magnitude < 0x38800000u) {                        // below 2^-14: subnormal or zero
      // |f| * 2^24 is exact in float; nearbyint rounds it to the subnormal's integer mantissa,
      // ties to even (the default rounding mode). 1024 lands on the smallest normal's bits.
      const float scaled = std::fabs(f) * 16777216.0f;
      return sign | static_cast<std::uint16_t>(std::nearbyint(scaled));
    }
    // Normal: add half an ulp (minus one when the kept mantissa is even, so ties go to even),
    // then rebias the exponent from 127 to 15. A carry out of the mantissa bumps the exponent.
    const std::uint32_t rounded = magnitude + 0xFFFu + ((magnitude >> 13) & 1u);
    return sign | static_cast<std::uint16_t>((rounded - (112u << 23)) >> 13);
  }

  static float to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu;
    const std::uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
      const float magnitude = static_cast<float>(mantissa) * 0x1.0p-24f;
      return sign ? -magnitude : magnitude;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
};

struct bfloat16 {
  std::uint16_t bits = 0;

  bfloat16() = default;
  explicit bfloat16(float f) : bits(from_float(f)) {}
  static bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return to_float(bits); }

  static std::uint16_t from_float(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)  // NaN: keep the sign, force a quiet NaN
      return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
    // Half an ulp of the kept bits, less one when they are even: ties round to even. Overflow
    // carries into the exponent and, past the largest finite value, to inf, as it should.
    const std::uint32_t rounded = x + 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>(rounded >> 16);
  }

  static float to_float(std::uint16_t b) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
  }
};

}  // namespace weft
