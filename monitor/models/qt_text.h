// std::string_view to QString (UTF-8), for the models' display text.
#pragma once

#include <QString>
#include <string_view>

namespace weft::monitor {

inline QString to_qstring(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

}  // namespace weft::monitor
