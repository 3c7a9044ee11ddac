// Text from a recording (command lines, kernel, effect and device names, file names) shown in a
// terminal. A trace file is untrusted: its text may hold escape sequences that retitle the
// window or clear the screen, carriage returns that overwrite a line, or bytes that are not
// UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace weft::telemetry {

// `text` with every control character (C0, DEL and the C1 controls U+0080 to U+009F) and every
// byte that is not part of valid UTF-8 written as a visible \xNN escape; printable characters,
// ASCII or not, are kept as they are.
std::string terminal_text(std::string_view text);

}  // namespace weft::telemetry
