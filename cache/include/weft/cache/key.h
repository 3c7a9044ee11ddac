// Cache keys: a hash over everything that decides a program binary. The components are stored
// beside each entry so that a miss can be explained against the nearest entry.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weft::cache {

// What the caller knows when it is about to compile a program for one device.
struct CacheKeyComponents {
  std::string ir_text;  // canonical IR text of the unoptimised graph
  std::string weft_version = WEFT_VERSION;
  std::string build_options;     // codegen and OpenCL build options
  std::string platform_name;     // device identity: CL_PLATFORM_NAME ...
  std::string platform_version;  // CL_PLATFORM_VERSION
  std::string device_name;       // CL_DEVICE_NAME
  std::string driver_version;    // CL_DRIVER_VERSION
  std::string opencl_c_version;  // CL_DEVICE_OPENCL_C_VERSION
  std::string compression = "zstd";
  std::string user_hook;  // anything else the user wants in the key
  // Not part of the key: the function's name, stored so `explain` can find entries of the
  // same function whose IR changed (new shapes, an edited body).
  std::string function_name;
};

// The components as the store keeps them: the IR text is replaced by its hash.
struct StoredComponents {
  std::string ir_hash;
  std::string weft_version;
  std::string build_options;
  std::string platform_name;
  std::string platform_version;
  std::string device_name;
  std::string driver_version;
  std::string opencl_c_version;
  std::string compression;
  std::string user_hook;
  std::string function_name;  // not part of the key, as in CacheKeyComponents

  // Equal keys: every component but function_name.
  bool operator==(const StoredComponents& other) const;
};

// XXH3-128 of the IR text as 32 lowercase hex digits.
std::string ir_text_hash(std::string_view ir_text);

// The stored form of `components` (hashes the IR text).
StoredComponents summarize(const CacheKeyComponents& components);

// The cache key: XXH3-128 over every component, length-prefixed and named, as 32 hex digits.
std::string compute_key(const CacheKeyComponents& components);
std::string compute_key(const StoredComponents& components);

// Names of the components that differ ("ir_text", "weft_version", "build_options",
// "platform_name", "platform_version", "device_name", "driver_version", "opencl_c_version",
// "compression", "user_hook"), in that order.
std::vector<std::string> differing_components(const StoredComponents& a, const StoredComponents& b);

}  // namespace weft::cache
