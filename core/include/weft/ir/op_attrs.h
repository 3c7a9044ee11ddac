// The attributes of the core ops, typed: each op's (or op family's) are read and written through
// its struct, and each attribute's name is spelled once, here, so a misspelled name is a compile
// error. The text form (docs/ir-text.md) is unchanged: `write()` builds the same Attrs map the
// parser reads. Reading throws InvalidGraphError naming a missing or mistyped attribute (a graph
// parsed from text), as Attrs' typed getters do; `read` reads the attributes in the order they
// are declared, so the first missing one is the one named.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/attrs.h"

namespace weft {

// `base` with each of `typed`'s attributes set: a rule that rewrites an op's attributes keeps
// those the op does not use (docs/ir-text.md keeps and prints them).
inline Attrs updated_attrs(Attrs base, const Attrs& typed) {
  for (const auto& [name, value] : typed.items()) base.set(name, value);
  return base;
}

// parameter, result: the position among the graph's parameters or results.
struct IndexAttrs {
  static constexpr const char* kIndex = "index";
  std::int64_t index = 0;

  static IndexAttrs read(const Attrs& attrs) { return {attrs.get_int(kIndex)}; }
  Attrs write() const { return Attrs{{kIndex, index}}; }
};

// constant: its value, an integer or a float; a float constant may be written as an integer.
struct ConstantAttrs {
  static constexpr const char* kValue = "value";

  static double float_value(const Attrs& attrs) { return attrs.get_float(kValue); }
  static std::int64_t int_value(const Attrs& attrs) { return attrs.get_int(kValue); }
  static Attrs of(double value) { return Attrs{{kValue, value}}; }
  static Attrs of(std::int64_t value) { return Attrs{{kValue, value}}; }
};

// iota, concatenate: the axis that counts up or that the operands are joined along.
struct DimensionAttrs {
  static constexpr const char* kDimension = "dimension";
  std::int64_t dimension = 0;

  static DimensionAttrs read(const Attrs& attrs) { return {attrs.get_int(kDimension)}; }
  Attrs write() const { return Attrs{{kDimension, dimension}}; }
};

// round: how halves round, as jax.lax.RoundingMethod (0: away from zero, 1: to the even
// neighbour). Graphs written before the attribute existed round away from zero.
struct RoundAttrs {
  static constexpr const char* kRoundingMethod = "rounding_method";
  static constexpr std::int64_t kAwayFromZero = 0, kToNearestEven = 1;
  std::int64_t rounding_method = kAwayFromZero;

  static RoundAttrs read(const Attrs& attrs) {
    return {attrs.has(kRoundingMethod) ? attrs.get_int(kRoundingMethod) : kAwayFromZero};
  }
  Attrs write() const { return Attrs{{kRoundingMethod, rounding_method}}; }
};

// broadcast_in_dim: the result axis each operand axis maps to.
struct BroadcastAttrs {
  static constexpr const char* kDims = "dims";
  std::vector<std::int64_t> dims;

  static BroadcastAttrs read(const Attrs& attrs) { return {attrs.get_ints(kDims)}; }
  Attrs write() const { return Attrs{{kDims, dims}}; }
};

// transpose: result axis i is operand axis permutation[i].
struct TransposeAttrs {
  static constexpr const char* kPermutation = "permutation";
  std::vector<std::int64_t> permutation;

  static TransposeAttrs read(const Attrs& attrs) { return {attrs.get_ints(kPermutation)}; }
  Attrs write() const { return Attrs{{kPermutation, permutation}}; }
};

// slice: per axis, the first index, the end (exclusive) and the step.
struct SliceAttrs {
  static constexpr const char* kStart = "start";
  static constexpr const char* kLimit = "limit";
  static constexpr const char* kStride = "stride";
  std::vector<std::int64_t> start, limit, stride;

  static SliceAttrs read(const Attrs& attrs) {
    return {attrs.get_ints(kStart), attrs.get_ints(kLimit), attrs.get_ints(kStride)};
  }
  Attrs write() const { return Attrs{{kStart, start}, {kLimit, limit}, {kStride, stride}}; }
};

// dynamic_slice: the extent of the window per axis (its starts are operands).
struct DynamicSliceAttrs {
  static constexpr const char* kSizes = "sizes";
  std::vector<std::int64_t> sizes;

