#include "weft/print_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <system_error>
#include <vector>

namespace weft {
namespace {

constexpr std::int64_t kElideAbove = 1000;  // numpy's default threshold
constexpr std::int64_t kEdgeItems = 3;

// The fewest digits (after the point, or of the mantissa in scientific form) that read back to
// an f16 value: std::to_chars has no 16-bit float overload.
std::string shortest_f16(double value, std::chars_format format) {
  const char* spec = format == std::chars_format::scientific ? "%.*e" : "%.*f";
  char buffer[64];
  for (int digits = 0;; ++digits) {
    std::snprintf(buffer, sizeof buffer, spec, digits, value);
    const double back = std::strtod(buffer, nullptr);
    if (digits >= 20 || float16::to_float(float16::from_float(static_cast<float>(back))) == value)
      return buffer;
  }
}

// The shortest digits that read back to the element's value, at its own precision.
std::string shortest(const HostArray& a, std::int64_t i, std::chars_format format) {
  if (a.dtype() == DType::F16) return shortest_f16(a.get_f64(i), format);
  char buffer[64];
  std::to_chars_result r{};
  if (a.dtype() == DType::F32)
    r = std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(a.get_f64(i)), format);
  else
    r = std::to_chars(buffer, buffer + sizeof buffer, a.get_f64(i), format);
  return std::string(buffer, r.ptr);
}

// The flat indices shown, per axis the first and last kEdgeItems when eliding.
void shown_indices(const HostArray& a, bool elide, std::vector<std::int64_t>& out) {
  const Shape& shape = a.shape();
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  auto walk = [&](auto& self, std::size_t axis, std::int64_t base) -> void {
    if (axis == shape.size()) {
      out.push_back(base);
      return;
    }
    const std::int64_t n = shape[axis];
    for (std::int64_t j = 0; j < n; ++j) {
      if (elide && n > 2 * kEdgeItems && j == kEdgeItems) j = n - kEdgeItems;
      self(self, axis + 1, base + j * strides[axis]);
    }
  };
  walk(walk, 0, 0);
}

// Every shown element formatted and padded to a common width, keyed by flat index.
class ElementFormatter {
 public:
  ElementFormatter(const HostArray& a, const std::vector<std::int64_t>& shown) : array_(a) {
    if (a.dtype() == DType::BF16) return;  // unpadded, as numpy prints ml_dtypes' bfloat16
    if (is_float(a.dtype())) {
      prepare_floats(shown);
    } else {
      for (std::int64_t i : shown) width_ = std::max(width_, plain(i).size());
    }
  }

  std::string operator()(std::int64_t i) const {
    if (array_.dtype() == DType::BF16) return bfloat16_text(i);
    std::string text = is_float(array_.dtype()) ? float_text(i) : plain(i);
    if (text.size() < width_) text.insert(0, width_ - text.size(), ' ');
    return text;
  }

 private:
  std::string plain(std::int64_t i) const {
    switch (array_.dtype()) {
      case DType::Bool:
        return array_.get_i64(i) ? "True" : "False";
      case DType::U32:
      case DType::U64:  // get_i64 gives u64's bit pattern
        return std::to_string(static_cast<std::uint64_t>(array_.get_i64(i)));
      default:
        return std::to_string(array_.get_i64(i));
    }
  }

  // numpy has no bfloat16: it prints ml_dtypes' elements with their str(), the float value
  // at six significant digits (C++ ostream's default, %g), unpadded.
  std::string bfloat16_text(std::int64_t i) const {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", array_.get_f64(i));
    return buffer;
  }

