// "Did you mean ...?" for a mistyped subcommand or flag, as git suggests: the known names
// nearest to what was typed by edit distance, or those it begins.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace weft::cli {

// Edits (insert, delete, substitute, swap two adjacent characters) that turn a into b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The names in `known` nearest to `typed`, in their order: those `typed` begins (a prefix of
// two or more characters, or a single letter after a dash: `-v` for `--version`), else those
// within an edit or two (one for words of up to four characters, about a third of the word for
// longer ones). Leading dashes are ignored on both sides. Empty when nothing is near.
std::vector<std::string> nearest_names(std::string_view typed,
                                       const std::vector<std::string>& known);

// "'--check'", "'stats' or 'show'": the suggestions quoted for a message.
std::string quoted_alternatives(const std::vector<std::string>& names);

}  // namespace weft::cli
