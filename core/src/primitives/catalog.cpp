// The catalog of primitives users see (`weft ops`, docs/primitives.md), read from each
// primitive's definition: its row, its type rule (for the dtypes it accepts) and its rules.
#include "weft/ir/primitive_catalog.h"

#include <sstream>

#include "primitives/primitive.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"

namespace weft {
namespace {

RuleSummary summarize(bool has_fn, std::string_view refusal) {
  if (has_fn) return {};
  return {RuleSummary::State::refused, std::string(refusal)};
}

// The operand types and attributes that ask an op's type rule whether it accepts `d`, for the
// classes whose type rule depends on the dtype (several forms where the class's ops differ:
// select's bool predicate, clamp's bounds of x's dtype); none for the others, which accept any
// dtype (layout ops, leaves, converts, control and host ops) or have operands of fixed dtypes.
struct Probe {
  std::vector<TensorType> operands;
  Attrs attrs;
  TensorType declared;
};
std::vector<Probe> probes_for(const OpInfo& info, DType d) {
  const Shape vec{2};
  const int n = info.arity < 0 ? 2 : info.arity;
  switch (info.op_class) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
      return {Probe{std::vector<TensorType>(static_cast<std::size_t>(n), {d, vec}), {}, {d, vec}}};
    case OpClass::Select:
      return {Probe{{{DType::Bool, vec}, {d, vec}, {d, vec}}, {}, {d, vec}},
              Probe{{{d, vec}, {d, vec}, {d, vec}}, {}, {d, vec}}};
    case OpClass::Reduce:
      return {Probe{{{d, vec}}, ReduceAttrs{{0}}.write(), {DType::I32, {}}}};
    case OpClass::Cumulative:
      return {Probe{{{d, vec}}, CumulativeAttrs{0, false}.write(), {d, vec}}};
    case OpClass::Sort: {
      // One attribute set for the whole class: each type rule reads its own.
      Attrs attrs = SortAttrs{0, true}.write();
      attrs.set(TopKAttrs::kK, std::int64_t{1});
      return {Probe{{{d, vec}}, attrs, {d, vec}}};
    }
    case OpClass::Window: {
      // A window of one element: every windowed op's type rule reads what it needs.
      const WindowAttrs window{{1}, {1}, {0}, {0}, {1}, {1}};
      return {Probe{std::vector<TensorType>(static_cast<std::size_t>(n), {d, vec}),
                    SelectWindowAttrs{window, true}.write(true),
                    {d, vec}}};
    }
    case OpClass::Linalg: {
      // Square matrices; one attribute set for the class (cholesky has none; eigh reads lower
      // and sort_eigenvalues).
      const std::vector<TensorType> operands(static_cast<std::size_t>(n), {d, {2, 2}});
      Attrs attrs = TriangularSolveAttrs{}.write();
      attrs.set(EighAttrs::kSortEigenvalues, std::int64_t{1});
      return {Probe{operands, attrs, {d, {2, 2}}}};
    }
    case OpClass::Dot:
      return {Probe{
          {{d, {2, 2}}, {d, {2, 2}}}, DotGeneralAttrs{{1}, {0}, {}, {}}.write(), {d, {2, 2}}}};
    case OpClass::Convolution: {
      const ConvAttrs one_dimensional{{1}, {0}, {0}, {1}, {1}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}};
      return {Probe{{{d, {1, 1, 2}}, {d, {1, 1, 1}}}, one_dimensional.write(), {d, {1, 1, 2}}}};
    }
    case OpClass::Leaf:
    case OpClass::Convert:
    case OpClass::Layout:
    case OpClass::Result:
    case OpClass::Control:
    case OpClass::Host:
    case OpClass::Token:
      return {};
  }
  return {};
}