  void prepare_floats(const std::vector<std::int64_t>& shown) {
    double largest = 0, smallest = std::numeric_limits<double>::infinity();
    for (std::int64_t i : shown) {
      const double v = std::fabs(array_.get_f64(i));
      if (!std::isfinite(v) || v == 0) continue;
      largest = std::max(largest, v);
      smallest = std::min(smallest, v);
    }
    scientific_ = largest > 0 && (largest >= 1e8 || smallest < 1e-4 || largest / smallest > 1e3);
    for (std::int64_t i : shown) {
      const double v = array_.get_f64(i);
      if (!std::isfinite(v)) continue;
      auto [whole, fraction, exponent] = split(i);
      whole_width_ = std::max(whole_width_, whole.size());
      fraction_width_ = std::max(fraction_width_, fraction.size());
      (void)exponent;
    }
    for (std::int64_t i : shown) width_ = std::max(width_, float_text(i).size());
  }

  struct Parts {
    std::string whole, fraction, exponent;
  };
  // "-12.5" -> {"-12", "5", ""}; scientific "1.25e+10" -> {"1", "25", "e+10"}.
  Parts split(std::int64_t i) const {
    std::string digits =
        shortest(array_, i, scientific_ ? std::chars_format::scientific : std::chars_format::fixed);
    Parts parts;
    if (scientific_) {
      const std::size_t e = digits.find('e');
      parts.exponent = digits.substr(e);
      digits.resize(e);
      // numpy writes at least two exponent digits: e+05.
      if (parts.exponent.size() == 3) parts.exponent.insert(2, "0");
    }
    const std::size_t dot = digits.find('.');
    parts.whole = digits.substr(0, dot);
    if (dot != std::string::npos) parts.fraction = digits.substr(dot + 1);
    return parts;
  }

  std::string float_text(std::int64_t i) const {
    const double v = array_.get_f64(i);
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    Parts p = split(i);
    if (scientific_) {
      // Mantissas share their number of digits, padded with zeros.
      p.fraction.append(fraction_width_ - p.fraction.size(), '0');
      return p.whole + "." + p.fraction + p.exponent;
    }
    // Positional: decimal points aligned, fractions padded with spaces.
    std::string text(whole_width_ - p.whole.size(), ' ');
    text += p.whole + "." + p.fraction;
    text.append(fraction_width_ - p.fraction.size(), ' ');
    return text;
  }

  const HostArray& array_;
  bool scientific_ = false;
  std::size_t whole_width_ = 0, fraction_width_ = 0, width_ = 0;
};

void format_axis(const HostArray& a, const ElementFormatter& element, bool elide,
                 const std::vector<std::int64_t>& strides, std::size_t axis, std::int64_t base,
                 std::string& out) {
  const Shape& shape = a.shape();
  const std::int64_t n = shape[axis];
  const bool last_axis = axis + 1 == shape.size();
  // Between rows: one newline per axis below this one, then the indent of the next row.
  const std::string separator =
      last_axis ? " " : std::string(shape.size() - axis - 1, '\n') + std::string(axis + 1, ' ');
  out += '[';
  for (std::int64_t j = 0; j < n; ++j) {
    if (j > 0) out += separator;
    if (elide && n > 2 * kEdgeItems && j == kEdgeItems) {
      out += "...";
      out += separator;
      j = n - kEdgeItems;
    }
    const std::int64_t at = base + j * strides[axis];
    if (last_axis)
      out += element(at);
    else
      format_axis(a, element, elide, strides, axis + 1, at, out);
  }
  out += ']';
}

}  // namespace

std::string format_for_print(const HostArray& array) {
  if (array.dtype() == DType::Token) return "token";
  const bool elide = array.size() > kElideAbove;
  std::vector<std::int64_t> shown;
  shown_indices(array, elide, shown);
  const ElementFormatter element(array, shown);
  if (array.shape().empty()) return element(0);
  std::vector<std::int64_t> strides(array.shape().size(), 1);
  for (std::size_t k = strides.size(); k-- > 1;) strides[k - 1] = strides[k] * array.shape()[k];
  std::string out;
  format_axis(array, element, elide, strides, 0, 0, out);
  return out;
}

}  // namespace weft
