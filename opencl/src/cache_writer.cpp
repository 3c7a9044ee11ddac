#include "cache_writer.h"

#include "runtime/device_runtime.h"

#include "discovery.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "weft/cache/process_cache.h"
#include "weft/error.h"
#include "weft/log.h"
#include "weft/opencl/cl_error.h"
#include "weft/telemetry/telemetry.h"

namespace weft::opencl::detail {

namespace {

constexpr std::string_view kComponent = "cache";

bool control_flow_idle() {
  for (OpenCLDevice* device : all_devices())
    if (device->runtime().runs_in_flight() > 0) return false;
  return true;
}

// The store's span on the cache writer's row.
void record_store(const CacheWrite& write, std::int64_t start_ns, std::string_view status,
                  std::size_t bytes) {
  telemetry::Span span;
  span.id = telemetry::next_id();
  span.kind = telemetry::SpanKind::cache_store;
  span.track = telemetry::this_thread_track();
  span.name = write.components.function_name;
  span.start_ns = start_ns;
  span.end_ns = telemetry::now_ns();
  span.args = {{"key", write.key},
               {"status", std::string(status)},
               {"bytes", std::to_string(bytes)},
               {"device", write.device_label}};
  telemetry::emit(std::move(span));
}

void perform(CacheWrite& write) {
  const std::int64_t start_ns = telemetry::enabled() ? telemetry::now_ns() : 0;
  if (!write.first_run_launches.wait()) {
    // The run failed; its error reaches the caller through its outputs. Nothing to store.
    log::debug(kComponent, "not storing " + write.key + ": its first run failed");
    return;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - write.first_run_start)
          .count();
  // Kernel time is subtracted, so the recorded compile time is the work-group compilation.
  const double first_run_overhead =
      std::max(0.0, wall - write.first_run_launches.execution_seconds());
  const double compile_seconds = write.build_seconds + first_run_overhead;
  // A program the store would refuse (a read-only store, or one quicker to compile than the
  // store's minimum) is not worth draining every queue and serialising its binary for.
  const cache::StoreOptions& options = write.store->options();
  if (!options.writer || compile_seconds < options.min_compile_time_s) {
    const cache::InsertStatus refused = !options.writer
                                            ? cache::InsertStatus::read_only
                                            : cache::InsertStatus::below_min_compile_time;
    if (start_ns) record_store(write, start_ns, cache::to_string(refused), 0);
    return;
  }
  std::vector<std::uint8_t> binary;
  try {
    for (;;) {
      std::unique_lock gate(launch_gate());
      // A run with control flow has outputs whose events its runtime thread sets after
      // enqueueing more work, which needs the gate: commands waiting on them would keep
      // clFinish from returning. Such runs start under the gate, so none can start now.
      if (control_flow_idle()) {
        for (OpenCLDevice* device : all_devices()) clFinish(device->queue());
        binary = read_program_binary(write.program.get(), write.device, write.device_label);
        break;
      }
      gate.unlock();
      for (OpenCLDevice* device : all_devices()) device->runtime().wait_idle();
    }
  } catch (const Error& e) {
    log::debug(kComponent, "not storing " + write.key + ": " + e.what());
    return;
  }
  const cache::InsertResult result =
      write.store->insert(write.components, binary, write.metadata, compile_seconds);
  if (start_ns) record_store(write, start_ns, cache::to_string(result.status), binary.size());
  if (result.status == cache::InsertStatus::error) {
    cache::ProcessCache::instance().give_up(write.store.get(), result.detail);
    return;
  }
  if (log::enabled(kComponent, log::Level::debug)) {
    std::string line = "store " + write.key + " (" + write.components.function_name + " on " +
                       write.device_label + "): " + std::string(cache::to_string(result.status)) +
                       ", " + std::to_string(binary.size()) + " bytes, compile time " +
                       std::to_string(compile_seconds) + " s (build " +
                       std::to_string(write.build_seconds) + " s + first run " +
                       std::to_string(first_run_overhead) + " s)";
    if (result.evicted) line += ", evicted " + std::to_string(result.evicted);
    if (!result.detail.empty()) line += ": " + result.detail;
    log::debug(kComponent, line);
  }
}

class Writer {
 public:
  void schedule(CacheWrite write) {
    std::unique_lock lock(mutex_);
    if (stopped_) {
      lock.unlock();
      perform(write);
      return;
    }
    queue_.push_back(std::move(write));
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    wake_.notify_all();
  }

  void finish(bool stop) {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
    if (!stop || stopped_) return;
    stopped_ = true;
    wake_.notify_all();
    std::thread thread = std::move(thread_);
    lock.unlock();
    if (thread.joinable()) thread.join();
  }

 private:
  void loop() {
    telemetry::set_thread_name("cache writer", telemetry::TrackKind::cache_writer);
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopped
      CacheWrite write = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      try {
        perform(write);
      } catch (const std::exception& e) {
        log::debug(kComponent, std::string("not storing a program: ") + e.what());
      }
      write = {};  // release the program and events outside the lock
      lock.lock();
      busy_ = false;
      idle_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<CacheWrite> queue_;
  bool busy_ = false;
  bool stopped_ = false;
  std::thread thread_;
};

Writer& writer() {
  // Never destroyed: exit handlers use it after static destruction may have begun.
  static Writer* instance = new Writer();
  return *instance;
}

}  // namespace

std::shared_mutex& launch_gate() {
  static std::shared_mutex* gate = new std::shared_mutex();  // used by exit handlers
  return *gate;
}

void schedule_cache_write(CacheWrite write) {
  writer().schedule(std::move(write));
}

void finish_cache_writes(bool stop) {
  writer().finish(stop);
}

std::vector<std::uint8_t> read_program_binary(cl_program program, cl_device_id device,
                                              const std::string& device_label) {
  cl_uint devices = 0;
  check_cl(clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices, nullptr),
           "clGetProgramInfo(CL_PROGRAM_NUM_DEVICES)", device_label);
  std::vector<cl_device_id> ids(devices);
  check_cl(clGetProgramInfo(program, CL_PROGRAM_DEVICES, sizeof(cl_device_id) * devices, ids.data(),
                            nullptr),
           "clGetProgramInfo(CL_PROGRAM_DEVICES)", device_label);
  std::vector<std::size_t> sizes(devices);
  check_cl(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(std::size_t) * devices,
                            sizes.data(), nullptr),
           "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)", device_label);
  std::vector<std::vector<std::uint8_t>> binaries(devices);
  std::vector<unsigned char*> pointers(devices);
  for (cl_uint d = 0; d < devices; ++d) {
    binaries[d].resize(sizes[d]);
    pointers[d] = binaries[d].data();
  }
  check_cl(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(unsigned char*) * devices,
                            pointers.data(), nullptr),
           "clGetProgramInfo(CL_PROGRAM_BINARIES)", device_label);
  for (cl_uint d = 0; d < devices; ++d)
    if (ids[d] == device) {
      if (binaries[d].empty())
        throw DeviceError("weft: the driver of " + device_label +
                          " returned an empty program binary");
      return std::move(binaries[d]);
    }
  throw DeviceError("weft: a program built for " + device_label + " has no binary for it");
}

}  // namespace weft::opencl::detail
