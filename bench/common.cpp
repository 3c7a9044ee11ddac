#include "common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <string>
#include <utility>

#include "weft/backend.h"
#include "weft/error.h"
#include "weft/opencl/cl_error.h"
#include "weft/opencl/device_info.h"
#include "weft/opencl/executable.h"
#include "weft/opencl/register.h"  // device() works in binaries that include no weft.h
#include "weft/opencl/tiering.h"

namespace weft::bench {

namespace {

// The benchmarks time kernels: tiered execution would run a program's first calls, and the
// timed ones until it is hot and built, on the reference interpreter (docs/runtime.md). A
// WEFT_TIERED set by hand still wins.
[[maybe_unused]] const bool kTieringOff = [] {
  if (!std::getenv("WEFT_TIERED")) opencl::set_tiering(opencl::Tiering::off);
  return true;
}();

}  // namespace

opencl::OpenCLDevice& device() {
  return dynamic_cast<opencl::OpenCLDevice&>(default_device());
}

std::string device_line() {
  const opencl::DeviceInfo& info = device().info();
  return device().label() + ", " + info.platform_name + " " + info.platform_version + ", " +
         std::to_string(info.compute_units) + " compute units";
}

void check(cl_int status, const char* call) {
  opencl::check_cl(status, call, device().label());
}

RawProgram::RawProgram(const std::string& source)
    : program_(device().build_program(source, "-cl-std=CL1.2")) {}

opencl::ClKernel RawProgram::kernel(const char* name) const {
  cl_int status = CL_SUCCESS;
  opencl::ClKernel kernel(clCreateKernel(program_.get(), name, &status));
  check(status, "clCreateKernel");
  return kernel;
}

opencl::ClMem make_buffer(std::size_t bytes) {
  cl_int status = CL_SUCCESS;
  opencl::ClMem mem(clCreateBuffer(device().context(), CL_MEM_READ_WRITE, bytes, nullptr, &status));
  check(status, "clCreateBuffer");
  return mem;
}

opencl::ClMem make_buffer(const std::vector<float>& values) {
  cl_int status = CL_SUCCESS;
  opencl::ClMem mem(clCreateBuffer(device().context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   values.size() * sizeof(float), const_cast<float*>(values.data()),
                                   &status));
  check(status, "clCreateBuffer");
  return mem;
}

std::vector<float> read_buffer(cl_mem mem, std::size_t count) {
  std::vector<float> out(count);
  check(clEnqueueReadBuffer(device().queue(), mem, CL_TRUE, 0, count * sizeof(float), out.data(), 0,
                            nullptr, nullptr),
        "clEnqueueReadBuffer");
  return out;
}

void launch_and_wait(cl_kernel kernel, std::size_t global, std::size_t local) {
  cl_event done = nullptr;
  check(clEnqueueNDRangeKernel(device().queue(), kernel, 1, nullptr, &global, &local, 0, nullptr,
                               &done),
        "clEnqueueNDRangeKernel");
  opencl::ClEvent event(done);
  check(clWaitForEvents(1, &done), "clWaitForEvents");
}

PlanLaunches::PlanLaunches(std::shared_ptr<Executable> executable,
                           const std::vector<cl_mem>& inputs)
    : executable_(std::move(executable)) {
  auto* exe = dynamic_cast<opencl::OpenCLExecutable*>(executable_.get());
  if (!exe) throw InvalidArgumentError("bench: PlanLaunches needs an OpenCL executable");
  plan_ = &exe->plan();
  for (const opencl::BufferPlan& buffer : plan_->buffers) {
    if (buffer.role == opencl::BufferPlan::Role::Input) {
      const auto index = static_cast<std::size_t>(buffer.index);
      if (index >= inputs.size())
        throw InvalidArgumentError("bench: the plan reads parameter " + std::to_string(index) +
                                   " but " + std::to_string(inputs.size()) + " were given");
      owned_.emplace_back();
      mems_.push_back(inputs[index]);
    } else {
      owned_.push_back(make_buffer(std::max<std::size_t>(buffer.bytes, 1)));
      mems_.push_back(owned_.back().get());
    }
  }
  for (const opencl::StepPlan& step : plan_->steps) {
    if (step.kind != opencl::StepPlan::Kind::Launch)
      throw InvalidArgumentError("bench: PlanLaunches runs kernel launches only, not control flow");
    launches_.push_back(&step.launch);
  }
  for (const opencl::LaunchPlan* launch : launches_) {
    cl_int status = CL_SUCCESS;
    kernels_.emplace_back(clCreateKernel(exe->program(), launch->function_name().c_str(), &status));
    check(status, "clCreateKernel");
  }
}

void PlanLaunches::renew_outputs() {
  for (std::size_t b = 0; b < plan_->buffers.size(); ++b) {
    const opencl::BufferPlan& buffer = plan_->buffers[b];
    if (buffer.role != opencl::BufferPlan::Role::Output) continue;
    owned_[b] = make_buffer(std::max<std::size_t>(buffer.bytes, 1));
    mems_[b] = owned_[b].get();
  }
}

void PlanLaunches::run() {
  opencl::ClEvent previous;
  for (std::size_t l = 0; l < launches_.size(); ++l) {
    const opencl::LaunchPlan& launch = *launches_[l];
    if (launch.global_size == 0) continue;
    cl_kernel kernel = kernels_[l].get();
    for (std::size_t a = 0; a < launch.args.size(); ++a)
      set_arg(kernel, static_cast<cl_uint>(a), mems_[static_cast<std::size_t>(launch.args[a])]);
    cl_event wait = previous.get(), done = nullptr;
    check(clEnqueueNDRangeKernel(device().queue(), kernel, 1, nullptr, &launch.global_size,
                                 launch.local_size ? &launch.local_size : nullptr, wait ? 1 : 0,
                                 wait ? &wait : nullptr, &done),
          "clEnqueueNDRangeKernel");
    previous = opencl::ClEvent(done);
  }
  cl_event last = previous.get();
  if (last) check(clWaitForEvents(1, &last), "clWaitForEvents");
}

cl_mem PlanLaunches::output(std::size_t index) const {
  return mems_.at(static_cast<std::size_t>(plan_->outputs.at(index)));
}

double Samples::median() const {
  std::vector<double> s = seconds;
  std::sort(s.begin(), s.end());
  if (s.empty()) return 0;
  const std::size_t mid = s.size() / 2;
  return s.size() % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

double Samples::best() const {
  return seconds.empty() ? 0 : *std::min_element(seconds.begin(), seconds.end());
}

std::vector<Samples> time_interleaved(const std::vector<std::function<void()>>& contenders,
                                      int warmups, int rounds) {
  for (int w = 0; w < warmups; ++w)
    for (const auto& run : contenders) run();
  std::vector<Samples> samples(contenders.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t c = 0; c < contenders.size(); ++c) {
      const auto start = std::chrono::steady_clock::now();
      contenders[c]();
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      samples[c].seconds.push_back(elapsed.count());
    }
  }
  return samples;
}

std::string format(double value, int precision) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

std::string met(bool yes) {
  return yes ? "yes" : "no";
}

void print_summary(const std::vector<SummaryRow>& rows) {
  const std::vector<std::string> head = {"benchmark", "weft", "baseline", "ratio", "goal", "met"};
  std::vector<std::size_t> width(head.size());
  auto cells = [](const SummaryRow& r) {
    return std::vector<std::string>{r.benchmark, r.weft, r.baseline, r.ratio, r.goal, r.met};
  };
  for (std::size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
  for (const SummaryRow& row : rows) {
    const auto c = cells(row);
    for (std::size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  }
  auto print_line = [&](const std::vector<std::string>& c) {
    std::string line = "|";
    for (std::size_t i = 0; i < c.size(); ++i)
      line += " " + c[i] + std::string(width[i] - c[i].size(), ' ') + " |";
    std::printf("%s\n", line.c_str());
  };
  std::printf("\nSummary (%s)\n", device_line().c_str());
  print_line(head);
  std::vector<std::string> rule;
  for (std::size_t w : width) rule.push_back(std::string(w, '-'));
  print_line(rule);
  for (const SummaryRow& row : rows) print_line(cells(row));
  for (const SummaryRow& row : rows) {
    std::string line = "@summary";
    for (const std::string& c : cells(row)) line += "\t" + c;
    std::printf("%s\n", line.c_str());
  }
  std::fflush(stdout);
}

namespace {

constexpr const char* kTriadSource = R"CL(
__kernel void triad_simple(__global float* restrict a, __global const float* restrict b,
                           __global const float* restrict c, const float s) {
  const int i = get_global_id(0);
  a[i] = b[i] + s * c[i];
}

// 16 consecutive float4 per work-item.
__kernel void triad_blocked(__global float4* restrict a, __global const float4* restrict b,
                            __global const float4* restrict c, const float s) {
  const int base = get_global_id(0) * 16;
  for (int k = 0; k < 16; ++k) a[base + k] = b[base + k] + s * c[base + k];
}
)CL";

constexpr float kTriadScalar = 3.0f;
constexpr std::size_t kBlockedElements = 64;  // floats per work-item of triad_blocked

}  // namespace

Triad::Triad(std::size_t n) : n_(n), program_(kTriadSource) {
  if (n % (kBlockedElements * 256) != 0)
    throw InvalidArgumentError("bench: the triad length must be a multiple of 16384");
  simple_ = program_.kernel("triad_simple");
  blocked_ = program_.kernel("triad_blocked");
  std::vector<float> b(n), c(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = static_cast<float>(i % 1000) * 0.001f;
    c[i] = static_cast<float>(i % 7) - 3.0f;
  }
  a_ = make_buffer(n * sizeof(float));
  b_ = make_buffer(b);
  c_ = make_buffer(c);
  for (cl_kernel k : {simple_.get(), blocked_.get()}) {
    set_arg(k, 0, a_.get());
    set_arg(k, 1, b_.get());
    set_arg(k, 2, c_.get());
    set_arg(k, 3, kTriadScalar);
  }
}

void Triad::run_simple() {
  launch_and_wait(simple_.get(), n_, 256);
}

void Triad::run_blocked() {
  launch_and_wait(blocked_.get(), n_ / kBlockedElements, 64);
}

void Triad::verify() const {
  const std::vector<float> a = read_buffer(a_.get(), n_);
  for (std::size_t i : {std::size_t{0}, std::size_t{12345}, n_ / 2 + 7, n_ - 1}) {
    const float expect =
        static_cast<float>(i % 1000) * 0.001f + kTriadScalar * (static_cast<float>(i % 7) - 3.0f);
    if (std::fabs(a[i] - expect) > 1e-5f * (1 + std::fabs(expect)))
      throw Error("bench: the triad computed a[" + std::to_string(i) +
                  "] = " + std::to_string(a[i]) + ", expected " + std::to_string(expect));
  }
}

TriadResult measure_triad(std::size_t n, int rounds) {
  Triad triad(n);
  const auto samples =
      time_interleaved({[&] { triad.run_simple(); }, [&] { triad.run_blocked(); }}, 2, rounds);
  triad.verify();
  return {triad.bytes() / samples[0].median() / 1e9, triad.bytes() / samples[1].median() / 1e9};
}

std::map<std::string, double> jax_peer_seconds(const std::string& script, int rounds) {
  const std::string command =
      "python3 '" + script + "' --rounds " + std::to_string(rounds) + " 2>/dev/null";
  std::map<std::string, double> out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::string text;
  char buffer[256];
  while (fgets(buffer, sizeof buffer, pipe)) text += buffer;
  if (pclose(pipe) != 0) return {};
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name;
    double seconds = 0;
    if (words >> name >> seconds && name.rfind("jax_", 0) == 0) out[name.substr(4)] = seconds;
  }
  return out;
}

}  // namespace weft::bench
