// checkpoint: a function whose values the linear part recomputes from its operands instead of
// storing them. Its rules are its body's: jvp differentiates the body, linearize computes the
// outputs in the primal part and the body's jvp again in the linear part, vmap batches the body.
#include "primitives/custom_function.h"
#include "primitives/families.h"
#include "transforms/jvp_graph.h"
#include "transforms/staging.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using detail::Batched;
using detail::ControlTangents;
using detail::Tangent;

ControlTangents jvp_checkpoint(const Graph& g, const Node& n, std::span<const Array> operands,
                               std::span<const Tangent> tangents, const std::string& api,
                               const std::source_location& loc) {
  detail::JvpValues v = detail::jvp_graph(detail::region_of(g, n, 0), operands, tangents,
                                          detail::PrimalPlacement::here, api, loc);
  return {std::move(v.primals), std::move(v.tangents)};
}

ControlTangents linearize_checkpoint(const Graph& g, const Node& n, std::span<const Array> operands,
                                     std::span<const Tangent> tangents, const std::string& api,
                                     const std::source_location& loc) {
  const Graph body = detail::region_of(g, n, 0);
  std::vector<Array> outputs;
  {
    detail::SuspendInnermostTrace outer;
    outputs = detail::eval_graph(body, operands, loc);
  }
  detail::JvpValues v =
      detail::jvp_graph(body, operands, tangents, detail::PrimalPlacement::here, api, loc);
  return {std::move(outputs), std::move(v.tangents)};
}

// The values the function closes over are its body's operands like its arguments: all may be
// batched.
std::vector<Batched> batch_checkpoint(const Graph& g, const Node& n,
                                      std::span<const Batched> operands, std::int64_t batch_size,
                                      const std::string& api, const std::source_location& loc) {
  return batch_custom_function(g, n, operands, batch_size, n.custom, n.attrs, api, loc);
}

}  // namespace

void define_checkpoint_primitive(Definitions& defs) {
  Primitive p =
      jax_names(transformation_only(row(OpKind::Checkpoint, "checkpoint", OpClass::Control, -1)),
                "checkpoint remat");
  p.control_jvp.fn = jvp_checkpoint;
  p.control_linearize.fn = linearize_checkpoint;
  p.control_transpose = none<ControlTransposeRule>(kCustomFunctionHasNoTranspose);
  p.control_batch.fn = batch_checkpoint;
  p.regions = {1, 1, nullptr, body_signature<OpKind::Checkpoint, false>};
  p.evaluate_control = evaluate_body;
  defs.add(std::move(p));
}

}  // namespace weft::prim