// Whether `p`'s type rule accepts operands of dtype `d` in any of the probes' forms. A probe
// whose shapes or attributes do not fit the op (an error other than DTypeError) cannot ask its
// dtype rule, so it does not exclude the dtype.
bool accepts(const prim::Primitive& p, const std::vector<Probe>& probes) {
  for (const Probe& probe : probes) {
    try {
      p.type(p.info.kind, probe.operands, probe.attrs, probe.declared);
      return true;
    } catch (const DTypeError&) {
      // Not in this form.
    } catch (const Error&) {
      return true;
    }
  }
  return false;
}

std::vector<DType> accepted_dtypes(const prim::Primitive& p) {
  std::vector<DType> accepted;
  for (DType d : kAllDTypes) {
    const std::vector<Probe> probes = probes_for(p.info, d);
    if (probes.empty() || p.type == nullptr || accepts(p, probes)) accepted.push_back(d);
  }
  return accepted;
}

std::vector<std::string> jax_names_of(const OpInfo& info) {
  if (info.jax_names.empty()) return {std::string(info.name)};
  if (info.jax_names == "-") return {};
  std::vector<std::string> names;
  std::istringstream words{std::string(info.jax_names)};
  for (std::string w; words >> w;) names.push_back(w);
  return names;
}

}  // namespace

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case OpClass::Leaf:
      return "leaf";
    case OpClass::Unary:
      return "unary";
    case OpClass::Binary:
      return "binary";
    case OpClass::Compare:
      return "compare";
    case OpClass::Select:
      return "select";
    case OpClass::Convert:
      return "convert";
    case OpClass::Layout:
      return "layout";
    case OpClass::Reduce:
      return "reduce";
    case OpClass::Dot:
      return "dot";
    case OpClass::Result:
      return "result";
    case OpClass::Control:
      return "control";
    case OpClass::Host:
      return "host";
    case OpClass::Token:
      return "token";
    case OpClass::Cumulative:
      return "cumulative";
    case OpClass::Sort:
      return "sort";
    case OpClass::Convolution:
      return "convolution";
    case OpClass::Window:
      return "window";
    case OpClass::Linalg:
      return "linalg";
  }
  return "?";
}

std::vector<PrimitiveSummary> primitive_catalog() {
  std::vector<PrimitiveSummary> out;
  for (int k = 0; k < kNumOpKinds; ++k) {
    const prim::Primitive& p = prim::primitive(static_cast<OpKind>(k));
    PrimitiveSummary s{.kind = p.info.kind,
                       .name = std::string(p.info.name),
                       .jax_names = jax_names_of(p.info),
                       .op_class = std::string(op_class_name(p.info.op_class)),
                       .arity = p.info.arity,
                       .dtypes = accepted_dtypes(p),
                       .jvp = {},
                       .transpose = {},
                       .batching = {},
                       .transformation_only = p.info.transformation_only};
    if (p.info.op_class == OpClass::Result || p.info.op_class == OpClass::Host) {
      // The walkers run host ops and read results themselves (primitive_coverage.h); only a
      // host op's transpose is the definition's own answer.
      const RuleSummary walker{RuleSummary::State::by_walker, {}};
      s.jvp = walker;
      s.batching = walker;
      s.transpose = p.info.op_class == OpClass::Host
                        ? summarize(p.transpose.fn != nullptr, p.transpose.refusal)
                        : walker;
    } else if (p.info.op_class == OpClass::Control) {
      s.jvp = summarize(p.control_jvp.fn != nullptr, p.control_jvp.refusal);
      s.transpose = summarize(p.control_transpose.fn != nullptr, p.control_transpose.refusal);
      s.batching = summarize(p.control_batch.fn != nullptr, p.control_batch.refusal);
    } else {
      s.jvp = summarize(p.jvp.fn != nullptr, p.jvp.refusal);
      s.transpose = summarize(p.transpose.fn != nullptr, p.transpose.refusal);
      s.batching = summarize(p.batch.fn != nullptr, p.batch.refusal);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace weft