  static DynamicSliceAttrs read(const Attrs& attrs) { return {attrs.get_ints(kSizes)}; }
  Attrs write() const { return Attrs{{kSizes, sizes}}; }
};

// pad: per axis, the padding before, after and between elements.
struct PadAttrs {
  static constexpr const char* kLow = "low";
  static constexpr const char* kHigh = "high";
  static constexpr const char* kInterior = "interior";
  std::vector<std::int64_t> low, high, interior;

  static PadAttrs read(const Attrs& attrs) {
    return {attrs.get_ints(kLow), attrs.get_ints(kHigh), attrs.get_ints(kInterior)};
  }
  Attrs write() const { return Attrs{{kLow, low}, {kHigh, high}, {kInterior, interior}}; }
};

// The reductions, argmax, argmin: the axes reduced away.
struct ReduceAttrs {
  static constexpr const char* kAxes = "axes";
  std::vector<std::int64_t> axes;

  static ReduceAttrs read(const Attrs& attrs) { return {attrs.get_ints(kAxes)}; }
  Attrs write() const { return Attrs{{kAxes, axes}}; }
};

// dot_general: the contracting and batch axes of each side.
struct DotGeneralAttrs {
  static constexpr const char* kLhsContracting = "lhs_contracting";
  static constexpr const char* kRhsContracting = "rhs_contracting";
  static constexpr const char* kLhsBatch = "lhs_batch";
  static constexpr const char* kRhsBatch = "rhs_batch";
  std::vector<std::int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;

  static DotGeneralAttrs read(const Attrs& attrs) {
    return {attrs.get_ints(kLhsContracting), attrs.get_ints(kRhsContracting),
            attrs.get_ints(kLhsBatch), attrs.get_ints(kRhsBatch)};
  }
  Attrs write() const {
    return Attrs{{kLhsContracting, lhs_contracting},
                 {kRhsContracting, rhs_contracting},
                 {kLhsBatch, lhs_batch},
                 {kRhsBatch, rhs_batch}};
  }
  bool operator==(const DotGeneralAttrs&) const = default;
};

// while: the leading `carries` operands are the loop state; the others are values its regions
// close over.
struct WhileAttrs {
  static constexpr const char* kCarries = "carries";
  std::int64_t carries = 0;

  static WhileAttrs read(const Attrs& attrs) { return {attrs.get_int(kCarries)}; }
  Attrs write() const { return Attrs{{kCarries, carries}}; }
};

// scan: `carries` loop-state operands, then `xs` operands stacked along a leading axis of
// `length` rows (walked last to first when `reverse`), then closed-over values.
struct ScanAttrs {
  static constexpr const char* kCarries = WhileAttrs::kCarries;
  static constexpr const char* kXs = "xs";
  static constexpr const char* kLength = "length";
  static constexpr const char* kReverse = "reverse";
  std::int64_t carries = 0;
  std::int64_t xs = 0;
  std::int64_t length = 0;
  bool reverse = false;

  static ScanAttrs read(const Attrs& attrs) {
    return {attrs.get_int(kCarries), attrs.get_int(kXs), attrs.get_int(kLength),
            attrs.get_int(kReverse) != 0};
  }
  Attrs write() const {
    return Attrs{{kCarries, carries},
                 {kXs, xs},
                 {kLength, length},
                 {kReverse, std::int64_t{reverse ? 1 : 0}}};
  }
};

// debug_print and host_call share `ordered` (0 or 1, absent meaning 0): an ordered effect runs
// in program order, threaded by a token.
struct HostEffectAttrs {
  static constexpr const char* kOrdered = "ordered";
  static constexpr const char* kEffect = "effect";

  // Whether the op is ordered: `ordered` present, an integer, and not 0.
  static bool ordered(const Attrs& attrs) {
    const AttrValue* value = attrs.find(kOrdered);
    const auto* flag = value ? std::get_if<std::int64_t>(value) : nullptr;
    return flag && *flag != 0;
  }
};

// debug_print: the format its arrays are printed with.
struct DebugPrintAttrs {
  static constexpr const char* kFormat = "format";
  static constexpr const char* kOrdered = HostEffectAttrs::kOrdered;
  std::string format;
  bool ordered = false;

