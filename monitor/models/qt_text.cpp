#include "qt_text.h"

namespace weft::monitor {

QString display_text(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return to_qstring(text);
  std::size_t cut = max_bytes;
  // Never split a character: back off continuation bytes (10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return to_qstring(text.substr(0, cut)) + QChar(0x2026);
}

}  // namespace weft::monitor
