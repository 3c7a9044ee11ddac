// Trees in control-flow messages: leaf paths and structures read back from the signature
// TreeTraits::flatten writes, and the check that two trees agree.
#include <cctype>

#include "control_flow_internal.h"
#include "trace/array_impl.h"
#include "weft/error.h"
#include "weft/ir/regions.h"

namespace weft::detail {
namespace {

struct BadSig {};

// Reads a signature (grammar in weft/trace/tree.h): A, s(...), strN:..., t(...), p(..),
// vN(...), a(...), m(N:key ...).
class SigReader {
 public:
  explicit SigReader(const std::string& sig) : s_(sig) {}

  // Reads one tree at the cursor; appends its leaves' paths and returns its structure.
  std::string tree(const std::string& path, std::vector<std::string>& paths) {
    const char c = next();
    if (c == 'A') {
      paths.push_back(path);
      return "Array";
    }
    if (c == 's' && peek() == '(') {
      skip_to(')');
      return "static";
    }
    if (c == 's' && s_.compare(pos_, 2, "tr") == 0) {
      pos_ += 2;
      const std::size_t n = number();
      expect(':');
      pos_ += n;
      if (pos_ > s_.size()) throw BadSig{};
      return "string";
    }
    if (c == 't' || c == 'a' || c == 'v') {
      if (c == 'v') number();
      expect('(');
      std::string out = c == 't' ? "tuple(" : c == 'a' ? "array(" : "vector(";
      for (std::size_t k = 0; peek() != ')'; ++k)
        out += (k ? ", " : "") + tree(path + "[" + std::to_string(k) + "]", paths);
      expect(')');
      return out + ")";
    }
    if (c == 'p') {
      expect('(');
      std::string first = tree(path + ".first", paths);
      std::string second = tree(path + ".second", paths);
      expect(')');
      return "pair(" + first + ", " + second + ")";
    }
    if (c == 'm') {
      expect('(');
      std::string out = "map{";
      for (std::size_t k = 0; peek() != ')'; ++k) {
        const std::size_t n = number();
        expect(':');
        if (pos_ + n > s_.size()) throw BadSig{};
        const std::string key = s_.substr(pos_, n);
        pos_ += n;
        out += (k ? ", " : "") + key + ": " + tree(path + "[\"" + key + "\"]", paths);
      }
      expect(')');
      return out + "}";
    }
    throw BadSig{};
  }

  bool done() const { return pos_ == s_.size(); }

 private:
  char next() {
    if (pos_ >= s_.size()) throw BadSig{};
    return s_[pos_++];
  }
  char peek() const {
    if (pos_ >= s_.size()) throw BadSig{};
    return s_[pos_];
  }
  void expect(char c) {
    if (next() != c) throw BadSig{};
  }
  void skip_to(char c) {
    while (next() != c) {
    }
  }
  std::size_t number() {
    std::size_t n = 0;
    bool any = false;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      n = n * 10 + static_cast<std::size_t>(s_[pos_++] - '0');
      any = true;
    }
    if (!any) throw BadSig{};
    return n;
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

// Several trees side by side (an operand pack, a jit argument list) read as one.
std::string read_all(const std::string& sig, const std::string& root,
                     std::vector<std::string>& paths) {
  SigReader reader(sig);
  std::string out = reader.tree(root, paths);
  if (reader.done()) return out;
  out = "(" + out;
  while (!reader.done()) out += ", " + reader.tree(root, paths);
  return out + ")";
}

}  // namespace

std::vector<std::string> leaf_paths(const std::string& sig, const std::string& root,
                                    std::size_t num_leaves) {
  std::vector<std::string> paths;
  try {
    read_all(sig, root, paths);
  } catch (const BadSig&) {
    paths.clear();
  }
  if (paths.size() != num_leaves) {
    paths.clear();
    for (std::size_t k = 0; k < num_leaves; ++k)
      paths.push_back(root + " leaf " + std::to_string(k));
  }
  return paths;
}

std::string describe_tree(const std::string& sig) {
  std::vector<std::string> paths;
  try {
    return read_all(sig, "", paths);
  } catch (const BadSig&) {
    return "a tree with signature " + sig;
  }
}

std::string at(const std::string& api, const std::source_location& loc) {
  return api + " at " + describe_location(loc) + ": ";
}

std::vector<TensorType> types_of(std::span<const Array> arrays) {
  std::vector<TensorType> out;
  out.reserve(arrays.size());
  for (const Array& a : arrays) out.push_back({a.dtype(), a.shape()});
  return out;
}

void check_same_tree(const std::string& api, const std::source_location& loc,
                     const std::string& root, const std::string& want_sig,
                     const std::vector<TensorType>& want, const std::string& from,
                     const std::string& got_sig, const std::vector<TensorType>& got,
                     const std::string& who, const std::string& hint) {
  if (got_sig != want_sig || got.size() != want.size())
    throw TreeStructureError(at(api, loc) + who + " must return the same tree structure as " +
                             from + ": " + from + " is " + describe_tree(want_sig) + " but " + who +
                             " returns " + describe_tree(got_sig) + hint);
  const std::vector<std::string> paths = leaf_paths(want_sig, root, want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    if (got[k] == want[k]) continue;
    const std::string msg = at(api, loc) + who + " must return the same types as " + from + ": " +
                            paths[k] + " is " + type_to_string(want[k]) + " in " + from + " but " +
                            type_to_string(got[k]) + " from " + who + hint;
    if (got[k].shape != want[k].shape) throw ShapeError(msg);
    throw DTypeError(msg);
  }
}

TracedRegion trace_fn(OpKind op, std::size_t index, const NamedFn& fn, const std::string& api,
                      const std::source_location& loc, std::span<const TensorType> params,
                      FlatOut& out) {
  RegionInfo info{region_name(op, index), fn.name, api, loc};
  return trace_region(info, params, [&](const std::vector<Array>& tracers) {
    out = fn.fn(tracers);
    return out.leaves;
  });
}

void check_leaves_valid(const std::string& api, const std::source_location& loc,
                        const std::string& root, const std::string& sig,
                        std::span<const Array> leaves, std::size_t hidden) {
  for (std::size_t k = hidden; k < leaves.size(); ++k) {
    if (leaves[k].valid()) {
      check_not_escaped(*leaves[k].impl(), loc);
      continue;
    }
    const std::vector<std::string> paths = leaf_paths(sig, root, leaves.size() - hidden);
    throw InvalidArgumentError(at(api, loc) + paths[k - hidden] +
                               " is an empty Array (default-constructed); give it a value");
  }
}

}  // namespace weft::detail
