#include "plan_serialization.h"

#include <nlohmann/json.hpp>

namespace weft::opencl::detail {

namespace {

using nlohmann::json;

// Bump when the fields below change; older entries then fail to parse and are rewritten.
// 3: typed steps and nested blocks (control flow); 4: host and join steps, token buffers;
// 5: launches name the function they run (identical kernels share one).
constexpr int kPlanFormat = 5;

const char* role_name(BufferPlan::Role role) {
  switch (role) {
    case BufferPlan::Role::Input:
      return "input";
    case BufferPlan::Role::Output:
      return "output";
    case BufferPlan::Role::Temp:
      return "temp";
    case BufferPlan::Role::Result:
      return "result";
  }
  return "temp";
}

BufferPlan::Role role_from(const std::string& name) {
  if (name == "input") return BufferPlan::Role::Input;
  if (name == "output") return BufferPlan::Role::Output;
  if (name == "temp") return BufferPlan::Role::Temp;
  if (name == "result") return BufferPlan::Role::Result;
  throw std::invalid_argument("unknown buffer role \"" + name + "\"");
}

const char* kind_name(StepPlan::Kind kind) {
  switch (kind) {
    case StepPlan::Kind::Launch:
      return "launch";
    case StepPlan::Kind::Loop:
      return "loop";
    case StepPlan::Kind::While:
      return "while";
    case StepPlan::Kind::Cond:
      return "cond";
    case StepPlan::Kind::Host:
      return "host";
    case StepPlan::Kind::Join:
      return "join";
  }
  return "launch";
}

StepPlan::Kind kind_from(const std::string& name) {
  if (name == "launch") return StepPlan::Kind::Launch;
  if (name == "loop") return StepPlan::Kind::Loop;
  if (name == "while") return StepPlan::Kind::While;
  if (name == "cond") return StepPlan::Kind::Cond;
  if (name == "host") return StepPlan::Kind::Host;
  if (name == "join") return StepPlan::Kind::Join;
  throw std::invalid_argument("unknown step kind \"" + name + "\"");
}

// Stored plans come from disk: nesting is bounded so a crafted entry cannot exhaust the
// stack (a hit compares the parsed plan with a fresh one anyway).
constexpr int kMaxBlockDepth = 64;

json types_to_json(const std::vector<TensorType>& types) {
  json out = json::array();
  for (const TensorType& t : types) out.push_back(type_to_string(t));
  return out;
}

std::vector<TensorType> types_from_json(const json& in) {
  std::vector<TensorType> out;
  for (const json& t : in) {
    const std::string text = t.get<std::string>();
    // "f32[3,4]": a dtype name and its dims.
    const std::size_t open = text.find('[');
    if (open == std::string::npos || text.back() != ']')
      throw std::invalid_argument("malformed type \"" + text + "\"");
    const std::optional<DType> dtype = dtype_from_name(text.substr(0, open));
    if (!dtype) throw std::invalid_argument("unknown dtype in \"" + text + "\"");
    TensorType type{*dtype, {}};
    std::string dims = text.substr(open + 1, text.size() - open - 2);
    std::size_t pos = 0;
    while (pos < dims.size()) {
      std::size_t comma = dims.find(',', pos);
      if (comma == std::string::npos) comma = dims.size();
      const std::int64_t d = std::stoll(dims.substr(pos, comma - pos));
      if (d < 0) throw std::invalid_argument("negative dimension in \"" + text + "\"");
      type.shape.push_back(d);
      pos = comma + 1;
    }
    out.push_back(std::move(type));
  }
  return out;
}

json host_to_json(const HostPlan& h) {
  return {{"print", h.is_print},
          {"format", h.format},
          {"callback", h.callback},
          {"effect", h.effect},
          {"ordered", h.ordered},
          {"token_in", h.token_in},
          {"token_out", h.token_out},
          {"args", types_to_json(h.args)},
          {"returns", types_to_json(h.returns)}};
}

HostPlan host_from_json(const json& in) {
  HostPlan h;
  h.is_print = in.at("print").get<bool>();
  h.format = in.at("format").get<std::string>();
  h.callback = in.at("callback").get<int>();
  h.effect = in.at("effect").get<std::string>();
  h.ordered = in.at("ordered").get<bool>();
  h.token_in = in.at("token_in").get<bool>();
  h.token_out = in.at("token_out").get<bool>();
  h.args = types_from_json(in.at("args"));
  h.returns = types_from_json(in.at("returns"));
  return h;
}

json block_to_json(const BlockPlan& block) {
  json buffers = json::array();
  for (const BufferPlan& b : block.buffers)
    buffers.push_back(
        {{"role", role_name(b.role)}, {"index", b.index}, {"bytes", b.bytes}, {"token", b.token}});
  json steps = json::array();
  for (const StepPlan& step : block.steps) {
    json s = {{"kind", kind_name(step.kind)}};
    if (step.kind == StepPlan::Kind::Launch) {
      const LaunchPlan& l = step.launch;
      s["kernel"] = l.kernel;
      s["args"] = l.args;
      s["writes"] = l.writes;
      s["global"] = l.global_size;
      s["local"] = l.local_size;
      s["summary"] = l.summary;
      s["function"] = l.function_name();
    } else {
      s["operands"] = step.operands;
      s["results"] = step.results;
      s["carries"] = step.carries;
      s["xs"] = step.xs;
      s["length"] = step.length;
      s["reverse"] = step.reverse;
      s["index_dtype"] = std::string(dtype_name(step.index_dtype));
      if (step.kind == StepPlan::Kind::Host) s["host"] = host_to_json(step.host);
      json regions = json::array();
      for (const BlockPlan& region : step.regions) regions.push_back(block_to_json(region));
      s["regions"] = std::move(regions);
    }
    steps.push_back(std::move(s));
  }
  return {{"buffers", std::move(buffers)},
          {"steps", std::move(steps)},
          {"outputs", block.outputs},
          {"params", block.num_params}};
}

BlockPlan block_from_json(const json& in, int depth) {
  if (depth > kMaxBlockDepth)
    throw std::invalid_argument("blocks nest deeper than " + std::to_string(kMaxBlockDepth));
  BlockPlan block;
  for (const json& b : in.at("buffers"))
    block.buffers.push_back({role_from(b.at("role").get<std::string>()), b.at("index").get<int>(),
                             b.at("bytes").get<std::size_t>(), b.at("token").get<bool>()});
  for (const json& s : in.at("steps")) {
    StepPlan step;
    step.kind = kind_from(s.at("kind").get<std::string>());
    if (step.kind == StepPlan::Kind::Launch) {
      step.launch = {s.at("kernel").get<std::string>(),      s.at("args").get<std::vector<int>>(),
                     s.at("writes").get<std::vector<int>>(), s.at("global").get<std::size_t>(),
                     s.at("local").get<std::size_t>(),       s.at("summary").get<int>(),
                     s.at("function").get<std::string>()};
    } else {
      step.operands = s.at("operands").get<std::vector<int>>();
      step.results = s.at("results").get<std::vector<int>>();
      step.carries = s.at("carries").get<int>();
      step.xs = s.at("xs").get<int>();
      step.length = s.at("length").get<std::int64_t>();
      step.reverse = s.at("reverse").get<bool>();
      const std::string index_dtype = s.at("index_dtype").get<std::string>();
      const std::optional<DType> parsed = dtype_from_name(index_dtype);
      if (!parsed) throw std::invalid_argument("unknown index dtype \"" + index_dtype + "\"");
      step.index_dtype = *parsed;
      if (step.kind == StepPlan::Kind::Host) step.host = host_from_json(s.at("host"));
      for (const json& region : s.at("regions"))
        step.regions.push_back(block_from_json(region, depth + 1));
    }
    block.steps.push_back(std::move(step));
  }
  block.outputs = in.at("outputs").get<std::vector<int>>();
  block.num_params = in.at("params").get<int>();
  return block;
}

std::string block_difference(const BlockPlan& a, const BlockPlan& b, const std::string& where) {
  if (a.buffers.size() != b.buffers.size())
    return where + std::to_string(a.buffers.size()) + " buffers, expected " +
           std::to_string(b.buffers.size());
  for (std::size_t i = 0; i < a.buffers.size(); ++i) {
    const BufferPlan& x = a.buffers[i];
    const BufferPlan& y = b.buffers[i];
    if (x.role != y.role || x.index != y.index || x.bytes != y.bytes || x.token != y.token)
      return where + "buffer " + std::to_string(i) + " is " + role_name(x.role) + " " +
             std::to_string(x.index) + " of " + std::to_string(x.bytes) + " bytes, expected " +
             role_name(y.role) + " " + std::to_string(y.index) + " of " + std::to_string(y.bytes) +
             " bytes";
  }
  if (a.steps.size() != b.steps.size())
    return where + std::to_string(a.steps.size()) + " steps, expected " +
           std::to_string(b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const StepPlan& x = a.steps[i];
    const StepPlan& y = b.steps[i];
    const std::string step = where + "step " + std::to_string(i);
    if (x.kind != y.kind)
      return step + " is a " + kind_name(x.kind) + ", expected a " + kind_name(y.kind);
    if (x.kind == StepPlan::Kind::Launch) {
      const LaunchPlan& l = x.launch;
      const LaunchPlan& r = y.launch;
      if (l.kernel != r.kernel || l.function_name() != r.function_name() || l.args != r.args ||
          l.writes != r.writes || l.global_size != r.global_size || l.local_size != r.local_size ||
          l.summary != r.summary)
        return step + " (" + l.kernel + ") differs from " + r.kernel;
      continue;
    }
    if (x.operands != y.operands || x.results != y.results || x.carries != y.carries ||
        x.xs != y.xs || x.length != y.length || x.reverse != y.reverse ||
        x.index_dtype != y.index_dtype || !(x.host == y.host) ||
        x.regions.size() != y.regions.size())
      return step + " (" + kind_name(x.kind) + ") has other operands, results or attributes";
    for (std::size_t r = 0; r < x.regions.size(); ++r)
      if (std::string d = block_difference(x.regions[r], y.regions[r],
                                           step + " region " + std::to_string(r) + ": ");
          !d.empty())
        return d;
  }
  if (a.outputs != b.outputs) return where + "its outputs name other buffers";
  if (a.num_params != b.num_params) return where + "it takes another number of parameters";
  return {};
}

}  // namespace

std::string serialize_plan(const ProgramPlan& plan) {
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
              {"main", block_to_json(plan)},
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
    static_cast<BlockPlan&>(plan) = block_from_json(in.at("main"), 0);
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
  return block_difference(stored, expected, "");
}

}  // namespace weft::opencl::detail