  static DebugPrintAttrs read(const Attrs& attrs) {
    return {attrs.get_string(kFormat), HostEffectAttrs::ordered(attrs)};
  }
  Attrs write() const {
    return Attrs{{kFormat, format}, {kOrdered, std::int64_t{ordered ? 1 : 0}}};
  }
};

// host_call: the graph's callback slot it calls and, for an effectful callback, the effect's
// name (absent for a pure callback, which is never ordered).
struct HostCallAttrs {
  static constexpr const char* kCallback = "callback";
  static constexpr const char* kEffect = HostEffectAttrs::kEffect;
  static constexpr const char* kOrdered = HostEffectAttrs::kOrdered;

  static std::int64_t callback(const Attrs& attrs) { return attrs.get_int(kCallback); }
  // The effect's name, or nullptr for a pure callback (or a mistyped `effect`).
  static const std::string* effect(const Attrs& attrs) {
    const AttrValue* value = attrs.find(kEffect);
    return value ? std::get_if<std::string>(value) : nullptr;
  }
};

// Bit operations and the remaining elementwise ops.
// integer_pow: the exponent.
struct IntegerPowAttrs {
  static constexpr const char* kY = "y";
  std::int64_t y = 0;

  static IntegerPowAttrs read(const Attrs& attrs) { return {attrs.get_int(kY)}; }
  Attrs write() const { return Attrs{{kY, y}}; }
};

// Cumulative ops, rev and sorting.
// cumsum, cumprod, cummax, cummin, cumlogsumexp: the axis scanned, last to first when `reverse`.
struct CumulativeAttrs {
  static constexpr const char* kAxis = "axis";
  static constexpr const char* kReverse = "reverse";
  std::int64_t axis = 0;
  bool reverse = false;

  static CumulativeAttrs read(const Attrs& attrs) {
    return {attrs.get_int(kAxis), attrs.get_int(kReverse) != 0};
  }
  Attrs write() const { return Attrs{{kAxis, axis}, {kReverse, std::int64_t{reverse ? 1 : 0}}}; }
};

// sort, argsort: the axis sorted along; `is_stable` is kept for the text form (weft's sorts are
// always stable).
struct SortAttrs {
  static constexpr const char* kDimension = "dimension";
  static constexpr const char* kIsStable = "is_stable";
  std::int64_t dimension = 0;
  bool is_stable = true;

  static SortAttrs read(const Attrs& attrs) {
    const AttrValue* stable = attrs.find(kIsStable);
    const auto* flag = stable ? std::get_if<std::int64_t>(stable) : nullptr;
    return {attrs.get_int(kDimension), !flag || *flag != 0};
  }
  Attrs write() const {
    return Attrs{{kDimension, dimension}, {kIsStable, std::int64_t{is_stable ? 1 : 0}}};
  }
};

// top_k, top_k_indices: how many of the largest elements of each last-axis line.
struct TopKAttrs {
  static constexpr const char* kK = "k";
  std::int64_t k = 0;

  static TopKAttrs read(const Attrs& attrs) { return {attrs.get_int(kK)}; }
  Attrs write() const { return Attrs{{kK, k}}; }
};

// rev: the axes whose elements are reversed.
struct RevAttrs {
  static constexpr const char* kDimensions = "dimensions";
  std::vector<std::int64_t> dimensions;

  static RevAttrs read(const Attrs& attrs) { return {attrs.get_ints(kDimensions)}; }
  Attrs write() const { return Attrs{{kDimensions, dimensions}}; }
};

// ---- gather and scatter --------------------------------------------------------------------

// How gather and scatter treat start indices outside the operand (JAX's GatherScatterMode):
// clip clamps them so the window stays inside; fill gives gather's fill value for the whole
// window and drops scatter's update window; promise_in_bounds is the caller's promise (weft
// clamps, as XLA on CPUs does). JAX's default, for lax.gather and lax.scatter*, is fill.
enum class IndexMode : std::uint8_t { clip, fill, promise_in_bounds };

inline const char* index_mode_name(IndexMode mode) {
  switch (mode) {
    case IndexMode::clip:
      return "clip";
    case IndexMode::fill:
      return "fill";
    case IndexMode::promise_in_bounds:
      return "promise_in_bounds";
  }
  return "fill";
}

// The mode named `name`; throws InvalidGraphError naming `attr` for any other spelling.
IndexMode index_mode_from_name(const std::string& name, const char* attr);

// gather(operand, indices): XLA's GatherDimensionNumbers with the index vector along the
// indices' last axis (JAX's convention), slice_sizes, mode and, for fill, the fill value
// (absent: JAX's default, NaN for floats, the lowest signed and the highest unsigned integer,
// true for bool).
struct GatherAttrs {
  static constexpr const char* kOffsetDims = "offset_dims";
  static constexpr const char* kCollapsedSliceDims = "collapsed_slice_dims";
  static constexpr const char* kStartIndexMap = "start_index_map";
  static constexpr const char* kOperandBatchingDims = "operand_batching_dims";
  static constexpr const char* kStartIndicesBatchingDims = "start_indices_batching_dims";
  static constexpr const char* kSliceSizes = "slice_sizes";
  static constexpr const char* kMode = "mode";
  static constexpr const char* kFillValue = "fill_value";
  std::vector<std::int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<std::int64_t> operand_batching_dims, start_indices_batching_dims;
  std::vector<std::int64_t> slice_sizes;
  IndexMode mode = IndexMode::fill;
  std::optional<double> fill_value;

