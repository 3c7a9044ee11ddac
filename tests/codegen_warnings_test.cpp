// Generated OpenCL C compiles without a single diagnostic: every op kind over every dtype it
// accepts, every kernel template (loop bodies scalar and 16-wide, tails, the three reduction
// shapes, dots, sorts, windows), for CPU and GPU devices, and the example programs. A warning would
// print "N warnings generated." on the user's stderr from inside the OpenCL compiler, so the build
// log of each program is checked here; it is shown to users only when a build fails or with
// WEFT_LOG=build=debug (checked at the end).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "weft/compile/tokens.h"
#include "weft/ir/effects.h"
#include "weft/ir/text.h"
#include "weft/log.h"
#include "weft/opencl/codegen.h"
#include "weft/opencl/device.h"
#include "weft/weft.h"

namespace weft {
namespace {

using Ints = std::vector<std::int64_t>;

const std::vector<DType> kAll(std::begin(kAllDTypes), std::end(kAllDTypes));

opencl::OpenCLDevice& device() {
  return dynamic_cast<opencl::OpenCLDevice&>(default_device());
}

// Builds graphs node by node; verify() at the end catches a mistyped node.
class Builder {
 public:
  explicit Builder(std::string name) { graph_.name = std::move(name); }
  ValueId param(DType dtype, Shape shape) {
    Node n;
    n.op = OpKind::Parameter;
    n.dtype = dtype;
    n.shape = std::move(shape);
    n.attrs.set("index", static_cast<std::int64_t>(graph_.params.size()));
    const ValueId id = graph_.add(std::move(n));
    graph_.params.push_back(id);
    return id;
  }
  ValueId op(OpKind kind, DType dtype, Shape shape, std::vector<ValueId> inputs,
             std::vector<std::pair<std::string, AttrValue>> attrs = {}) {
    Node n;
    n.op = kind;
    n.dtype = dtype;
    n.shape = std::move(shape);
    n.inputs = std::move(inputs);
    for (auto& [name, value] : attrs) n.attrs.set(name, std::move(value));
    return graph_.add(std::move(n));
  }
  ValueId constant(DType dtype, double value) {
    if (is_float(dtype)) return op(OpKind::Constant, dtype, {}, {}, {{"value", value}});
    return op(OpKind::Constant, dtype, {}, {}, {{"value", static_cast<std::int64_t>(value)}});
  }
  void output(ValueId v) { graph_.outputs.push_back(v); }
  Graph finish() {
    verify(graph_);
    return graph_;
  }
  DType dtype(ValueId v) const { return graph_.node(v).dtype; }

