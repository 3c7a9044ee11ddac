// libFuzzer target for the persistent cache's lookup path: arbitrary bytes stored as a cache
// entry's binary, launch plan, sizes, checksums and MAC must come out as a miss (or, only for
// rows sealed with the store's key, a hit whose plan is then compared with the plan the graph
// needs), never a crash, a hang or an unchecked allocation. An unsealed row must never hit.
//
// Input layout: byte 0 = flags, bytes 1..8 = the uncompressed size field, then the rest split
// in two at a position taken from bytes 9..10: the binary part and the plan part.
//   flag 1: seal the row with the store's key (as the key's owner would)
//   flag 2: store the binary part zstd-compressed (else as the frame itself)
//   flag 4: use the real uncompressed size (else the fuzzed field)
//   flag 8: store correct XXH3 checksums (else fuzzed ones)
//   flag 16: use the genuine launch plan instead of the plan part
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "codec.h"
#include "entry_mac.h"
#include "plan_serialization.h"
#include "weft/cache/store.h"
#include "weft/error.h"
#include "weft/ir/text.h"
#include "weft/opencl/codegen.h"

namespace {

using namespace weft;

constexpr char kProgram[] = R"(func @fuzzed(%x: f32[64], %y: f32[64]) -> (f32[64]) {
  %e = exp %x : f32[64]
  %s = add %e, %y : f32[64]
  return %s
}
)";

struct Fixture {
  std::filesystem::path directory;
  std::vector<std::uint8_t> key = std::vector<std::uint8_t>(32, 0x42);
  cache::CacheKeyComponents components;
  std::string entry_key;
  opencl::ProgramPlan plan;
  std::string genuine_metadata;
  std::optional<cache::ProgramStore> reader;
  sqlite3* db = nullptr;
  sqlite3_stmt* write_entry = nullptr;
  sqlite3_stmt* write_payload = nullptr;

  Fixture() {
    char pattern[] = "/tmp/weft-cache-fuzz-XXXXXX";
    directory = ::mkdtemp(pattern);
    components.ir_text = kProgram;
    components.platform_name = "fuzz platform";
    components.device_name = "fuzz device";
    entry_key = cache::compute_key(components);
    plan = opencl::plan_program(parse_graph(kProgram), opencl::DeviceCaps{});
    genuine_metadata = opencl::detail::serialize_plan(plan);

    cache::StoreOptions options;
    options.directory = directory;
    options.key = key;
    {
      cache::ProgramStore writer(options);
      const std::vector<std::uint8_t> binary(256, 7);
      if (writer.insert(components, binary, genuine_metadata, 1.0).status !=
          cache::InsertStatus::written)
        std::abort();
    }
    options.writer = false;  // corrupt rows stay for the next input to overwrite
    reader.emplace(options);
    if (sqlite3_open((directory / "cache.sqlite3").c_str(), &db) != SQLITE_OK) std::abort();
    sqlite3_exec(db, "PRAGMA synchronous = OFF", nullptr, nullptr, nullptr);  // scratch data
    sqlite3_prepare_v2(db,
                       "UPDATE entries SET checksum = ?1, metadata_checksum = ?2, "
                       "uncompressed_size = ?3, compressed_size = ?4, metadata_size = ?5, "
                       "mac = ?6 WHERE key = ?7",
                       -1, &write_entry, nullptr);
    sqlite3_prepare_v2(db,
                       "UPDATE payloads SET binary = ?1, metadata = ?2 WHERE id = "
                       "(SELECT id FROM entries WHERE key = ?3)",
                       -1, &write_payload, nullptr);
    if (!write_entry || !write_payload) std::abort();
  }
};

Fixture& fixture() {
  static Fixture* f = new Fixture();
  return *f;
}

std::uint64_t read_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void bind_blob(sqlite3_stmt* stmt, int index, std::span<const std::uint8_t> bytes) {
  // A zero-length blob must still be a blob, not NULL (the columns are NOT NULL).
  static const std::uint8_t empty = 0;
  sqlite3_bind_blob(stmt, index, bytes.empty() ? &empty : bytes.data(),
                    static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 11) return 0;
  Fixture& f = fixture();
  const std::uint8_t flags = data[0];
  std::uint64_t uncompressed_size = read_u64(data + 1);
  const std::size_t split = (data[9] | (data[10] << 8)) % (size - 11 + 1);
  const std::span<const std::uint8_t> binary(data + 11, split);
  std::span<const std::uint8_t> metadata(data + 11 + split, size - 11 - split);
  if (flags & 16)
    metadata = {reinterpret_cast<const std::uint8_t*>(f.genuine_metadata.data()),
                f.genuine_metadata.size()};

  const std::vector<std::uint8_t> frame =
      (flags & 2) ? cache::detail::compress(binary, 1)
                  : std::vector<std::uint8_t>(binary.begin(), binary.end());
  if (flags & 4) uncompressed_size = binary.size();
  const bool sealed = flags & 1;
  std::vector<std::uint8_t> mac(32);
  if (sealed) {
    const auto real =
        cache::detail::entry_mac(f.key, f.entry_key, uncompressed_size, frame, metadata);
    mac.assign(real.begin(), real.end());
  } else {
    for (std::size_t i = 0; i < mac.size() && i < size; ++i) mac[i] = data[size - 1 - i];
  }
  const std::uint64_t checksum = (flags & 8) ? cache::detail::checksum(binary) : read_u64(data + 1);
  const std::uint64_t metadata_checksum =
      (flags & 8) ? cache::detail::checksum(metadata) : read_u64(data + 2);

  sqlite3_reset(f.write_entry);
  sqlite3_bind_int64(f.write_entry, 1, static_cast<std::int64_t>(checksum));
  sqlite3_bind_int64(f.write_entry, 2, static_cast<std::int64_t>(metadata_checksum));
  sqlite3_bind_int64(f.write_entry, 3, static_cast<std::int64_t>(uncompressed_size));
  sqlite3_bind_int64(f.write_entry, 4, static_cast<std::int64_t>(frame.size()));
  sqlite3_bind_int64(f.write_entry, 5, static_cast<std::int64_t>(metadata.size()));
  bind_blob(f.write_entry, 6, mac);
  sqlite3_bind_text(f.write_entry, 7, f.entry_key.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(f.write_entry) != SQLITE_DONE) std::abort();
  sqlite3_reset(f.write_payload);
  bind_blob(f.write_payload, 1, frame);
  bind_blob(f.write_payload, 2, metadata);
  sqlite3_bind_text(f.write_payload, 3, f.entry_key.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(f.write_payload) != SQLITE_DONE) std::abort();

  const cache::LookupResult found = f.reader->lookup(f.components);
  if (!found.hit()) return 0;
  if (!sealed) std::abort();  // an entry nobody with the key wrote was accepted
  // What compilation does with a hit: the stored plan must parse and equal the graph's plan
  // before the binary goes anywhere (the binary itself never reaches a driver here).
  std::string problem;
  const std::optional<opencl::ProgramPlan> stored =
      opencl::detail::parse_plan(found.metadata, &problem);
  if (stored) (void)opencl::detail::plan_difference(*stored, f.plan);
  return 0;
}
