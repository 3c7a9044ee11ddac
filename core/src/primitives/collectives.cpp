// The pmap collectives psum, pmean, pmax, all_gather and axis_index: pmap splits its function
// at them and combines the devices' values there (transforms/pmap.cpp). psum, pmean and
// all_gather are linear: their tangent is the same collective of the tangent, and psum and
// pmean are their own transposes across the devices. pmax has no derivative rule; axis_index
// has no operand to differentiate.
#include "ir/region_checks.h"
#include "primitives/custom_attrs.h"
#include "primitives/families.h"
#include "transforms/custom_rules.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using detail::Batched;
using detail::ControlTangents;
using detail::Tangent;

Array same_collective(const Node& n, std::vector<Array> operands, const std::source_location& loc) {
  return detail::stage_collective(n.op, std::move(operands), n.results.at(0),
                                  CollectiveAttrs::read(n.attrs).axis_name, loc);
}

[[noreturn]] void no_derivative(const Node& n, const std::string& api) {
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " has no derivative rule under " + api +
                       " (psum, pmean and all_gather have)");
}

// Forward mode: the collective of the primals (staged one trace out under linearize) and, for a
// linear collective, the same collective of the tangent.
template <bool kLinear, bool kPrimalOutside>
ControlTangents jvp_collective(const Graph&, const Node& n, std::span<const Array> operands,
                               std::span<const Tangent> tangents, const std::string& api,
                               const std::source_location& loc) {
  std::vector<Array> ops(operands.begin(), operands.end());
  Array primal;
  if (kPrimalOutside) {
    detail::SuspendInnermostTrace outer;
    primal = same_collective(n, ops, loc);
  } else {
    primal = same_collective(n, ops, loc);
  }
  ControlTangents r;
  r.results.push_back(primal);
  const bool has_tangent = !tangents.empty() && tangents[0];
  if (has_tangent && !kLinear) no_derivative(n, api);
  r.tangents.push_back(has_tangent ? Tangent(same_collective(n, {*tangents[0]}, loc))
                                   : std::nullopt);
  return r;
}

// The cotangent of the operand, when it is linear and the result has one.
const Array* cotangent_to_transpose(std::span<const Tangent> result_cotangents,
                                    std::span<const std::optional<Array>> operands,
                                    const std::vector<bool>& linear) {
  if (!result_cotangents[0] || operands.empty() || !linear[0]) return nullptr;
  return &*result_cotangents[0];
}

// psum and pmean are their own transposes across the devices.
std::vector<Tangent> transpose_self(const Graph&, const Node& n,
                                    std::span<const Tangent> result_cotangents,
                                    std::span<const std::optional<Array>> operands,
                                    const std::vector<bool>& linear, const std::string&,
                                    const std::source_location& loc) {
  std::vector<Tangent> out(operands.size());
  if (const Array* ct = cotangent_to_transpose(result_cotangents, operands, linear))
    out[0] = same_collective(n, {*ct}, loc);
  return out;
}

// all_gather's transpose is the sum of every device's cotangent row for this device.
std::vector<Tangent> transpose_all_gather(const Graph&, const Node& n,
                                          std::span<const Tangent> result_cotangents,
                                          std::span<const std::optional<Array>> operands,
                                          const std::vector<bool>& linear, const std::string&,
                                          const std::source_location& loc) {
  std::vector<Tangent> out(operands.size());
  const Array* cotangent = cotangent_to_transpose(result_cotangents, operands, linear);
  if (!cotangent) return out;
  const Array& ct = *cotangent;
  const std::string& axis = CollectiveAttrs::read(n.attrs).axis_name;
  const Array summed =
      detail::stage_collective(OpKind::Psum, {ct}, {ct.dtype(), ct.shape()}, axis, loc);
  const Array index = detail::stage_collective(OpKind::AxisIndex, {}, {DType::I32, {}}, axis, loc);
  std::vector<Array> starts{index};
  Shape sizes = ct.shape();
  sizes[0] = 1;
  for (std::size_t d = 1; d < sizes.size(); ++d) starts.push_back(Array::scalar_int(0));
  const Array row = lax::dynamic_slice(summed, starts, sizes, loc);
  out[0] = lax::reshape(row, Shape(ct.shape().begin() + 1, ct.shape().end()), loc);
  return out;
}

std::vector<Tangent> transpose_pmax(const Graph&, const Node& n,
                                    std::span<const Tangent> result_cotangents,
                                    std::span<const std::optional<Array>> operands,
                                    const std::vector<bool>& linear, const std::string& api,
                                    const std::source_location&) {
  if (cotangent_to_transpose(result_cotangents, operands, linear)) no_derivative(n, api);
  return std::vector<Tangent>(operands.size());
}

std::vector<Batched> batch_collective(const Graph&, const Node& n, std::span<const Batched>,
                                      std::int64_t, const std::string& api,
                                      const std::source_location&) {
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " (over the pmap axis '" + CollectiveAttrs::read(n.attrs).axis_name +
                       "') is under vmap inside the pmapped function; not supported yet");
}

template <OpKind kKind>
std::vector<RegionSignature> no_regions(std::span<const TensorType>, const Attrs& attrs,
                                        std::span<const TensorType>, std::size_t num_regions) {
  region_checks::expect_regions(kKind, num_regions, 0);
  CollectiveAttrs::read(attrs);
  return {};
}

std::vector<interp::Value> evaluate_collective(const Node& node, interp::Operands,
                                               const interp::RunGraph&) {
  throw InvalidGraphError("interpret: " + std::string(op_name(node.op)) +
                          " combines the values of the devices pmap runs on; it runs only "
                          "inside the pmap that binds its axis");
}

// A collective's row and its rules, linear or not, and transposed by `transpose`.
template <OpKind kKind, bool kLinear>
Primitive collective(std::string_view name, int arity, ControlTransposeRule transpose) {
  Primitive p = transformation_only(row(kKind, name, OpClass::Control, arity));
  p.regions = {0, 0, nullptr, no_regions<kKind>};
  p.evaluate_control = evaluate_collective;
  p.info.collective = true;
  p.control_jvp.fn = jvp_collective<kLinear, false>;
  p.control_linearize.fn = jvp_collective<kLinear, true>;
  p.control_transpose.fn = transpose;
  p.control_batch.fn = batch_collective;
  return p;
}

}  // namespace

void define_collective_primitives(Definitions& defs) {
  defs.add(collective<OpKind::Psum, true>("psum", 1, transpose_self));
  defs.add(collective<OpKind::Pmean, true>("pmean", 1, transpose_self));
  defs.add(collective<OpKind::Pmax, false>("pmax", 1, transpose_pmax));
  defs.add(collective<OpKind::AllGather, true>("all_gather", 1, transpose_all_gather));
  // No operand: nothing to differentiate or transpose.
  defs.add(collective<OpKind::AxisIndex, true>("axis_index", 0, transpose_self));
}

}  // namespace weft::prim