 private:
  Graph graph_;
};

std::vector<DType> usable(const std::vector<DType>& types) {
  std::vector<DType> out;
  for (DType t : types)
    if (device().supports(t)) out.push_back(t);
  return out;
}

std::vector<DType> without(std::vector<DType> types, std::initializer_list<DType> drop) {
  std::erase_if(types,
                [&](DType t) { return std::find(drop.begin(), drop.end(), t) != drop.end(); });
  return types;
}

// Every elementwise op (unary, binary, compare, select, convert) over every dtype it accepts,
// each its own output (so its own kernel) of one graph of `shape`.
Graph elementwise_program(const Shape& shape) {
  Builder b("elementwise");
  const std::vector<DType> all = usable(kAll);
  const std::vector<DType> numeric = without(all, {DType::Bool});
  std::vector<DType> floats, logical;
  for (DType t : all) (is_float(t) ? floats : logical).push_back(t);
  std::map<DType, std::pair<ValueId, ValueId>> xy;
  for (DType t : all) xy[t] = {b.param(t, shape), b.param(t, shape)};
  const ValueId pred = b.param(DType::Bool, shape);
  auto unary = [&](OpKind op, const std::vector<DType>& types) {
    for (DType t : types) b.output(b.op(op, t, shape, {xy[t].first}));
  };
  auto binary = [&](OpKind op, const std::vector<DType>& types, bool compare) {
    for (DType t : types)
      b.output(b.op(op, compare ? DType::Bool : t, shape, {xy[t].first, xy[t].second}));
  };
  for (OpKind op : {OpKind::Neg, OpKind::Abs, OpKind::Sign}) unary(op, numeric);
  for (OpKind op :
       {OpKind::Floor, OpKind::Ceil, OpKind::Round, OpKind::Exp, OpKind::Exp2, OpKind::Log,
        OpKind::Log1p, OpKind::Expm1, OpKind::Sqrt, OpKind::Rsqrt, OpKind::Sin, OpKind::Cos,
        OpKind::Tan, OpKind::Tanh, OpKind::Logistic, OpKind::Erf})
    unary(op, floats);
  unary(OpKind::Not, logical);
  for (OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Pow,
                    OpKind::Max, OpKind::Min})
    binary(op, numeric, false);
  binary(OpKind::Atan2, floats, false);
  for (OpKind op : {OpKind::And, OpKind::Or, OpKind::Xor}) binary(op, logical, false);
  for (OpKind op : {OpKind::Eq, OpKind::Ne}) binary(op, all, true);
  for (OpKind op : {OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge}) binary(op, numeric, true);
  for (DType t : all) b.output(b.op(OpKind::Select, t, shape, {pred, xy[t].first, xy[t].second}));
  for (DType from : all)
    for (DType to : all) b.output(b.op(OpKind::Convert, to, shape, {xy[from].first}));
  // A fused chain of math calls over f32: the 16-wide vector body on CPUs at long sizes.
  ValueId t = xy[DType::F32].first;
  for (OpKind op : {OpKind::Exp, OpKind::Tanh, OpKind::Neg, OpKind::Sin, OpKind::Abs, OpKind::Sqrt})
    t = b.op(op, DType::F32, shape, {t});
  b.output(b.op(OpKind::Pow, DType::F32, shape, {t, xy[DType::F32].second}));
  return b.finish();
}

// Leaves and layout ops over one dtype: iota, constants, broadcasts, transpose, both slices,
// reshape, concatenate, pad (negative and interior), dynamic slices with starts of each
// integer dtype, select on a computed predicate.
Graph layout_program(DType t) {
  Builder b(std::string("layout_") + std::string(dtype_name(t)));
  const ValueId x = b.param(t, {6, 4});
  const ValueId row = b.param(t, {4});
  const ValueId r = b.param(DType::I32, {});
  const ValueId c = b.param(DType::I64, {});
  const ValueId u = b.param(DType::U32, {});
  const ValueId pad_value = b.param(t, {});
  const ValueId bcast = b.op(OpKind::BroadcastInDim, t, {6, 4}, {row}, {{"dims", Ints{1}}});
  const ValueId eq = b.op(OpKind::Eq, DType::Bool, {6, 4}, {x, bcast});
  const ValueId sel = b.op(OpKind::Select, t, {6, 4}, {eq, x, bcast});
  if (t != DType::Bool) {
    const ValueId iota = b.op(OpKind::Iota, t, {6, 4}, {}, {{"dimension", std::int64_t{1}}});
    const ValueId k =
        b.op(OpKind::BroadcastInDim, t, {6, 4}, {b.constant(t, 3)}, {{"dims", Ints{}}});
    b.output(b.op(OpKind::Add, t, {6, 4}, {b.op(OpKind::Mul, t, {6, 4}, {iota, k}), sel}));
  }
  b.output(b.op(OpKind::Transpose, t, {4, 6}, {sel}, {{"permutation", Ints{1, 0}}}));
  const ValueId window = b.op(OpKind::DynamicSlice, t, {2, 2}, {x, r, c}, {{"sizes", Ints{2, 2}}});
  b.output(window);
  b.output(b.op(OpKind::DynamicSlice, t, {3, 1}, {sel, u, r}, {{"sizes", Ints{3, 1}}}));
  const ValueId strided =
      b.op(OpKind::Slice, t, {3, 3}, {x},
           {{"start", Ints{0, 1}}, {"limit", Ints{6, 4}}, {"stride", Ints{2, 1}}});
  b.output(b.op(OpKind::Slice, t, {3, 2}, {strided},
                {{"start", Ints{0, 0}}, {"limit", Ints{3, 3}}, {"stride", Ints{1, 2}}}));
  b.output(b.op(OpKind::Reshape, t, {24}, {sel}));
  b.output(b.op(OpKind::Concatenate, t, {6, 8}, {x, bcast}, {{"dimension", std::int64_t{1}}}));
  b.output(b.op(OpKind::Pad, t, {13, 6}, {sel, pad_value},
                {{"low", Ints{1, -1}}, {"high", Ints{1, 3}}, {"interior", Ints{1, 0}}}));
  b.output(b.op(OpKind::DynamicUpdateSlice, t, {6, 4}, {sel, window, c, u}));
  return b.finish();
}

// Every reduction over every dtype it accepts, in each kernel shape: two-stage (few outputs,
// long rows, and a full reduction), serial over an outer axis, serial over short rows, and
// unrolled over long rows; arg-reductions to i32 and i64.
Graph reduction_program() {
  Builder b("reductions");
  const std::vector<DType> numeric = without(usable(kAll), {DType::Bool});
  struct Case {
    Shape in;
    Ints axes;
    Shape out;
  };
  const std::vector<Case> cases = {{{3, 50000}, {1}, {3}},
                                   {{200000}, {0}, {}},
                                   {{9, 70}, {0}, {70}},
                                   {{70, 9}, {1}, {70}},
                                   {{70, 100}, {1}, {70}}};
  for (DType t : numeric)
    for (const Case& k : cases) {
      const ValueId x = b.param(t, k.in);
      const ValueId fused = b.op(OpKind::Abs, t, k.in, {x});
      for (OpKind op :
           {OpKind::ReduceSum, OpKind::ReduceProd, OpKind::ReduceMax, OpKind::ReduceMin})
        b.output(b.op(op, t, k.out, {fused}, {{"axes", k.axes}}));
      for (OpKind op : {OpKind::ArgMax, OpKind::ArgMin})
        for (DType index : {DType::I32, DType::I64})
          b.output(b.op(op, index, k.out, {fused}, {{"axes", k.axes}}));
    }
  return b.finish();
}

// Dots in the canonical batched form and in forms canonicalisation rewrites, per dtype.
Graph dot_program() {
  Builder b("dots");
  for (DType t : without(usable(kAll), {DType::Bool})) {
    const ValueId a = b.param(t, {5, 3}), w = b.param(t, {4, 5});
    b.output(b.op(OpKind::DotGeneral, t, {3, 4}, {a, w},
                  {{"lhs_batch", Ints{}},
                   {"lhs_contracting", Ints{0}},
                   {"rhs_batch", Ints{}},
                   {"rhs_contracting", Ints{1}}}));
    const ValueId x = b.param(t, {2, 6, 7}), y = b.param(t, {2, 7, 33});
    b.output(b.op(OpKind::DotGeneral, t, {2, 6, 33}, {x, y},
                  {{"lhs_batch", Ints{0}},
                   {"lhs_contracting", Ints{2}},
                   {"rhs_batch", Ints{0}},
                   {"rhs_contracting", Ints{1}}}));
  }
  return b.finish();
}

// Bit operations and the remaining elementwise ops over every dtype each accepts; bitcasts
// between every pair of non-bool dtypes (across widths too).
Graph bits_program(const Shape& shape) {
  Builder b("elementwise_bits");
  const std::vector<DType> all = usable(kAll);
  const std::vector<DType> numeric = without(all, {DType::Bool});
  std::vector<DType> floats, integers;
  for (DType t : numeric) (is_float(t) ? floats : integers).push_back(t);
  std::map<DType, ValueId> x;
  for (DType t : all) x[t] = b.param(t, shape);
  const ValueId which = b.param(DType::I32, shape);
  for (DType t : integers) {
    for (OpKind op : {OpKind::ShiftLeft, OpKind::ShiftRightLogical, OpKind::ShiftRightArithmetic})
      b.output(b.op(op, t, shape, {x[t], x[t]}));
    for (OpKind op : {OpKind::PopulationCount, OpKind::Clz}) b.output(b.op(op, t, shape, {x[t]}));
  }
  for (DType t : floats) {
    b.output(b.op(OpKind::IsFinite, DType::Bool, shape, {x[t]}));
    b.output(b.op(OpKind::NextAfter, t, shape, {x[t], x[t]}));
    b.output(b.op(OpKind::ErfInv, t, shape, {x[t]}));
    b.output(b.op(OpKind::IntegerPow, t, shape, {x[t]}, {{"y", std::int64_t{-5}}}));
  }
  for (DType t : numeric) {
    b.output(b.op(OpKind::Clamp, t, shape, {b.constant(t, 1), x[t], x[t]}));
    b.output(b.op(OpKind::IntegerPow, t, shape, {x[t]}, {{"y", std::int64_t{7}}}));
  }
  for (DType t : all) {
    b.output(b.op(OpKind::SelectN, t, shape, {which, x[t], x[t], x[t]}));
    b.output(b.op(OpKind::SelectN, t, shape, {x[DType::Bool], x[t], x[t]}));
  }
  // Across widths the narrower side has a trailing axis of the width ratio (as XLA).
  for (DType from : numeric) {
    for (DType to : numeric) {
      const std::int64_t in = static_cast<std::int64_t>(dtype_size(from));
      const std::int64_t out = static_cast<std::int64_t>(dtype_size(to));
      Shape wide = shape;
      wide.push_back(in < out ? out / in : in / out);
      if (in < out) b.output(b.op(OpKind::BitcastConvert, to, shape, {b.param(from, wide)}));
      if (in >= out) b.output(b.op(OpKind::BitcastConvert, to, in > out ? wide : shape, {x[from]}));
    }
  }
  return b.finish();
}

// Sorts over every dtype: one key along short lines (bitonic chunks) and long ones (on CPUs a
// radix sort, a work-item per line or several blocks per line; its passes differ by key width),
// descending (top_k above the selection's limit), and by two keys (chunks and merges).
Graph sort_program() {
  Builder b("sorts");
  const std::pair<std::string, AttrValue> dimension = {"dimension", std::int64_t{1}};
  const std::pair<std::string, AttrValue> k = {"k", std::int64_t{200}};
  for (DType t : usable(kAll)) {
    const ValueId short_lines = b.param(t, {3, 8}), x = b.param(t, {2, 3000});
    b.output(b.op(OpKind::Sort, t, {3, 8}, {short_lines}, {dimension}));
    b.output(b.op(OpKind::Sort, t, {2, 3000}, {x}, {dimension}));
    b.output(b.op(OpKind::Argsort, DType::I32, {2, 3000}, {x}, {dimension}));
    b.output(b.op(OpKind::Argsort, DType::I32, {2, 3000}, {x, x}, {dimension}));
    b.output(b.op(OpKind::TopK, t, {2, 200}, {x}, {k}));
    b.output(b.op(OpKind::TopKIndices, DType::I32, {2, 200}, {x}, {k}));
  }
  for (DType t : usable({DType::F16, DType::F32, DType::F64}))
    b.output(b.op(OpKind::Sort, t, {1, 40000}, {b.param(t, {1, 40000})}, {dimension}));
  return b.finish();
}

// The windowed reductions over every dtype they take (strided, padded, both dilations), and
// select_and_gather_add / select_and_scatter_add over the floats.
Graph window_program() {
  Builder b("windows");
  using Attr = std::pair<std::string, AttrValue>;
  const std::vector<Attr> undilated = {{"window_dimensions", Ints{2, 3}},
                                       {"window_strides", Ints{2, 1}},
                                       {"padding_low", Ints{1, 0}},
                                       {"padding_high", Ints{0, 2}}};
  std::vector<Attr> dilated = undilated;
  dilated.push_back({"base_dilation", Ints{1, 2}});
  dilated.push_back({"window_dilation", Ints{2, 1}});
  for (DType t : usable(kAll)) {
    if (t == DType::Bool) continue;
    const ValueId x = b.param(t, {5, 6});
    for (OpKind op : {OpKind::ReduceWindowSum, OpKind::ReduceWindowMax, OpKind::ReduceWindowMin})
      b.output(b.op(op, t, {2, 11}, {x}, dilated));
    if (!is_float(t)) continue;
    std::vector<Attr> gather = dilated, scatter = undilated;
    gather.push_back({"select_prim", std::string("ge")});
    scatter.push_back({"select_prim", std::string("le")});
    b.output(b.op(OpKind::SelectAndGatherAdd, t, {2, 11}, {x, x}, gather));
    b.output(b.op(OpKind::SelectAndScatterAdd, t, {5, 6}, {b.param(t, {3, 6}), x}, scatter));
    // Windows that never overlap: stored straight to their choice.
    std::vector<Attr> disjoint = {{"window_dimensions", Ints{2, 2}},
                                  {"window_strides", Ints{2, 3}},
                                  {"padding_low", Ints{1, 0}},
                                  {"padding_high", Ints{0, 0}},
                                  {"select_prim", std::string("ge")}};
    b.output(b.op(OpKind::SelectAndScatterAdd, t, {5, 6}, {b.param(t, {3, 2}), x}, disjoint));
  }
  return b.finish();
}

std::vector<Graph> every_op_kind() {
  std::vector<Graph> programs = {elementwise_program({37}), elementwise_program({8192}),
                                 reduction_program(), dot_program()};
  // Bit operations and the remaining elementwise ops.
  programs.push_back(bits_program({38}));
  programs.push_back(bits_program({8192}));
  for (DType t : usable(kAll)) programs.push_back(layout_program(t));
  programs.push_back(sort_program());
  programs.push_back(window_program());
  return programs;
}

std::string build_log(cl_program program) {
  std::size_t size = 0;
  clGetProgramBuildInfo(program, device().id(), CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device().id(), CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' '))
    log.pop_back();
  return log;
}