  static GatherAttrs read(const Attrs& attrs) {
    GatherAttrs a{attrs.get_ints(kOffsetDims),
                  attrs.get_ints(kCollapsedSliceDims),
                  attrs.get_ints(kStartIndexMap),
                  attrs.get_ints(kOperandBatchingDims),
                  attrs.get_ints(kStartIndicesBatchingDims),
                  attrs.get_ints(kSliceSizes),
                  index_mode_from_name(attrs.get_string(kMode), kMode),
                  std::nullopt};
    if (attrs.find(kFillValue)) a.fill_value = attrs.get_float(kFillValue);
    return a;
  }
  Attrs write() const {
    Attrs a{{kOffsetDims, offset_dims},
            {kCollapsedSliceDims, collapsed_slice_dims},
            {kStartIndexMap, start_index_map},
            {kOperandBatchingDims, operand_batching_dims},
            {kStartIndicesBatchingDims, start_indices_batching_dims},
            {kSliceSizes, slice_sizes},
            {kMode, std::string(index_mode_name(mode))}};
    if (fill_value) a.set(kFillValue, *fill_value);
    return a;
  }
};

// conv_general_dilated (lhs, rhs), as jax.lax's: the lhs is dilated by lhs_dilation (zeros
// between its elements), padded by padding_low/high (negative values crop), and each output
// position is the dot of a window of it with the rhs dilated by rhs_dilation, windows stepping
// by window_strides (one entry per spatial axis). The specs are JAX's ConvDimensionNumbers:
// lhs_spec (batch axis, feature axis, spatial axes...), rhs_spec (output feature axis, input
// feature axis, spatial axes...), out_spec (batch, feature, spatial...). feature_group_count
// splits the lhs features and the rhs output features into that many groups (depthwise when it
// equals the features); batch_group_count splits the lhs batch likewise (filter gradients of
// grouped convolutions). At most one of them is above 1.
struct ConvAttrs {
  static constexpr const char* kWindowStrides = "window_strides";
  static constexpr const char* kPaddingLow = "padding_low";
  static constexpr const char* kPaddingHigh = "padding_high";
  static constexpr const char* kLhsDilation = "lhs_dilation";
  static constexpr const char* kRhsDilation = "rhs_dilation";
  static constexpr const char* kLhsSpec = "lhs_spec";
  static constexpr const char* kRhsSpec = "rhs_spec";
  static constexpr const char* kOutSpec = "out_spec";
  static constexpr const char* kFeatureGroupCount = "feature_group_count";
  static constexpr const char* kBatchGroupCount = "batch_group_count";
  std::vector<std::int64_t> window_strides, padding_low, padding_high, lhs_dilation, rhs_dilation;
  std::vector<std::int64_t> lhs_spec, rhs_spec, out_spec;
  std::int64_t feature_group_count = 1;
  std::int64_t batch_group_count = 1;

