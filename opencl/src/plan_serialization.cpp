#include "plan_serialization.h"

#include <nlohmann/json.hpp>

namespace weft::opencl::detail {

namespace {

using nlohmann::json;

// Bump when the fields below change; older entries then fail to parse and are rewritten.
constexpr int kPlanFormat = 2;

const char* role_name(BufferPlan::Role role) {
  switch (role) {
    case BufferPlan::Role::Input:
      return "input";
    case BufferPlan::Role::Output:
      return "output";
    case BufferPlan::Role::Temp:
      return "temp";
  }
  return "temp";
}

BufferPlan::Role role_from(const std::string& name) {
  if (name == "input") return BufferPlan::Role::Input;
  if (name == "output") return BufferPlan::Role::Output;
  if (name == "temp") return BufferPlan::Role::Temp;
  throw std::invalid_argument("unknown buffer role \"" + name + "\"");
}

}  // namespace

std::string serialize_plan(const ProgramPlan& plan) {
  json buffers = json::array();
  for (const BufferPlan& b : plan.buffers)
    buffers.push_back({{"role", role_name(b.role)}, {"index", b.index}, {"bytes", b.bytes}});
  json launches = json::array();
  for (const LaunchPlan& l : plan.launches)
    launches.push_back({{"kernel", l.kernel},
                        {"args", l.args},
                        {"writes", l.writes},
                        {"global", l.global_size},
                        {"local", l.local_size}});
  json kernels = json::array();
  for (const KernelSummary& k : plan.info.kernels)
    kernels.push_back({{"name", k.name},
                       {"kind", k.kind},
                       {"fused_ops", k.fused_ops},
                       {"elements", k.elements},
                       {"launches", k.launches},
                       {"why_buffer", k.why_buffer}});
  json out = {{"format", kPlanFormat},
              {"build_options", plan.build_options},
              {"buffers", std::move(buffers)},
              {"launches", std::move(launches)},
              {"outputs", plan.outputs},
              {"kernels", std::move(kernels)},
              {"intermediate_buffers", plan.info.intermediate_buffers},
              {"source", plan.source}};
  return out.dump();
}

std::optional<ProgramPlan> parse_plan(std::string_view text, std::string* error) {
  try {
    const json in = json::parse(text);
    if (in.at("format").get<int>() != kPlanFormat)
      throw std::invalid_argument("plan format " + in.at("format").dump() + ", expected " +
                                  std::to_string(kPlanFormat));
    ProgramPlan plan;
    plan.build_options = in.at("build_options").get<std::string>();
    for (const json& b : in.at("buffers"))
      plan.buffers.push_back({role_from(b.at("role").get<std::string>()), b.at("index").get<int>(),
                              b.at("bytes").get<std::size_t>()});
    for (const json& l : in.at("launches"))
      plan.launches.push_back(
          {l.at("kernel").get<std::string>(), l.at("args").get<std::vector<int>>(),
           l.at("writes").get<std::vector<int>>(), l.at("global").get<std::size_t>(),
           l.at("local").get<std::size_t>()});
    plan.outputs = in.at("outputs").get<std::vector<int>>();
    for (const json& k : in.at("kernels")) {
      KernelSummary summary;
      summary.name = k.at("name").get<std::string>();
      summary.kind = k.at("kind").get<std::string>();
      summary.fused_ops = k.at("fused_ops").get<std::vector<std::string>>();
      summary.elements = k.at("elements").get<std::int64_t>();
      summary.launches = k.at("launches").get<int>();
      summary.why_buffer = k.at("why_buffer").get<std::string>();
      plan.info.kernels.push_back(std::move(summary));
    }
    plan.info.intermediate_buffers = in.at("intermediate_buffers").get<int>();
    plan.source = in.at("source").get<std::string>();
    plan.info.source = plan.source;
    return plan;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
}

std::string plan_difference(const ProgramPlan& stored, const ProgramPlan& expected) {
  if (stored.build_options != expected.build_options)
    return "build options \"" + stored.build_options + "\", expected \"" + expected.build_options +
           "\"";
  if (stored.source != expected.source) return "its OpenCL source differs";
  if (stored.buffers.size() != expected.buffers.size())
    return std::to_string(stored.buffers.size()) + " buffers, expected " +
           std::to_string(expected.buffers.size());
  for (std::size_t i = 0; i < stored.buffers.size(); ++i) {
    const BufferPlan& a = stored.buffers[i];
    const BufferPlan& b = expected.buffers[i];
    if (a.role != b.role || a.index != b.index || a.bytes != b.bytes)
      return "buffer " + std::to_string(i) + " is " + role_name(a.role) + " " +
             std::to_string(a.index) + " of " + std::to_string(a.bytes) + " bytes, expected " +
             role_name(b.role) + " " + std::to_string(b.index) + " of " + std::to_string(b.bytes) +
             " bytes";
  }
  if (stored.launches.size() != expected.launches.size())
    return std::to_string(stored.launches.size()) + " launches, expected " +
           std::to_string(expected.launches.size());
  for (std::size_t i = 0; i < stored.launches.size(); ++i) {
    const LaunchPlan& a = stored.launches[i];
    const LaunchPlan& b = expected.launches[i];
    if (a.kernel != b.kernel || a.args != b.args || a.writes != b.writes ||
        a.global_size != b.global_size || a.local_size != b.local_size)
      return "launch " + std::to_string(i) + " (" + a.kernel + ") differs from " + b.kernel;
  }
  if (stored.outputs != expected.outputs) return "its outputs name other buffers";
  return {};
}

}  // namespace weft::opencl::detail
