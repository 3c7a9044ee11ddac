#include "record_json.h"

#include <cmath>

namespace weft::telemetry::detail {

namespace {

using nlohmann::json;

bool get_text(const json& j, const char* key, std::string& out, std::string& problem) {
  auto found = j.find(key);
  if (found == j.end() || !found->is_string()) {
    problem = std::string("\"") + key + "\" is missing or not text";
    return false;
  }
  out = found->get<std::string>();
  return true;
}

bool get_int(const json& j, const char* key, std::int64_t& out, std::string& problem) {
  auto found = j.find(key);
  if (found == j.end() || !found->is_number_integer()) {
    problem = std::string("\"") + key + "\" is missing or not an integer";
    return false;
  }
  out = found->get<std::int64_t>();
  return true;
}

bool get_id(const json& j, const char* key, Id& out, std::string& problem) {
  std::int64_t value = 0;
  if (!get_int(j, key, value, problem)) return false;
  if (value < 0) {
    problem = std::string("\"") + key + "\" is negative";
    return false;
  }
  out = static_cast<Id>(value);
  return true;
}

}  // namespace

json to_json(const Span& span, std::int64_t origin_ns) {
  json args = json::object();
  for (const auto& [key, value] : span.args) args[key] = value;
  return {{"id", span.id},
          {"parent", span.parent},
          {"kind", to_string(span.kind)},
          {"track",
           {{"kind", to_string(span.track.kind)},
            {"name", span.track.name},
            {"device", span.track.device}}},
          {"name", span.name},
          {"effect", span.effect},
          {"seq", span.seq},
          {"start_ns", span.start_ns - origin_ns},
          {"end_ns", span.end_ns - origin_ns},
          {"args", std::move(args)}};
}

json to_json(const Edge& edge) {
  return {{"from", edge.from}, {"to", edge.to}, {"effect", edge.effect}};
}

json to_json(const Program& program) {
  json kernels = json::array();
  for (const Program::Kernel& k : program.kernels)
    kernels.push_back({{"name", k.name}, {"kind", k.kind}, {"fused_ops", k.fused_ops}});
  return {{"id", program.id},
          {"function", program.function},
          {"device", program.device},
          {"cache_key", program.cache_key},
          {"cache_status", program.cache_status},
          {"ir", program.ir},
          {"source", program.source},
          {"kernels", std::move(kernels)}};
}

std::optional<Span> span_from_json(const json& j, std::string& problem) {
  if (!j.is_object()) {
    problem = "a span is not a JSON object";
    return std::nullopt;
  }
  Span span;
  std::string kind, track_kind;
  if (!get_id(j, "id", span.id, problem) || !get_id(j, "parent", span.parent, problem) ||
      !get_text(j, "kind", kind, problem) || !get_text(j, "name", span.name, problem) ||
      !get_text(j, "effect", span.effect, problem) || !get_int(j, "seq", span.seq, problem) ||
      !get_int(j, "start_ns", span.start_ns, problem) ||
      !get_int(j, "end_ns", span.end_ns, problem))
    return std::nullopt;
  if (span.id == 0) {
    problem = "a span has id 0";
    return std::nullopt;
  }
  std::optional<SpanKind> parsed = parse_span_kind(kind);
  if (!parsed) {
    problem = "unknown span kind \"" + kind + "\"";
    return std::nullopt;
  }
  span.kind = *parsed;
  if (span.end_ns < span.start_ns) {
    problem = "a span ends before it starts";
    return std::nullopt;
  }
  auto track = j.find("track");
  if (track == j.end() || !track->is_object() || !get_text(*track, "kind", track_kind, problem) ||
      !get_text(*track, "name", span.track.name, problem) ||
      !get_text(*track, "device", span.track.device, problem))
    return std::nullopt;
  std::optional<TrackKind> parsed_track = parse_track_kind(track_kind);
  if (!parsed_track) {
    problem = "unknown track kind \"" + track_kind + "\"";
    return std::nullopt;
  }
  span.track.kind = *parsed_track;
  auto args = j.find("args");
  if (args == j.end() || !args->is_object()) {
    problem = "\"args\" is missing or not an object";
    return std::nullopt;
  }
  for (auto& [key, value] : args->items()) {
    if (!value.is_string()) {
      problem = "argument \"" + key + "\" is not text";
      return std::nullopt;
    }
    span.args.emplace_back(key, value.get<std::string>());
  }
  return span;
}

std::optional<Edge> edge_from_json(const json& j, std::string& problem) {
  Edge edge;
  if (!j.is_object() || !get_id(j, "from", edge.from, problem) ||
      !get_id(j, "to", edge.to, problem) || !get_text(j, "effect", edge.effect, problem)) {
    if (problem.empty()) problem = "an edge is not a JSON object";
    return std::nullopt;
  }
  return edge;
}

std::optional<Program> program_from_json(const json& j, std::string& problem) {
  Program p;
  if (!j.is_object() || !get_id(j, "id", p.id, problem) ||
      !get_text(j, "function", p.function, problem) || !get_text(j, "device", p.device, problem) ||
      !get_text(j, "cache_key", p.cache_key, problem) ||
      !get_text(j, "cache_status", p.cache_status, problem) || !get_text(j, "ir", p.ir, problem) ||
      !get_text(j, "source", p.source, problem)) {
    if (problem.empty()) problem = "a program is not a JSON object";
    return std::nullopt;
  }
  auto kernels = j.find("kernels");
  if (kernels == j.end() || !kernels->is_array()) {
    problem = "\"kernels\" is missing or not an array";
    return std::nullopt;
  }
  for (const json& k : *kernels) {
    Program::Kernel kernel;
    if (!k.is_object() || !get_text(k, "name", kernel.name, problem) ||
        !get_text(k, "kind", kernel.kind, problem)) {
      if (problem.empty()) problem = "a kernel is not a JSON object";
      return std::nullopt;
    }
    auto ops = k.find("fused_ops");
    if (ops == k.end() || !ops->is_array()) {
      problem = "\"fused_ops\" is missing or not an array";
      return std::nullopt;
    }
    for (const json& op : *ops) {
      if (!op.is_string()) {
        problem = "a fused op is not text";
        return std::nullopt;
      }
      kernel.fused_ops.push_back(op.get<std::string>());
    }
    p.kernels.push_back(std::move(kernel));
  }
  return p;
}

json to_json(const Counter& counter, std::int64_t origin_ns) {
  return {{"name", counter.name},
          {"device", counter.device},
          {"time_ns", counter.time_ns - origin_ns},
          {"value", counter.value}};
}

std::optional<Counter> counter_from_json(const json& j, std::string& problem) {
  Counter counter;
  if (!j.is_object() || !get_text(j, "name", counter.name, problem) ||
      !get_text(j, "device", counter.device, problem) ||
      !get_int(j, "time_ns", counter.time_ns, problem)) {
    if (problem.empty()) problem = "a counter is not a JSON object";
    return std::nullopt;
  }
  if (counter.name.empty()) {
    problem = "a counter has an empty name";
    return std::nullopt;
  }
  auto value = j.find("value");
  if (value == j.end() || !value->is_number() || !std::isfinite(value->get<double>())) {
    problem = "\"value\" is missing or not a finite number";
    return std::nullopt;
  }
  counter.value = value->get<double>();
  return counter;
}

}  // namespace weft::telemetry::detail
