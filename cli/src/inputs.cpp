#include "inputs.h"

#include <unistd.h>

#include <limits>
#include <optional>

#include "format.h"
#include "npy.h"
#include "random_inputs.h"
#include "weft/error.h"
#include "weft/opencl/device_info.h"

namespace weft::cli {

namespace {

constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();

// The bytes an input of this type takes, or kUnbounded when that does not fit in 64 bits.
std::uint64_t bytes_of(const Param& p) {
  std::uint64_t bytes = dtype_size(p.dtype);
  for (std::int64_t d : p.shape)
    if (d < 0 || __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes))
      return kUnbounded;
  return bytes;
}

// "2.0 GiB (2147483648 bytes)"
std::string size_text(std::uint64_t bytes) {
  if (bytes == kUnbounded) return "more than 16 EiB";
  return format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

std::string describe(const Param& p, std::size_t index) {
  return "input '" + p.name + "' (parameter " + std::to_string(index) + ", " +
         type_string(p.dtype, p.shape) + ", " + (p.from_file ? "from " + p.source : "random") + ")";
}

// Resolves NAME_OR_INDEX against the parameters: a name first, then a decimal index.
std::size_t find_param(const std::vector<Param>& params, std::string key, const std::string& spec,
                       const std::string& file) {
  if (!key.empty() && key[0] == '%') key.erase(0, 1);
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].name == key) return i;
  if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos && key.size() < 10 &&
      std::stoul(key) < params.size())
    return std::stoul(key);
  std::string names;
  for (std::size_t i = 0; i < params.size(); ++i)
    names += (i ? ", " : "") + params[i].name + " (" + std::to_string(i) + ")";
  throw InvalidArgumentError("--input " + spec + ": " + file + " has no parameter '" + key +
                             "'; its parameters are " + (names.empty() ? "none" : names));
}

}  // namespace

MemoryLimits memory_limits(const Device& device) {
  MemoryLimits limits{device.name(), 0, 0, 0};
  try {
    const opencl::DeviceInfo info = opencl::info_of(device);
    limits.max_alloc_bytes = info.max_alloc_bytes;
    limits.global_mem_bytes = info.global_mem_bytes;
  } catch (const InvalidArgumentError&) {
    // Not an OpenCL device: its limits are unknown here, and its own allocation reports them.
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0 &&
      __builtin_mul_overflow(static_cast<std::uint64_t>(pages),
                             static_cast<std::uint64_t>(page_size), &limits.host_bytes))
    limits.host_bytes = kUnbounded;
  return limits;
}

void check_input_sizes(const std::vector<Param>& params, const MemoryLimits& limits,
                       const std::string& file) {
  const std::string advice = "; use smaller shapes in " + file +
                             " or a device with more memory (`weft devices` lists each "
                             "device's global memory and largest allocation)";
  std::uint64_t total = 0;
  std::string breakdown;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    const std::uint64_t bytes = bytes_of(p);
    if (limits.max_alloc_bytes > 0 && bytes > limits.max_alloc_bytes)
      throw InvalidArgumentError(
          describe(p, i) + " takes " + size_text(bytes) + ", more than the " +
          size_text(limits.max_alloc_bytes) + " " + limits.device +
          " can allocate in one buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)" + advice);
    if (limits.host_bytes > 0 && bytes > limits.host_bytes)
      throw InvalidArgumentError(describe(p, i) + " takes " + size_text(bytes) +
                                 ", more than this machine's " + size_text(limits.host_bytes) +
                                 " of memory" + advice);
    if (__builtin_add_overflow(total, bytes, &total)) total = kUnbounded;
    breakdown += (i ? ", " : "") + p.name + " " + format_bytes(bytes);
  }
  if (limits.global_mem_bytes > 0 && total > limits.global_mem_bytes)
    throw InvalidArgumentError("the inputs of " + file + " take " + size_text(total) +
                               " together (" + breakdown + "), more than " + limits.device + "'s " +
                               size_text(limits.global_mem_bytes) +
                               " of global memory (CL_DEVICE_GLOBAL_MEM_SIZE)" + advice);
  if (limits.host_bytes > 0 && total > limits.host_bytes)
    throw InvalidArgumentError("the inputs of " + file + " take " + size_text(total) +
                               " together (" + breakdown + "), more than this machine's " +
                               size_text(limits.host_bytes) + " of memory" + advice);
}

std::vector<HostArray> load_inputs(const std::vector<std::string>& specs, std::uint64_t seed,
                                   const std::string& file, const MemoryLimits& limits,
                                   std::vector<Param>& params) {
  // First only resolve which parameter each file is for: nothing is read yet.
  std::vector<std::optional<std::string>> paths(params.size());
  for (const std::string& spec : specs) {
    const std::size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw InvalidArgumentError(
          "--input " + spec + ": expected NAME=PATH.npy or INDEX=PATH.npy, e.g. --input x=x.npy");
    const std::size_t i = find_param(params, spec.substr(0, eq), spec, file);
    if (paths[i])
      throw InvalidArgumentError("--input " + spec + ": parameter '" + params[i].name +
                                 "' was already given by --input");
    paths[i] = spec.substr(eq + 1);
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    params[i].from_file = paths[i].has_value();
    params[i].source = paths[i] ? *paths[i] : "random (seed " + std::to_string(seed) + ")";
  }

  // The parameters' types fix every input's size: check them before making any data.
  check_input_sizes(params, limits, file);

  std::vector<HostArray> inputs;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    if (!paths[i]) {
      inputs.push_back(random_array(p.dtype, p.shape, seed, i));
      continue;
    }
    // The header alone says whether the file fits the parameter; the data is read only then.
    npy::Reader reader{std::filesystem::path(*paths[i])};
    const npy::Header& h = reader.header();
    if (h.dtype != p.dtype || h.shape != p.shape)
      throw InvalidArgumentError("input '" + p.name + "' (parameter " + std::to_string(i) +
                                 ") expects " + type_string(p.dtype, p.shape) + " but " +
                                 *paths[i] + " holds " + type_string(h.dtype, h.shape));
    inputs.push_back(reader.read_data());
  }
  return inputs;
}

}  // namespace weft::cli