// Empty when the program's generated source builds with an empty build log; otherwise the
// start of the log.
std::string diagnostics_of(const Graph& graph, bool gpu_kernels) {
  opencl::DeviceCaps caps = device().caps();
  caps.is_gpu = gpu_kernels;
  const opencl::ProgramPlan plan = opencl::plan_program(graph, caps);
  const opencl::ClProgram program = device().build_program(plan.source, plan.build_options);
  const std::string log = build_log(program.get());
  if (log.empty()) return {};
  return graph.name + (gpu_kernels ? " (GPU kernels)" : " (CPU kernels)") + ": " +
         log.substr(0, 2000);
}

TEST(CodegenWarnings, EveryOpKindBuildsWithoutDiagnostics) {
  for (const Graph& graph : every_op_kind())
    for (bool gpu : {false, true}) EXPECT_EQ(diagnostics_of(graph, gpu), "");
}

TEST(CodegenWarnings, ExamplesBuildWithoutDiagnostics) {
  const char* resources = std::getenv("WEFT_RESOURCES");
  ASSERT_NE(resources, nullptr) << "WEFT_RESOURCES names resources/ (CTest sets it)";
  int examples = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(resources) / "examples")) {
    if (entry.path().extension() != ".weft") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    Graph graph = parse_graph(text.str());
    // Programs with prints compile once their tokens are threaded (as jit and weft run do).
    if (!graph_effects(graph).empty()) graph = thread_effect_tokens(graph).graph;
    for (bool gpu : {false, true})
      EXPECT_EQ(diagnostics_of(graph, gpu), "") << entry.path().filename();
    ++examples;
  }
  EXPECT_GE(examples, 5);
}

// A successful build's log goes to WEFT_LOG=build=debug only, never to the default level.
TEST(CodegenWarnings, BuildLogIsDebugOutput) {
  std::vector<std::string> lines;
  log::set_sink([&](const std::string& line) { lines.push_back(line); });
  // Sources differ from every other test's, so the device builds them instead of reusing.
  auto build = [&](int seed) {
    Builder b("debug_log_" + std::to_string(seed));
    const ValueId x = b.param(DType::F32, {5});
    b.output(b.op(OpKind::Add, DType::F32, {5},
                  {x, b.op(OpKind::BroadcastInDim, DType::F32, {5}, {b.constant(DType::F32, seed)},
                           {{"dims", Ints{}}})}));
    const opencl::ProgramPlan plan = opencl::plan_program(b.finish(), device().caps());
    device().build_program(plan.source, plan.build_options);
  };
  log::set_levels("warning");
  build(1);
  EXPECT_TRUE(lines.empty());
  log::set_levels("build=debug");
  build(2);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("weft[build] debug: built "), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("warning"), std::string::npos) << lines[0];
  log::set_sink({});
  log::reset_levels_from_environment();
}

}  // namespace
}  // namespace weft