  static ConvAttrs read(const Attrs& attrs) {
    return {attrs.get_ints(kWindowStrides),    attrs.get_ints(kPaddingLow),
            attrs.get_ints(kPaddingHigh),      attrs.get_ints(kLhsDilation),
            attrs.get_ints(kRhsDilation),      attrs.get_ints(kLhsSpec),
            attrs.get_ints(kRhsSpec),          attrs.get_ints(kOutSpec),
            attrs.get_int(kFeatureGroupCount), attrs.get_int(kBatchGroupCount)};
  }
  Attrs write() const {
    return Attrs{{kWindowStrides, window_strides},
                 {kPaddingLow, padding_low},
                 {kPaddingHigh, padding_high},
                 {kLhsDilation, lhs_dilation},
                 {kRhsDilation, rhs_dilation},
                 {kLhsSpec, lhs_spec},
                 {kRhsSpec, rhs_spec},
                 {kOutSpec, out_spec},
                 {kFeatureGroupCount, feature_group_count},
                 {kBatchGroupCount, batch_group_count}};
  }
  std::size_t spatial_rank() const { return window_strides.size(); }
  bool operator==(const ConvAttrs&) const = default;
};

// scatter, scatter_add, scatter_mul, scatter_min, scatter_max (operand, indices, updates):
// XLA's ScatterDimensionNumbers with the index vector along the indices' last axis, the mode,
// and JAX's two hints (accepted and kept; weft's results do not depend on them).
struct ScatterAttrs {
  static constexpr const char* kUpdateWindowDims = "update_window_dims";
  static constexpr const char* kInsertedWindowDims = "inserted_window_dims";
  static constexpr const char* kScatterDimsToOperandDims = "scatter_dims_to_operand_dims";
  static constexpr const char* kOperandBatchingDims = GatherAttrs::kOperandBatchingDims;
  static constexpr const char* kScatterIndicesBatchingDims = "scatter_indices_batching_dims";
  static constexpr const char* kMode = GatherAttrs::kMode;
  static constexpr const char* kIndicesAreSorted = "indices_are_sorted";
  static constexpr const char* kUniqueIndices = "unique_indices";
  std::vector<std::int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  std::vector<std::int64_t> operand_batching_dims, scatter_indices_batching_dims;
  IndexMode mode = IndexMode::fill;
  bool indices_are_sorted = false;
  bool unique_indices = false;

  static ScatterAttrs read(const Attrs& attrs) {
    auto flag = [&](const char* name) {
      const AttrValue* v = attrs.find(name);
      const auto* i = v ? std::get_if<std::int64_t>(v) : nullptr;
      return i && *i != 0;
    };
    return {attrs.get_ints(kUpdateWindowDims),
            attrs.get_ints(kInsertedWindowDims),
            attrs.get_ints(kScatterDimsToOperandDims),
            attrs.get_ints(kOperandBatchingDims),
            attrs.get_ints(kScatterIndicesBatchingDims),
            index_mode_from_name(attrs.get_string(kMode), kMode),
            flag(kIndicesAreSorted),
            flag(kUniqueIndices)};
  }
  Attrs write() const {
    return Attrs{{kUpdateWindowDims, update_window_dims},
                 {kInsertedWindowDims, inserted_window_dims},
                 {kScatterDimsToOperandDims, scatter_dims_to_operand_dims},
                 {kOperandBatchingDims, operand_batching_dims},
                 {kScatterIndicesBatchingDims, scatter_indices_batching_dims},
                 {kMode, std::string(index_mode_name(mode))},
                 {kIndicesAreSorted, std::int64_t{indices_are_sorted ? 1 : 0}},
                 {kUniqueIndices, std::int64_t{unique_indices ? 1 : 0}}};
  }
};

// reduce_window_sum/max/min, select_and_gather_add, select_and_scatter_add: one entry per
// operand axis each (jax.lax's window_dimensions, window_strides, padding as (low, high) pairs,
// base_dilation, window_dilation). The dilations may be absent (all 1): select_and_scatter_add
// has none, as JAX's.
struct WindowAttrs {
  static constexpr const char* kWindowDimensions = "window_dimensions";
  static constexpr const char* kWindowStrides = "window_strides";
  static constexpr const char* kPaddingLow = "padding_low";
  static constexpr const char* kPaddingHigh = "padding_high";
  static constexpr const char* kBaseDilation = "base_dilation";
  static constexpr const char* kWindowDilation = "window_dilation";
  // Default member initializers, so that a designated initializer may name only some.
  std::vector<std::int64_t> window_dimensions = {};
  std::vector<std::int64_t> window_strides = {};
  std::vector<std::int64_t> padding_low = {};
  std::vector<std::int64_t> padding_high = {};
  std::vector<std::int64_t> base_dilation = {};
  std::vector<std::int64_t> window_dilation = {};

