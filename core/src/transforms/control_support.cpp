#include <algorithm>

#include "transforms/control_rules.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ir/effects.h"
#include "weft/ir/regions.h"
#include "weft/ops.h"

namespace weft::detail {

std::vector<TensorType> value_types(std::span<const Array> values) {
  std::vector<TensorType> out;
  out.reserve(values.size());
  for (const Array& v : values) out.push_back({v.dtype(), v.shape()});
  return out;
}

std::vector<bool> present(std::span<const Tangent> tangents) {
  std::vector<bool> out;
  for (const Tangent& t : tangents) out.push_back(t.has_value());
  return out;
}

std::vector<Graph> graphs_of(std::vector<TracedRegion>& regions) {
  std::vector<Graph> out;
  for (TracedRegion& r : regions) out.push_back(std::move(r.graph));
  return out;
}

Array instantiate(const Tangent& t, const TensorType& type, const std::source_location& loc) {
  return t ? *t : zeros_of(type, loc);
}

RegionInfo transformed_region(const Node& n, std::size_t k, const std::string& api,
                              const std::source_location& loc) {
  const std::string name = region_name(n.op, k);
  return {.name = name,
          .function = name + " (" + api + " of " + std::string(op_name(n.op)) + " at " +
                      n.origin.describe() + ")",
          .api = api,
          .loc = loc};
}

void refuse(std::string_view refusal, const Node& n, const std::string& api) {
  const std::string at = n.origin.describe();
  std::string message(refusal);
  if (const std::size_t k = message.find("{at}"); k != std::string::npos)
    throw TransformError(api + ": " + message.replace(k, 4, at));
  throw TransformError(api + ": " + message + " (" + std::string(op_name(n.op)) + " at " + at +
                       ")");
}

void append_tangents(std::vector<Array>& out, std::span<const Tangent> tangents,
                     std::span<const Array> primals, const std::vector<bool>& flags,
                     const std::source_location& loc) {
  for (std::size_t j = 0; j < flags.size(); ++j)
    if (flags[j])
      out.push_back(instantiate(tangents[j], {primals[j].dtype(), primals[j].shape()}, loc));
}

Split split_groups(const std::vector<Array>& params, std::span<const std::vector<bool>> groups) {
  Split s;
  std::size_t pos = 0;
  for (const std::vector<bool>& flags : groups) {
    const std::size_t first = pos;
    pos += flags.size();
    std::size_t next_tangent = pos;
    for (std::size_t j = 0; j < flags.size(); ++j) {
      s.primals.push_back(params[first + j]);
      s.tangents.push_back(flags[j] ? Tangent(params[next_tangent++]) : std::nullopt);
    }
    pos = next_tangent;
  }
  return s;
}

std::vector<Array> present_values(std::span<const Tangent> tangents) {
  std::vector<Array> out;
  for (const Tangent& t : tangents)
    if (t) out.push_back(*t);
  return out;
}

std::size_t count_set(const std::vector<bool>& flags) {
  return static_cast<std::size_t>(std::count(flags.begin(), flags.end(), true));
}

TensorType operand_type(const Graph& g, const Node& n, std::size_t operand) {
  return g.node(n.inputs[operand]).type();
}

Array forced(const Batched& b, std::int64_t batch_size, const std::source_location& loc) {
  return b.batched ? b.value : with_batch_axis(b.value, batch_size, loc);
}

std::vector<bool> batched_flags(std::span<const Batched> values) {
  std::vector<bool> out;
  for (const Batched& b : values) out.push_back(b.batched);
  return out;
}

TensorType with_batch(TensorType t, std::int64_t batch_size, std::size_t at) {
  t.shape.insert(t.shape.begin() + static_cast<std::ptrdiff_t>(at), batch_size);
  return t;
}

std::vector<Array> with_batching(const std::vector<Batched>& out, const std::vector<bool>& want,
                                 std::int64_t batch_size, const Node& n, const std::string& api,
                                 const std::source_location& loc) {
  std::vector<Array> values;
  for (std::size_t j = 0; j < out.size(); ++j) {
    if (out[j].batched && !want[j])
      throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           ": output " + std::to_string(j) +
                           " of a region is batched unexpectedly (a bug in weft)");
    values.push_back(want[j] ? forced(out[j], batch_size, loc) : out[j].value);
  }
  return values;
}

std::vector<Batched> as_batched(std::span<const Array> values, const std::vector<bool>& flags) {
  std::vector<Batched> out;
  for (std::size_t i = 0; i < values.size(); ++i) out.push_back({values[i], flags[i]});
  return out;
}

bool has_ordered_effect(const Graph& g) {
  const std::vector<Effect> effects = graph_effects(g);
  return std::any_of(effects.begin(), effects.end(), [](const Effect& e) { return e.ordered; });
}

Array per_example(const Array& mask, const Array& like, const std::source_location& loc) {
  return lax::broadcast_in_dim(mask, like.shape(), {0}, loc);
}

}  // namespace weft::detail
