// The small interface through which core talks to devices. weft::opencl implements it;
// core never sees an OpenCL type.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weft/dtype.h"
#include "weft/ir/graph.h"

namespace weft {

class Device;

// Device memory plus the event that marks its contents ready. Immutable once written.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual Device& device() const = 0;
  virtual std::size_t bytes() const = 0;
  // Whether its writer has completed or failed, without blocking (false when unknown).
  virtual bool settled() const { return false; }
};

// What compilation produced, for tests, the demo and telemetry.
struct KernelSummary {
  std::string name;                    // e.g. "k0_reduce_sum"
  std::string kind;                    // "loop", "reduce", "dot"
  std::vector<std::string> fused_ops;  // op names fused into this kernel, in graph order
  std::int64_t elements = 0;           // elements the kernel writes
  int launches = 1;  // device launches per run (a bulk and a tail, or two reduction stages)
  // Why the kernel ends where it does: why its result is a buffer rather than fused into its
  // consumer ("it is an output", "a reduction", "fusing it into ... would make a kernel larger
  // than ...").
  std::string why_buffer;
};

// Where compile time went, each phase timed where it happens (seconds).
struct CompilePhases {
  double plan = 0;          // dtype checks, fusion and scheduling
  double codegen = 0;       // device code generation
  double cache_lookup = 0;  // the persistent cache's lookup (reading the entry on a hit)
  double build = 0;         // the driver's build, or loading a cached binary
  double total() const { return plan + codegen + cache_lookup + build; }
};

struct CompiledInfo {
  std::vector<KernelSummary> kernels;  // one per fused kernel, in launch order
  int intermediate_buffers = 0;        // buffers that are neither inputs nor outputs
  CompilePhases compile_time;
  double compile_seconds() const { return compile_time.total(); }
  std::string source;  // generated device code
  // The persistent cache's part: "hit" (built from a stored binary), "miss" (compiled; stored
  // after the first run when it qualifies), "off" (disabled or unusable), or empty.
  std::string cache_status;
  std::string cache_key;  // 32 hex digits when the cache was consulted
};

class Executable {
 public:
  virtual ~Executable() = default;
  // Enqueues one run and returns at once; outputs become ready when their events complete.
  // Inputs must live on this executable's device, in parameter order.
  virtual std::vector<std::shared_ptr<Buffer>> run(
      std::span<const std::shared_ptr<Buffer>> inputs) = 0;
  virtual const CompiledInfo& info() const = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const std::string& name() const = 0;  // "cpu:0", "gpu:1"
  virtual std::string description() const = 0;  // driver's platform and device names
  virtual bool supports(DType dtype) const = 0;

  // Asynchronous upload: the copy of `host` is taken before returning.
  virtual std::shared_ptr<Buffer> upload(const void* host, std::size_t bytes) = 0;
  // Waits for the buffer, then copies it out.
  virtual void download(const Buffer& buffer, void* host, std::size_t bytes) = 0;
  virtual void wait(const Buffer& buffer) = 0;
  // Copies a buffer from any device onto this one (asynchronous where the driver allows).
  virtual std::shared_ptr<Buffer> copy_from(const Buffer& source) = 0;
  // A buffer of `bytes` holding `pattern` (`pattern_bytes`: 1, 2, 4 or 8, dividing `bytes`)
  // repeated: an eager broadcast of a scalar literal, which needs no program. The default
  // fills on the host and uploads.
  virtual std::shared_ptr<Buffer> fill(const void* pattern, std::size_t pattern_bytes,
                                       std::size_t bytes);
  // Fuses, generates code, builds; reuses earlier builds of an equal graph.
  virtual std::shared_ptr<Executable> compile(const Graph& graph) = 0;
  // Waits for everything enqueued on this device.
  virtual void synchronize() = 0;
  // A token (a zero-byte buffer that orders effects, see weft/ir/effects.h) on this device,
  // ready once every one of `tokens` (on any device) is; failures recorded on them carry
  // over. Never blocks: across devices the hand-off happens on the host.
  // The default says the device cannot order effects.
  virtual std::shared_ptr<Buffer> token_after(std::span<const std::shared_ptr<Buffer>> tokens);
};

// A source of devices; weft::opencl registers one when its header is included.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::vector<Device*> devices() = 0;  // in naming order
  virtual Device* preferred_device() = 0;      // first GPU, else first CPU
};

bool register_backend(Backend* backend);  // returns true so it can initialise a variable

// Device selection: set_default_device() wins, then WEFT_DEVICE, then the backend's choice.
std::vector<Device*> devices();
Device& default_device();
Device& device(std::string_view name);  // throws InvalidArgumentError listing the names
void set_default_device(std::string_view name);

}  // namespace weft
