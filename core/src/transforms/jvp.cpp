// jvp: evaluates a traced function's graph on (primal, tangent) pairs, staging each node's
// primal op and its tangent rule into the current context.
#include "weft/transforms/jvp.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "trace/array_impl.h"
#include "transforms/jvp_graph.h"
#include "transforms/linearize.h"
#include "transforms/staging.h"
#include "weft/error.h"

namespace weft {

namespace detail {

namespace {

void check_tangents(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                    const std::source_location& loc) {
  if (primals.size() != tangents.size())
    throw InvalidArgumentError("jvp at " + describe_location(loc) + ": " +
                               std::to_string(primals.size()) + " primals but " +
                               std::to_string(tangents.size()) +
                               " tangents; give one tangent per primal");
  for (std::size_t i = 0; i < primals.size(); ++i) {
    const Array& p = primals[i];
    const Array& t = tangents[i];
    if (!p.valid() || !t.valid())
      throw InvalidArgumentError("jvp at " + describe_location(loc) + ": " +
                                 (p.valid() ? "tangent " : "primal ") + std::to_string(i) +
                                 " is an empty Array");
    if (p.shape() != t.shape())
      throw ShapeError("jvp at " + describe_location(loc) + ": tangent " + std::to_string(i) +
                       " has shape " + shape_to_string(t.shape()) + " but its primal has " +
                       shape_to_string(p.shape()) + "; a tangent has its primal's shape");
    if (p.dtype() != t.dtype())
      throw DTypeError("jvp at " + describe_location(loc) + ": tangent " + std::to_string(i) +
                       " is " + std::string(dtype_name(t.dtype())) + " but its primal is " +
                       std::string(dtype_name(p.dtype())) + "; a tangent has its primal's dtype");
  }
}

}  // namespace

}  // namespace detail

JvpResult jvp(const ArrayFunction& f, const std::vector<Array>& primals,
              const std::vector<Array>& tangents, std::source_location loc) {
  detail::check_tangents(primals, tangents, loc);
  std::size_t outputs = 0;
  const std::vector<Array> flat = detail::stage_or_run("jvp", loc, [&] {
    const detail::TracedRegion traced = detail::trace_for_transform("jvp", f, primals, loc);
    std::vector<Array> all_primals = primals;
    std::vector<detail::Tangent> all_tangents(tangents.begin(), tangents.end());
    for (const Array& c : traced.captured) {  // closed-over values: constants
      all_primals.push_back(c);
      all_tangents.push_back(std::nullopt);
    }
    detail::JvpValues values = detail::jvp_graph(traced.graph, all_primals, all_tangents,
                                                 detail::PrimalPlacement::here, "jvp", loc);
    outputs = values.primals.size();
    std::vector<Array> out = values.primals;
    for (std::size_t k = 0; k < outputs; ++k)
      out.push_back(values.tangents[k] ? *values.tangents[k]
                                       : detail::zeros_like_value(values.primals[k], loc));
    return out;
  });
  JvpResult result;
  result.primals_out.assign(flat.begin(), flat.begin() + static_cast<std::ptrdiff_t>(outputs));
  result.tangents_out.assign(flat.begin() + static_cast<std::ptrdiff_t>(outputs), flat.end());
  return result;
}

LinearizeResult linearize(const ArrayFunction& f, const std::vector<Array>& primals,
                          std::source_location loc) {
  const auto lin = detail::linearize_function(f, primals, "linearize", loc);
  LinearizeResult result;
  // The closures keep `lin`, not the outputs: those belong to the caller.
  result.primals_out = std::exchange(lin->primals_out, {});
  std::vector<TensorType> in_types;
  for (const Array& p : primals) in_types.push_back({p.dtype(), p.shape()});
  result.jvp = [lin, in_types, loc](const std::vector<Array>& tangents) {
    if (tangents.size() != in_types.size())
      throw InvalidArgumentError("linearize's jvp (linearize at " + detail::describe_location(loc) +
                                 "): " + std::to_string(tangents.size()) + " tangents for " +
                                 std::to_string(in_types.size()) + " primals; give one per primal");
    std::vector<Array> args;
    for (std::size_t i = 0; i < tangents.size(); ++i) {
      const Array& t = tangents[i];
      if (!t.valid() || t.dtype() != in_types[i].dtype || t.shape() != in_types[i].shape)
        throw ShapeError(
            "linearize's jvp (linearize at " + detail::describe_location(loc) + "): tangent " +
            std::to_string(i) + " is " +
            (t.valid() ? type_to_string({t.dtype(), t.shape()}) : std::string("an empty Array")) +
            " but its primal is " + type_to_string(in_types[i]) +
            "; a tangent has its primal's dtype and shape");
      if (detail::has_tangent(t.dtype())) args.push_back(t);
    }
    return detail::stage_or_run("linearize jvp", loc, [&] {
      std::vector<Array> all = args;
      all.insert(all.end(), lin->residuals.begin(), lin->residuals.end());
      return detail::eval_graph(lin->linear, all, loc);
    });
  };
  return result;
}

std::pair<Array, Array> jvp(const std::function<Array(const Array&)>& f, const Array& primal,
                            const Array& tangent, std::source_location loc) {
  JvpResult r = jvp([&](const std::vector<Array>& x) { return std::vector<Array>{f(x.at(0))}; },
                    {primal}, {tangent}, loc);
  return {r.primals_out.at(0), r.tangents_out.at(0)};
}

}  // namespace weft
