// Records as JSON objects: the live stream's lines. Parsing validates every field (the bytes
// come from a socket).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "weft/telemetry/record.h"

namespace weft::telemetry::detail {

// Times become nanoseconds since `origin_ns`.
nlohmann::json to_json(const Span& span, std::int64_t origin_ns);
nlohmann::json to_json(const Edge& edge);
nlohmann::json to_json(const Program& program);
nlohmann::json to_json(const Counter& counter, std::int64_t origin_ns);

// Nullopt with `problem` set when a field is missing or of the wrong type.
std::optional<Span> span_from_json(const nlohmann::json& json, std::string& problem);
std::optional<Edge> edge_from_json(const nlohmann::json& json, std::string& problem);
std::optional<Program> program_from_json(const nlohmann::json& json, std::string& problem);
// A counter needs a name, a device (may be empty), an integer time and a finite number.
std::optional<Counter> counter_from_json(const nlohmann::json& json, std::string& problem);

}  // namespace weft::telemetry::detail
