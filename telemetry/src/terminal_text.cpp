#include "weft/telemetry/terminal_text.h"

#include <cstdint>

namespace weft::telemetry {

namespace {

// The length of the valid UTF-8 sequence at the start of `text` (shortest form, no surrogates,
// at most U+10FFFF), or 0 when it does not start with one. `code_point` is what it encodes.
std::size_t utf8_sequence(std::string_view text, std::uint32_t& code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  } else if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code_point = lead & 0x1fu;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code_point = lead & 0x0fu;
    if (lead == 0xe0) low = 0xa0;   // shorter forms
    if (lead == 0xed) high = 0x9f;  // surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code_point = lead & 0x07u;
    if (lead == 0xf0) low = 0x90;   // shorter forms
    if (lead == 0xf4) high = 0x8f;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    const unsigned char c = byte(i);
    if (c < (i == 1 ? low : 0x80) || c > (i == 1 ? high : 0xbf)) return 0;
    code_point = (code_point << 6) | (c & 0x3fu);
  }
  return length;
}

bool is_control(std::uint32_t code_point) {
  return code_point < 0x20 || (code_point >= 0x7f && code_point <= 0x9f);
}

}  // namespace

std::string terminal_text(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    std::uint32_t code_point = 0;
    std::size_t length = utf8_sequence(text, code_point);
    if (length > 0 && !is_control(code_point)) {
      out.append(text.substr(0, length));
    } else {
      if (length == 0) length = 1;  // a stray byte: escaped alone
      for (std::size_t i = 0; i < length; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
    text.remove_prefix(length);
  }
  return out;
}

}  // namespace weft::telemetry