  static WindowAttrs read(const Attrs& attrs) {
    WindowAttrs a{attrs.get_ints(kWindowDimensions),
                  attrs.get_ints(kWindowStrides),
                  attrs.get_ints(kPaddingLow),
                  attrs.get_ints(kPaddingHigh),
                  {},
                  {}};
    const std::vector<std::int64_t> ones(a.window_dimensions.size(), 1);
    a.base_dilation = attrs.has(kBaseDilation) ? attrs.get_ints(kBaseDilation) : ones;
    a.window_dilation = attrs.has(kWindowDilation) ? attrs.get_ints(kWindowDilation) : ones;
    return a;
  }
  Attrs write() const {
    Attrs out = write_undilated();
    out.set(kBaseDilation, base_dilation);
    out.set(kWindowDilation, window_dilation);
    return out;
  }
  // Without the dilations (select_and_scatter_add's attributes).
  Attrs write_undilated() const {
    return Attrs{{kWindowDimensions, window_dimensions},
                 {kWindowStrides, window_strides},
                 {kPaddingLow, padding_low},
                 {kPaddingHigh, padding_high}};
  }
};

// select_and_gather_add, select_and_scatter_add: the window's attributes and select_prim, the
// comparison that keeps the element chosen so far ("ge": the first maximum, "le": the first
// minimum), as JAX's.
struct SelectWindowAttrs {
  static constexpr const char* kSelectPrim = "select_prim";
  WindowAttrs window;
  bool chooses_max = true;

  static bool valid_select(const Attrs& attrs) {
    const AttrValue* v = attrs.find(kSelectPrim);
    const auto* name = v ? std::get_if<std::string>(v) : nullptr;
    return name && (*name == "ge" || *name == "le");
  }
  static SelectWindowAttrs read(const Attrs& attrs) {
    return {WindowAttrs::read(attrs), attrs.get_string(kSelectPrim) == "ge"};
  }
  Attrs write(bool dilated) const {
    Attrs out = dilated ? window.write() : window.write_undilated();
    out.set(kSelectPrim, std::string(chooses_max ? "ge" : "le"));
    return out;
  }
};

// ---- linear algebra --------------------------------------------------------------------------

// triangular_solve (jax.lax.linalg.triangular_solve): solves op(a) x = b (`left_side`) or
// x op(a) = b, op(a) being a or its transpose (`transpose_a`), reading only a's lower or upper
// triangle (`lower`), its diagonal taken as ones when `unit_diagonal`. `conjugate_a` has no
// effect on real dtypes; it is kept for the text form.
struct TriangularSolveAttrs {
  static constexpr const char* kLeftSide = "left_side";
  static constexpr const char* kLower = "lower";
  static constexpr const char* kTransposeA = "transpose_a";
  static constexpr const char* kConjugateA = "conjugate_a";
  static constexpr const char* kUnitDiagonal = "unit_diagonal";
  bool left_side = false;
  bool lower = false;
  bool transpose_a = false;
  bool conjugate_a = false;
  bool unit_diagonal = false;

  static TriangularSolveAttrs read(const Attrs& attrs) {
    return {attrs.get_int(kLeftSide) != 0, attrs.get_int(kLower) != 0,
            attrs.get_int(kTransposeA) != 0, attrs.get_int(kConjugateA) != 0,
            attrs.get_int(kUnitDiagonal) != 0};
  }
  Attrs write() const {
    auto flag = [](bool b) { return std::int64_t{b ? 1 : 0}; };
    return Attrs{{kLeftSide, flag(left_side)},
                 {kLower, flag(lower)},
                 {kTransposeA, flag(transpose_a)},
                 {kConjugateA, flag(conjugate_a)},
                 {kUnitDiagonal, flag(unit_diagonal)}};
  }
};

// eigh_vectors and eigh_values (lax.linalg.eigh_p): which triangle of the operand is read
// (`lower`: the lower one, the diagonal included) and whether the eigenvalues (and their vectors
// with them) come in ascending order (`sort_eigenvalues`; otherwise in the order the
// decomposition leaves them).
struct EighAttrs {
  static constexpr const char* kLower = "lower";
  static constexpr const char* kSortEigenvalues = "sort_eigenvalues";
  bool lower = true;
  bool sort_eigenvalues = true;

  static EighAttrs read(const Attrs& attrs) {
    return {attrs.get_int(kLower) != 0, attrs.get_int(kSortEigenvalues) != 0};
  }
  Attrs write() const {
    auto flag = [](bool b) { return std::int64_t{b ? 1 : 0}; };
    return Attrs{{kLower, flag(lower)}, {kSortEigenvalues, flag(sort_eigenvalues)}};
  }
};

}  // namespace weft
