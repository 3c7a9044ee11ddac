#include "entry_mac.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <memory>
#include <new>
#include <stdexcept>

namespace weft::cache::detail {

namespace {

// Bumped if the fields or their framing change, so old MACs never verify under a new layout.
constexpr std::string_view kDomain = "weft cache entry v1";

struct MacDeleter {
  void operator()(EVP_MAC* mac) const { EVP_MAC_free(mac); }
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};

EVP_MAC* hmac() {
  // Fetching is slow (a provider lookup); the algorithm object is immutable and thread-safe.
  static std::unique_ptr<EVP_MAC, MacDeleter> algorithm(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!algorithm) throw std::runtime_error("OpenSSL has no HMAC implementation");
  return algorithm.get();
}

void update(EVP_MAC_CTX* ctx, const void* data, std::size_t size) {
  if (EVP_MAC_update(ctx, static_cast<const unsigned char*>(data), size) != 1)
    throw std::runtime_error("HMAC update failed");
}

// Each field is length-prefixed so that bytes cannot move from one field to the next.
void update_field(EVP_MAC_CTX* ctx, const void* data, std::size_t size) {
  const std::uint64_t length = size;
  update(ctx, &length, sizeof length);
  update(ctx, data, size);
}

}  // namespace

EntryMac entry_mac(std::span<const std::uint8_t> secret, std::string_view key,
                   std::uint64_t uncompressed_size, std::span<const std::uint8_t> frame,
                   std::span<const std::uint8_t> metadata) {
  std::unique_ptr<EVP_MAC_CTX, MacDeleter> ctx(EVP_MAC_CTX_new(hmac()));
  if (!ctx) throw std::bad_alloc();
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_END};
  if (EVP_MAC_init(ctx.get(), secret.data(), secret.size(), params) != 1)
    throw std::runtime_error("HMAC-SHA256 initialisation failed");
  update_field(ctx.get(), kDomain.data(), kDomain.size());
  update_field(ctx.get(), key.data(), key.size());
  update_field(ctx.get(), &uncompressed_size, sizeof uncompressed_size);
  update_field(ctx.get(), frame.data(), frame.size());
  update_field(ctx.get(), metadata.data(), metadata.size());
  EntryMac mac{};
  std::size_t length = 0;
  if (EVP_MAC_final(ctx.get(), mac.data(), &length, mac.size()) != 1 || length != mac.size())
    throw std::runtime_error("HMAC-SHA256 finalisation failed");
  return mac;
}

bool same_mac(std::span<const std::uint8_t> stored, const EntryMac& expected) {
  return stored.size() == expected.size() &&
         CRYPTO_memcmp(stored.data(), expected.data(), expected.size()) == 0;
}

}  // namespace weft::cache::detail
