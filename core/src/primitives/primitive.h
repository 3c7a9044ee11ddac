// One definition per primitive: its table row (name, class, arity and properties), type rule,
// reference evaluator and transformation rules, written next to each other in the family file
// under core/src/primitives/ (docs/architecture.md, "Adding a primitive"). Families (unary
// float, binary arithmetic, comparisons, reductions, layout ops) take their defaults from
// family helpers (families.h, elementwise_family.h, structural_rules.h), as JAX's unop/naryop
// do. Passes reach a primitive only through primitive(kind), or op_info(kind) for what is public.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "interp/value.h"
#include "transforms/batching_rules.h"
#include "transforms/control_rules.h"
#include "transforms/jvp_rules.h"
#include "weft/array.h"
#include "weft/ir/graph.h"
#include "weft/ir/regions.h"

namespace weft::prim {

// A rule, or an explicit "none": `refusal` is then the message users get (a TransformError)
// when a transformation meets the op; see refuse_value_rule and, for control ops, refuse in
// transforms/control_rules.h. The primitive walk test fails on a rule that is neither.
template <typename Fn>
struct Rule {
  Fn fn = nullptr;
  std::string_view refusal;
  bool defined() const { return fn != nullptr || !refusal.empty(); }
};

template <typename Fn>
Rule<Fn> none(std::string_view refusal) {
  return Rule<Fn>{nullptr, refusal};
}

// Result type from operand types (see shape_rules.h for `declared`). Throws ShapeError or
// DTypeError naming the op.
using TypeRule = TensorType (*)(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                                const TensorType& declared);
// The reference interpreter's semantics of a single-result op.
using Evaluator = interp::Value (*)(const Node& node, interp::Operands operands);
// Value ops (one result), as transforms/jvp_rules.h, transpose_rules.h, batching_rules.h say.
using JvpRule = detail::Tangent (*)(const Node& n, std::span<const Array> primals,
                                    std::span<const detail::Tangent> tangents, const Array& result,
                                    const std::source_location& loc);
using TransposeRule = std::vector<detail::Tangent> (*)(const Node& n, const Array& cotangent,
                                                       std::span<const std::optional<Array>> values,
                                                       std::span<const TensorType> types,
                                                       const std::vector<bool>& linear,
                                                       const std::string& api,
                                                       const std::source_location& loc);
using BatchRule = detail::Batched (*)(const Node& n, std::span<const detail::Batched> operands,
                                      std::int64_t batch_size, const std::string& api,
                                      const std::source_location& loc);
// Multi-result ops (control ops, custom ops), as transforms/control_rules.h says.
using ControlJvpRule = detail::ControlTangents (*)(const Graph& g, const Node& n,
                                                   std::span<const Array> operands,
                                                   std::span<const detail::Tangent> tangents,
                                                   const std::string& api,
                                                   const std::source_location& loc);
using ControlTransposeRule = std::vector<detail::Tangent> (*)(
    const Graph& g, const Node& n, std::span<const detail::Tangent> result_cotangents,
    std::span<const std::optional<Array>> operands, const std::vector<bool>& linear,
    const std::string& api, const std::source_location& loc);
using ControlBatchRule = std::vector<detail::Batched> (*)(const Graph& g, const Node& n,
                                                          std::span<const detail::Batched> operands,
                                                          std::int64_t batch_size,
                                                          const std::string& api,
                                                          const std::source_location& loc);

// Control ops: what their regions are called and which signatures they must have, from the
// node's operands, attributes and results (weft/ir/regions.h says what the checks throw).
using RegionSignatureRule = std::vector<RegionSignature> (*)(std::span<const TensorType> operands,
                                                             const Attrs& attrs,
                                                             std::span<const TensorType> results,
                                                             std::size_t num_regions);
struct Regions {
  static constexpr std::size_t kAny = static_cast<std::size_t>(-1);
  std::size_t min = 0;
  std::size_t max = 0;  // kAny: as many as the node has (cond's branches)
  std::string (*name)(std::size_t index) = nullptr;
  RegionSignatureRule signatures = nullptr;
};
// An integer attribute that counts operands or gives a length, and what it means (the text
// parser refuses a value beyond 0..2^31-1 naming it).
struct CountAttr {
  std::string_view name;
  const char* meaning;
};
// The reference interpreter's semantics of a control op: every result, its regions run by `run`.
using ControlEvaluator = std::vector<interp::Value> (*)(const Node& node, interp::Operands operands,
                                                        const interp::RunGraph& run);
// How a control op runs its regions, for the passes that only need to know that (the schedule,
// effect-token threading).
enum class ControlFlow : std::uint8_t {
  none,              // not a control op, or one that never reaches them (custom ops)
  branch,            // runs one of its regions (cond)
  counted_loop,      // runs its body a number of times its attributes give (scan)
  conditional_loop,  // runs region 1, its body, while region 0, its condition, holds (while)
};
// Where effect tokens go when compile/tokens.cpp threads them through a control op: among its
// operands, results and each region's parameters and outputs (no outputs: the region returns
// none), and whether they count as carries (the "carries" attribute grows by their number).
struct TokenPlacement {
  struct Region {
    std::size_t params_at;
    std::optional<std::size_t> outputs_at;
  };
  std::size_t operands_at = 0;
  std::size_t results_at = 0;
  bool as_carries = false;
  std::vector<Region> regions;
};
using TokenPlacementRule = TokenPlacement (*)(const Node& node);

struct Primitive {
  OpInfo info;  // kind, name, class, arity and properties (public: weft/ir/op_kind.h)
  TypeRule type = nullptr;
  Evaluator evaluate = nullptr;  // single-result ops; control ops: evaluate_control
  // Value ops.
  Rule<JvpRule> jvp;
  Rule<TransposeRule> transpose;
  Rule<BatchRule> batch;
  // Multi-result ops.
  Rule<ControlJvpRule> control_jvp;
  Rule<ControlJvpRule> control_linearize;
  Rule<ControlTransposeRule> control_transpose;
  Rule<ControlBatchRule> control_batch;
  // The integer attributes that count operands or give a length (none: the op has none).
  std::span<const CountAttr> count_attrs;
  // Control ops.
  Regions regions;
  ControlEvaluator evaluate_control = nullptr;
  ControlFlow control_flow = ControlFlow::none;
  TokenPlacementRule token_placement = nullptr;
};

// Throws the TransformError a value rule's refusal gives users: "<api>: <op> at <where>
// <refusal>" (a refusal reads on from the op: "has no transpose rule, so ..."); with no refusal
// either, that the op has no `what` rule (a bug in weft, which the primitive walk test catches).
[[noreturn]] void refuse_value_rule(std::string_view refusal, const Node& n, const std::string& api,
                                    const char* what);

// The definition of `kind`. Every OpKind has exactly one (checked when the table is built).
const Primitive& primitive(OpKind kind);

// Collects the definitions of one family file (registry.cpp calls every family's define_*).
class Definitions {
 public:
  void add(Primitive primitive);
  std::vector<Primitive> take() && { return std::move(defined_); }

 private:
  std::vector<Primitive> defined_;
};

}  // namespace weft::prim
