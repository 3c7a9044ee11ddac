// Every primitive with a device lowering, on every dtype the catalog says it accepts, on the
// OpenCL device and in the reference interpreter. Each primitive's sample graph
// (support/primitive_samples.h) is retyped: its data dtype (the one of its main node's data
// operand) becomes the dtype under test everywhere it appears. All samples of one dtype run as
// one program (their outputs flattened into one per result dtype), so a new primitive with a
// sample is covered without editing this test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "support/device_check.h"
#include "support/primitive_samples.h"
#include "weft/backend.h"
#include "weft/compile/pipeline.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/graph.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/primitive_catalog.h"
#include "weft/ir/shape_rules.h"
#include "weft/ir/text.h"
#include "weft/weft.h"

namespace weft {
namespace {

// Classes whose ops run as device kernels; the others (leaves, control, host, token) are
// exercised by their own tests.
bool has_device_lowering(const PrimitiveSummary& p) {
  if (p.transformation_only) return false;
  switch (op_info(p.kind).op_class) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Select:
    case OpClass::Convert:
    case OpClass::Layout:
    case OpClass::Reduce:
    case OpClass::Dot:
    case OpClass::Cumulative:
    case OpClass::Sort:
    case OpClass::Convolution:
    case OpClass::Window:
    case OpClass::Linalg:
      return true;
    case OpClass::Leaf:
    case OpClass::Result:
    case OpClass::Control:
    case OpClass::Host:
    case OpClass::Token:
      return false;
  }
  return false;
}

// Ops whose sample's shapes depend on the element width.
bool retypable(OpKind k) {
  return k != OpKind::BitcastConvert;
}

// The position of the main node's operand whose dtype the sample is written for.
std::size_t data_operand(OpKind k) {
  return k == OpKind::Select || k == OpKind::SelectN ? 1 : 0;
}

// `sample` with its parameters and constants of dtype `from` made dtype `to` (constants keep
// their value) and every other node's type inferred again from its operands.
Graph retyped(const Graph& sample, DType from, DType to) {
  Graph g = sample;
  for (Node& n : g.nodes) {
    if (n.op == OpKind::Parameter || n.op == OpKind::Constant) {
      if (n.dtype != from) continue;
      n.dtype = to;
      if (n.op == OpKind::Constant && !is_float(to)) {
        const double v = ConstantAttrs::float_value(n.attrs);
        n.attrs.set("value", static_cast<std::int64_t>(to == DType::Bool ? v != 0 : std::trunc(v)));
      }
      continue;
    }
    // Integers take no negative power.
    if (n.op == OpKind::IntegerPow && !is_float(to)) n.attrs.set("y", std::int64_t{3});
    std::vector<TensorType> operands;
    for (ValueId in : n.inputs) operands.push_back(g.node(in).type());
    const TensorType t = infer_type(n.op, operands, n.attrs, n.type());
    n.dtype = t.dtype;
    n.shape = t.shape;
  }
  return g;
}

// Appends `part`'s nodes, parameters and outputs to `whole`.
void append(Graph& whole, const Graph& part) {
  const ValueId base = static_cast<ValueId>(whole.nodes.size());
  for (const Node& n0 : part.nodes) {
    Node n = n0;
    for (ValueId& in : n.inputs) in += base;
    if (n.op == OpKind::Parameter)
      n.attrs.set("index", static_cast<std::int64_t>(whole.params.size()));
    const ValueId id = whole.add(std::move(n));
    if (n0.op == OpKind::Parameter) whole.params.push_back(id);
  }
  for (ValueId out : part.outputs) whole.outputs.push_back(out + base);
}

// Compiles `program` for the default device, runs it on `inputs` and downloads every output.
std::vector<HostArray> run_on_default_device(const Graph& program,
                                             const std::vector<HostArray>& inputs) {
  Device& dev = default_device();
  const std::shared_ptr<Executable> exe = dev.compile(program);
  std::vector<std::shared_ptr<Buffer>> buffers;
  for (const HostArray& a : inputs) buffers.push_back(dev.upload(a.raw(), a.nbytes()));
  const std::vector<std::shared_ptr<Buffer>> results = exe->run(buffers);
  std::vector<HostArray> downloaded;
  for (std::size_t i = 0; i < results.size() && i < program.outputs.size(); ++i) {
    const Node& out = program.node(program.outputs[i]);
    HostArray got(out.dtype, out.shape);
    dev.download(*results[i], got.raw(), got.nbytes());
    downloaded.push_back(std::move(got));
  }
  return downloaded;
}

// Inputs a sample can take in every dtype: small values (integer indices in range, shift
// counts below 8) so no op hits an input-dependent edge case of its own.
HostArray input_for(const Node& param, std::mt19937& rng) {
  const DType t = param.dtype;
  if (t == DType::Bool) return testing::random_array(t, param.shape, 0, 1, rng);
  if (is_float(t)) return testing::random_array(t, param.shape, -2, 2, rng);
  if (t == DType::U64) {
    // Its whole range: values past 2^63 compare as unsigned.
    HostArray a(t, param.shape);
    for (std::int64_t i = 0; i < a.size(); ++i)
      a.set_i64(i, static_cast<std::int64_t>((std::uint64_t{rng()} << 32) | rng()));
    return a;
  }
  const bool is_unsigned = t == DType::U8 || t == DType::U16 || t == DType::U32;
  return testing::random_array(t, param.shape, is_unsigned ? 0 : -3, 3, rng);
}

// Integers and bool bit-exact; floats within a few units of the dtype's precision, relative
// to the output's largest magnitude (sums reassociate on the device).
double tolerance(DType t) {
  switch (t) {
    case DType::F16:
      return 4e-3;
    case DType::BF16:
      return 3e-2;
    case DType::F32:
      return 1e-5;
    case DType::F64:
      return 1e-12;
    default:
      return 0;
  }
}

// Elements [begin, end) of `got` against `want`'s.
std::string compare(const HostArray& got, const HostArray& want, std::int64_t begin,
                    std::int64_t end) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return "dtype or shape differs";
  double scale = 0;
  for (std::int64_t i = begin; i < end; ++i)
    if (std::isfinite(want.get_f64(i))) scale = std::max(scale, std::abs(want.get_f64(i)));
  const double rtol = tolerance(want.dtype());
  for (std::int64_t i = begin; i < end; ++i) {
    if (!is_float(want.dtype())) {
      if (got.get_i64(i) != want.get_i64(i))
        return "element " + std::to_string(i - begin) + ": got " + std::to_string(got.get_i64(i)) +
               ", want " + std::to_string(want.get_i64(i));
      continue;
    }
    const double g = got.get_f64(i), w = want.get_f64(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (g == w) continue;
    if (!(std::abs(g - w) <= rtol * (std::abs(w) + scale) + 1e-30))
      return "element " + std::to_string(i - begin) + ": got " + std::to_string(g) + ", want " +
             std::to_string(w);
  }
  return {};
}

// The samples' outputs of each dtype flattened and concatenated into one output: the
// elementwise and layout ops then fuse into a few kernels (each kernel costs PoCL a build).
struct Segment {
  std::string owner;  // the primitive whose output it is
  std::int64_t begin, end;
};
std::vector<std::vector<Segment>> join_outputs_by_dtype(Graph& g,
                                                        const std::vector<std::string>& owner) {
  std::map<DType, std::vector<std::size_t>> by_dtype;
  for (std::size_t i = 0; i < g.outputs.size(); ++i)
    by_dtype[g.node(g.outputs[i]).dtype].push_back(i);
  std::vector<ValueId> joined;
  std::vector<std::vector<Segment>> segments;
  for (const auto& [dtype, outputs] : by_dtype) {
    std::vector<ValueId> flat;
    std::vector<Segment> parts;
    std::int64_t total = 0;
    for (std::size_t i : outputs) {
      const std::int64_t count = num_elements(g.node(g.outputs[i]).shape);
      Node reshape;
      reshape.op = OpKind::Reshape;
      reshape.dtype = dtype;
      reshape.shape = {count};
      reshape.inputs = {g.outputs[i]};
      flat.push_back(g.add(std::move(reshape)));
      parts.push_back({owner[i], total, total + count});
      total += count;
    }
    Node concatenate;
    concatenate.op = OpKind::Concatenate;
    concatenate.dtype = dtype;
    concatenate.shape = {total};
    concatenate.inputs = flat;
    concatenate.attrs.set("dimension", std::int64_t{0});
    joined.push_back(g.add(std::move(concatenate)));
    segments.push_back(std::move(parts));
  }
  g.outputs = joined;
  return segments;
}

class PrimitiveDtypes : public ::testing::TestWithParam<DType> {};

TEST_P(PrimitiveDtypes, DeviceMatchesInterpreter) {
  const DType d = GetParam();
  Graph whole;
  whole.name = "every_primitive_" + std::string(dtype_name(d));
  std::vector<std::string> owner;  // the primitive each output comes from
  for (const PrimitiveSummary& p : primitive_catalog()) {
    if (!has_device_lowering(p) || !retypable(p.kind)) continue;
    if (std::find(p.dtypes.begin(), p.dtypes.end(), d) == p.dtypes.end()) continue;
    const Graph sample = samples::graph_using(p.kind);
    const Node& main = sample.node(sample.outputs[0]);
    const std::size_t at = data_operand(p.kind);
    const DType from = at < main.inputs.size() ? sample.node(main.inputs[at]).dtype : main.dtype;
    Graph g;
    try {
      g = retyped(sample, from, d);
      verify(g);
    } catch (const Error& e) {
      ADD_FAILURE() << p.name << " accepts " << dtype_name(d)
                    << " in the catalog but its sample does not type-check: " << e.what();
      continue;
    }
    append(whole, g);
    owner.resize(whole.outputs.size(), p.name);
  }
  ASSERT_FALSE(owner.empty());
  const std::vector<std::vector<Segment>> segments = join_outputs_by_dtype(whole, owner);
  verify(whole);

  std::mt19937 rng(static_cast<unsigned>(d) * 7919u + 1u);
  std::vector<HostArray> inputs;
  for (ValueId p : whole.params) inputs.push_back(input_for(whole.node(p), rng));
  const Lowering lowered = lower(whole, {.last = Pass::EffectTokens});
  const Graph& program = lowered.graph;
  ASSERT_EQ(program.params.size(), inputs.size());
  const std::vector<HostArray> want = interpret(program, inputs);

  const std::vector<HostArray> results = run_on_default_device(program, inputs);
  ASSERT_EQ(results.size(), want.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const HostArray& got = results[i];
    for (const Segment& part : segments.at(i))
      EXPECT_EQ(compare(got, want[i], part.begin, part.end), "")
          << part.owner << " on " << dtype_name(d) << " (elements " << part.begin << ".."
          << part.end << " of output " << i << ") in\n"
          << print_graph(program);
  }
}

// Lines of several scan blocks: block totals, their scan and the fix-up, where f16 and bf16
// keep their partial results in float, narrow integers wrap and u64 compares unsigned.
TEST(PrimitiveDtypesLongLines, ScansMatchInterpreter) {
  const std::pair<OpKind, DType> cases[] = {
      {OpKind::Cumsum, DType::F16},  {OpKind::Cumlogsumexp, DType::F16},
      {OpKind::Cumsum, DType::BF16}, {OpKind::Cummax, DType::BF16},
      {OpKind::Cumsum, DType::I8},   {OpKind::Cumprod, DType::U16},
      {OpKind::Cummax, DType::U64},
  };
  const Shape shape{2, 5000};
  samples::Builder b;
  b.g.name = "long_scans";
  bool reverse = false;
  for (const auto& [op, dtype] : cases) {
    const ValueId x = b.param(dtype, shape);
    b.g.outputs.push_back(b.op(op, {x}, dtype, shape,
                               {{"axis", std::int64_t{1}}, {"reverse", std::int64_t{reverse}}}));
    reverse = !reverse;
  }
  verify(b.g);
  std::mt19937 rng(5);
  std::vector<HostArray> inputs;
  for (ValueId p : b.g.params) inputs.push_back(input_for(b.g.node(p), rng));
  // u64 over its whole range: values past 2^63 compare as unsigned.
  for (HostArray& a : inputs)
    if (a.dtype() == DType::U64)
      for (std::int64_t i = 0; i < a.size(); ++i)
        a.set_i64(i, static_cast<std::int64_t>((std::uint64_t{rng()} << 32) | rng()));
  const std::vector<HostArray> want = interpret(b.g, inputs);
  const std::vector<HostArray> results = run_on_default_device(b.g, inputs);
  ASSERT_EQ(results.size(), want.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const HostArray& got = results[i];
    // Each line on its own: the tolerance scales with the line's largest value.
    for (std::int64_t line = 0; line < shape[0]; ++line)
      EXPECT_EQ(compare(got, want[i], line * shape[1], (line + 1) * shape[1]), "")
          << op_name(cases[i].first) << " on " << dtype_name(cases[i].second) << ", line " << line;
  }
}

// `g` on the device and in the interpreter: for each output, the first element whose bits
// differ (-1: none), NaNs of either payload alike. Sorting moves elements, it computes none.
std::vector<std::int64_t> sort_differences(const Graph& g, const std::vector<HostArray>& inputs) {
  const std::vector<HostArray> want = interpret(g, inputs);
  const std::vector<HostArray> results = run_on_default_device(g, inputs);
  EXPECT_EQ(results.size(), want.size());
  std::vector<std::int64_t> differences;
  for (std::size_t i = 0; i < std::min(results.size(), want.size()); ++i) {
    const HostArray& got = results[i];
    auto same = [&](std::int64_t e) {
      if (!is_float(got.dtype())) return got.get_i64(e) == want[i].get_i64(e);
      const double x = got.get_f64(e), y = want[i].get_f64(e);
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
      return x == y && std::signbit(x) == std::signbit(y);
    };
    std::int64_t differ = -1;
    for (std::int64_t e = 0; e < got.size() && differ < 0; ++e)
      if (!same(e)) differ = e;
    differences.push_back(differ);
  }
  return differences;
}

// Sorts of lines longer than one local-memory chunk (2048 positions): along the last axis and
// along a leading one (strided lines), with ties, NaNs, infinities and both zeros, in one
// program. Values and argsort's positions match the interpreter. One key sorts by radix on CPU
// devices; argsort by two keys still runs the bitonic chunks' merge passes.
TEST(PrimitiveDtypesLongLines, SortsMatchInterpreter) {
  // Floats, a stored-narrow float, a narrow and a wide integer; shorter lines of every dtype
  // are in PrimitiveDtypes.
  const DType dtypes[] = {DType::F32, DType::F16, DType::I8, DType::U64};
  samples::Builder b;
  b.g.name = "long_sorts";
  bool leading_axis = false;
  for (const DType dtype : dtypes) {
    const Shape shape = leading_axis ? Shape{2500, 2} : Shape{2, 2500};
    const std::int64_t axis = leading_axis ? 0 : 1;
    const ValueId x = b.param(dtype, shape);
    b.g.outputs.push_back(b.op(OpKind::Sort, {x}, dtype, shape, SortAttrs{axis, true}.write()));
    b.g.outputs.push_back(
        b.op(OpKind::Argsort, {x}, DType::I32, shape, SortAttrs{axis, true}.write()));
    leading_axis = !leading_axis;
  }
  for (const ValueId x : {b.g.params[0], b.g.params[3]}) {
    const Node& key = b.g.node(x);
    const std::int64_t axis = key.shape[0] == 2 ? 1 : 0;
    const ValueId second = b.op(OpKind::Neg, {x}, key.dtype, key.shape);
    b.g.outputs.push_back(
        b.op(OpKind::Argsort, {x, second}, DType::I32, key.shape, SortAttrs{axis, true}.write()));
  }
  verify(b.g);
  std::mt19937 rng(7);
  std::vector<HostArray> inputs;
  for (ValueId p : b.g.params) {
    HostArray a = input_for(b.g.node(p), rng);
    if (is_float(a.dtype())) {
      const double specials[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0};
      for (std::int64_t i = 0; i < a.size(); i += 7)
        a.set_f64(i, specials[static_cast<std::size_t>(rng() % 6)]);
    }
    inputs.push_back(std::move(a));
  }
  const std::vector<std::int64_t> differences = sort_differences(b.g, inputs);
  for (std::size_t i = 0; i < differences.size(); ++i)
    EXPECT_EQ(differences[i], -1) << (i >= 8       ? "argsort by two keys"
                                      : i % 2 == 1 ? "argsort"
                                                   : "sort")
                                  << " of " << dtype_name(dtypes[i >= 8 ? (i - 8) * 3 : i / 2]);
}

// Lines of 8 positions per key byte and more (at least 16) sort by radix on CPU devices
// (radix_sort_kernel.cpp), in one program: every dtype's key bits (NaNs of both signs, both zeros
// and infinities; integers over their whole range), a second line of small values whose high digits
// are constant (their passes do nothing, while the first line's move), ties for argsort's
// stability, top_k above the selection's limit (descending), strided lines, and lines long enough
// for several blocks.
TEST(PrimitiveDtypesLongLines, RadixSortsMatchInterpreter) {
  samples::Builder b;
  b.g.name = "radix_sorts";
  struct Output {
    std::string what;
    DType dtype;
  };
  std::vector<Output> outputs;
  // Each sort group is a few kernels per key digit: every dtype is sorted, the payloads of
  // positions (argsort) and the descending order (top_k) on a few.
  auto add = [&](OpKind kind, DType dtype, const Shape& shape, std::int64_t axis) {
    const ValueId x = b.param(dtype, shape);
    Shape result = shape;
    Attrs attrs = SortAttrs{axis, true}.write();
    if (kind == OpKind::TopK || kind == OpKind::TopKIndices) {
      result.back() = 150;
      attrs = TopKAttrs{150}.write();
    }
    const bool values = kind == OpKind::Sort || kind == OpKind::TopK;
    b.g.outputs.push_back(b.op(kind, {x}, values ? dtype : DType::I32, result, attrs));
    outputs.push_back({std::string(op_name(kind)), dtype});
  };
  bool leading_axis = false;
  for (const DType dtype : kAllDTypes) {
    add(OpKind::Sort, dtype, leading_axis ? Shape{4099, 2} : Shape{2, 4099}, leading_axis ? 0 : 1);
    leading_axis = !leading_axis;
  }
  for (const DType dtype : {DType::F32, DType::BF16, DType::I8, DType::U64})
    add(OpKind::Argsort, dtype, {2, 4099}, 1);
  add(OpKind::TopK, DType::F16, {2, 4099}, 1);
  add(OpKind::TopKIndices, DType::F32, {2, 4099}, 1);
  add(OpKind::Argsort, DType::F32, {2, 70001}, 1);
  add(OpKind::Sort, DType::I16, {140001}, 0);
  add(OpKind::Argsort, DType::U8, {70001}, 0);  // one pass, several blocks
  verify(b.g);

  std::mt19937_64 rng(11);
  std::vector<HostArray> inputs;
  for (ValueId p : b.g.params) {
    const Node& param = b.g.node(p);
    const DType t = param.dtype;
    HostArray a(t, param.shape);
    // Line 0 over the dtype's whole range, line 1 (and odd elements of strided lines) small.
    const bool strided = param.shape.size() == 2 && param.shape[1] == 2;
    const std::int64_t n = param.shape.back();
    const int bits = static_cast<int>(8 * dtype_size(t));
    for (std::int64_t e = 0; e < a.size(); ++e) {
      const bool small = strided ? e % 2 == 1 : e >= n;
      const std::uint64_t r = rng();
      if (t == DType::Bool) {
        a.set_i64(e, static_cast<std::int64_t>(r & 1));
      } else if (is_float(t)) {
        const double specials[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0};
        const double v = r % 5 == 0 ? specials[r / 5 % 6]
                         : small    ? static_cast<double>(r / 5 % 7) - 3
                                    : std::ldexp(static_cast<double>(r >> 40) - (1 << 23), -12);
        a.set_f64(e, v);
      } else if (small) {
        a.set_i64(e, static_cast<std::int64_t>(r % 4));
      } else {
        // The bits as the dtype's value: sign-extended for signed integers.
        const std::uint64_t raw = bits == 64 ? r : r & ((std::uint64_t{1} << bits) - 1);
        const std::int64_t value = is_signed_integer(t) && bits < 64 && (raw >> (bits - 1)) != 0
                                       ? static_cast<std::int64_t>(raw) - (std::int64_t{1} << bits)
                                       : static_cast<std::int64_t>(raw);
        a.set_i64(e, value);
      }
    }
    inputs.push_back(std::move(a));
  }
  const std::vector<std::int64_t> differences = sort_differences(b.g, inputs);
  for (std::size_t i = 0; i < differences.size(); ++i)
    EXPECT_EQ(differences[i], -1) << outputs[i].what << " of " << dtype_name(outputs[i].dtype)
                                  << " (output " << i << ")";
}

INSTANTIATE_TEST_SUITE_P(EveryDtype, PrimitiveDtypes,
                         ::testing::ValuesIn(std::vector<DType>(std::begin(kAllDTypes),
                                                                std::end(kAllDTypes))),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(dtype_name(info.param));
                         });

}  // namespace
}  // namespace weft
