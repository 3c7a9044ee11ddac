// Cache key computation. Each component is fed as name, length and bytes so that moving bytes
// between neighbouring components can never produce the same key.
#include "weft/cache/key.h"

#include <xxhash.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <utility>

namespace weft::cache {
namespace {

// Bump when the serialisation below changes: old keys must stop matching.
constexpr std::string_view kKeyFormat = "weft-cache-key-v1";

std::string hex128(XXH128_hash_t hash) {
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return out;
}

// Component names paired with their values, in key order.
std::array<std::pair<std::string_view, const std::string*>, 10> fields(const StoredComponents& c) {
  return {{{"ir_text", &c.ir_hash},
           {"weft_version", &c.weft_version},
           {"build_options", &c.build_options},
           {"platform_name", &c.platform_name},
           {"platform_version", &c.platform_version},
           {"device_name", &c.device_name},
           {"driver_version", &c.driver_version},
           {"opencl_c_version", &c.opencl_c_version},
           {"compression", &c.compression},
           {"user_hook", &c.user_hook}}};
}

class Hasher {
 public:
  Hasher() : state_(XXH3_createState()) { XXH3_128bits_reset(state_); }
  ~Hasher() { XXH3_freeState(state_); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void add(std::string_view bytes) {
    const std::uint64_t size = bytes.size();
    XXH3_128bits_update(state_, &size, sizeof size);
    XXH3_128bits_update(state_, bytes.data(), bytes.size());
  }
  XXH128_hash_t digest() const { return XXH3_128bits_digest(state_); }

 private:
  XXH3_state_t* state_;
};

}  // namespace

std::string ir_text_hash(std::string_view ir_text) {
  return hex128(XXH3_128bits(ir_text.data(), ir_text.size()));
}

StoredComponents summarize(const CacheKeyComponents& c) {
  return {ir_text_hash(c.ir_text), c.weft_version, c.build_options,  c.platform_name,
          c.platform_version,      c.device_name,  c.driver_version, c.opencl_c_version,
          c.compression,           c.user_hook,    c.function_name};
}

bool StoredComponents::operator==(const StoredComponents& other) const {
  return differing_components(*this, other).empty();
}

std::string compute_key(const StoredComponents& components) {
  Hasher hasher;
  hasher.add(kKeyFormat);
  for (const auto& [name, value] : fields(components)) {
    hasher.add(name);
    hasher.add(*value);
  }
  return hex128(hasher.digest());
}

std::string compute_key(const CacheKeyComponents& components) {
  return compute_key(summarize(components));
}

std::vector<std::string> differing_components(const StoredComponents& a,
                                              const StoredComponents& b) {
  std::vector<std::string> names;
  const auto fa = fields(a);
  const auto fb = fields(b);
  for (std::size_t i = 0; i < fa.size(); ++i) {
    if (*fa[i].second != *fb[i].second) names.emplace_back(fa[i].first);
  }
  return names;
}

}  // namespace weft::cache
