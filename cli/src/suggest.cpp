#include "suggest.h"

#include <algorithm>
#include <limits>

namespace weft::cli {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions ("verison").
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

namespace {

std::string_view without_dashes(std::string_view name) {
  while (name.starts_with('-')) name.remove_prefix(1);
  return name;
}

}  // namespace

std::vector<std::string> nearest_names(std::string_view typed,
                                       const std::vector<std::string>& known) {
  const bool dashed = typed.starts_with('-');
  const std::string_view word = without_dashes(typed);
  if (word.empty()) return {};
  // A single letter is one edit from every other single letter; only its prefix use means
  // anything, and only after a dash (`-v`): a one-letter subcommand is no abbreviation.
  const std::size_t max_edits = word.size() == 1 ? 0 : word.size() <= 4 ? 1 : word.size() / 3;
  constexpr std::size_t kPrefix = 0;  // a prefix match ranks before any edit
  std::size_t best = std::numeric_limits<std::size_t>::max();
  std::vector<std::string> nearest;
  for (const std::string& name : known) {
    const std::string_view body = without_dashes(name);
    if (body.size() <= 1 && word.size() == 1) continue;  // `-x` for `-h`: no resemblance
    std::size_t score;
    if (body.size() > word.size() && body.starts_with(word) && (word.size() >= 2 || dashed))
      score = kPrefix;
    else if (word.size() >= 2 && edit_distance(word, body) <= max_edits)
      score = 1 + edit_distance(word, body);
    else
      continue;
    if (score < best) {
      best = score;
      nearest.clear();
    }
    if (score == best && std::find(nearest.begin(), nearest.end(), name) == nearest.end())
      nearest.push_back(name);
  }
  return nearest;
}

std::string quoted_alternatives(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("'" + names[i] + "'");
  return text;
}

}  // namespace weft::cli
