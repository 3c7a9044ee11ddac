// A small valid graph using each primitive, with sensible attributes: what the IR text round
// trip (ir_text_test) and the primitive walk (primitive_walk_test) check every primitive on.
// A primitive without a sample here fails both.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/graph.h"
#include "weft/ir/regions.h"

namespace weft::samples {

// Small graph builder for the tests.
struct Builder {
  Graph g;

  ValueId param(DType dtype, Shape shape) {
    Node n;
    n.op = OpKind::Parameter;
    n.dtype = dtype;
    n.shape = std::move(shape);
    n.attrs.set("index", static_cast<std::int64_t>(g.params.size()));
    ValueId id = g.add(std::move(n));
    g.params.push_back(id);
    return id;
  }

  ValueId op(OpKind kind, std::vector<ValueId> inputs, DType dtype, Shape shape, Attrs attrs = {}) {
    Node n;
    n.op = kind;
    n.dtype = dtype;
    n.shape = std::move(shape);
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    return g.add(std::move(n));
  }

  ValueId constant(DType dtype, AttrValue value) {
    return op(OpKind::Constant, {}, dtype, {}, Attrs{{"value", std::move(value)}});
  }

  // Appends a control node and its Result nodes; returns the id of the first result.
  ValueId control(OpKind kind, std::vector<ValueId> inputs, Attrs attrs,
                  std::vector<TensorType> results, std::vector<Graph> regions) {
    Node n;
    n.op = kind;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.results = std::move(results);
    n.regions = std::move(regions);
    return g.add_control(std::move(n));
  }
};

// Region `index` of a `kind` node: parameters of the given types; `body` adds the statements
// and returns the outputs. Named as the parser names regions.
inline Graph make_region(
    OpKind kind, std::size_t index, const std::vector<TensorType>& params,
    const std::function<std::vector<ValueId>(Builder&, std::vector<ValueId>)>& body) {
  Builder b;
  b.g.name = region_name(kind, index);
  std::vector<ValueId> ps;
  for (const TensorType& t : params) ps.push_back(b.param(t.dtype, t.shape));
  b.g.outputs = body(b, ps);
  return b.g;
}

inline TensorType tt(DType dtype, Shape shape = {}) {
  return {dtype, std::move(shape)};
}

using Ints = std::vector<std::int64_t>;

inline bool needs_float(OpKind k) {
  switch (k) {
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Sign:
      return false;
    default:
      return true;
  }
}

// Adds a node of control op `kind` (or, for `result`, a cond whose results are read) to `b`
// and returns its first result.
inline ValueId control_graph(Builder& b, OpKind kind) {
  const DType f = DType::F32;
  const DType i32 = DType::I32;
  switch (kind) {
    case OpKind::While: {
      // (x, i) -> while i < 10: (x + k, i + 1), with k closed over.
      ValueId k = b.param(f, {});
      ValueId x = b.param(f, {});
      ValueId zero = b.constant(i32, std::int64_t{0});
      const std::vector<TensorType> params = {tt(f), tt(i32), tt(f)};
      Graph cond = make_region(kind, 0, params, [&](Builder& r, std::vector<ValueId> p) {
        ValueId ten = r.constant(i32, std::int64_t{10});
        return std::vector<ValueId>{r.op(OpKind::Lt, {p[1], ten}, DType::Bool, {})};
      });
      Graph body = make_region(kind, 1, params, [&](Builder& r, std::vector<ValueId> p) {
        ValueId one = r.constant(i32, std::int64_t{1});
        return std::vector<ValueId>{r.op(OpKind::Add, {p[0], p[2]}, f, {}),
                                    r.op(OpKind::Add, {p[1], one}, i32, {})};
      });
      const ValueId first = b.control(kind, {x, zero, k}, {{"carries", std::int64_t{2}}},
                                      {tt(f), tt(i32)}, {cond, body});
      b.g.outputs.push_back(first + 1);
      return first;
    }
    case OpKind::Cond: {
      // switch(index, x): -x, |x|, x.
      ValueId index = b.param(i32, {});
      ValueId x = b.param(f, {3});
      std::vector<Graph> branches;
      for (std::size_t k = 0; k < 3; ++k)
        branches.push_back(
            make_region(kind, k, {tt(f, {3})}, [&](Builder& r, std::vector<ValueId> p) {
              if (k == 2) return p;
              return std::vector<ValueId>{r.op(k == 0 ? OpKind::Neg : OpKind::Abs, {p[0]}, f, {3})};
            }));
      return b.control(kind, {index, x}, {}, {tt(f, {3})}, std::move(branches));
    }
    case OpKind::CustomJvp:
    case OpKind::CustomVjp:
    case OpKind::Checkpoint: {
      // A custom sub-function: its body doubles its argument; custom_jvp and custom_vjp say
      // how many leading operands are its arguments.
      ValueId x = b.param(f, {3});
      Graph body = make_region(kind, 0, {tt(f, {3})}, [&](Builder& r, std::vector<ValueId> p) {
        return std::vector<ValueId>{r.op(OpKind::Add, {p[0], p[0]}, f, {3})};
      });
      const Attrs attrs = kind == OpKind::Checkpoint ? Attrs{} : Attrs{{"inputs", std::int64_t{1}}};
      return b.control(kind, {x}, attrs, {tt(f, {3})}, {body});
    }
    case OpKind::CustomLin: {
      // A custom_vjp's linear part: one tangent, then one residual.
      ValueId t = b.param(f, {3});
      ValueId r = b.param(f, {3});
      return b.control(kind, {t, r}, {{"tangents", std::int64_t{1}}}, {tt(f, {3})}, {});
    }
    case OpKind::Psum:
    case OpKind::Pmean:
    case OpKind::Pmax:
    case OpKind::AllGather: {
      ValueId x = b.param(f, {3});
      return b.control(kind, {x}, {{"axis_name", std::string("i")}},
                       {kind == OpKind::AllGather ? tt(f, {2, 3}) : tt(f, {3})}, {});
    }
    case OpKind::AxisIndex:
      b.param(f, {3});
      return b.control(kind, {}, {{"axis_name", std::string("i")}}, {tt(i32)}, {});
    case OpKind::Scan: {
      // Reverse scan over the rows of xs: carry c + x, stacked c * x.
      ValueId c = b.param(f, {3});
      ValueId xs = b.param(f, {4, 3});
      Graph body = make_region(
          kind, 0, {tt(i32), tt(f, {3}), tt(f, {3})}, [&](Builder& r, std::vector<ValueId> p) {
            return std::vector<ValueId>{r.op(OpKind::Add, {p[1], p[2]}, f, {3}),
                                        r.op(OpKind::Mul, {p[1], p[2]}, f, {3})};
          });
      const ValueId first = b.control(kind, {c, xs},
                                      {{"carries", std::int64_t{1}},
                                       {"xs", std::int64_t{1}},
                                       {"length", std::int64_t{4}},
                                       {"reverse", std::int64_t{1}}},
                                      {tt(f, {3}), tt(f, {4, 3})}, {body});
      b.g.outputs.push_back(first + 1);
      return first;
    }
    default: {
      // Results of a two-way cond on a bool, returning its parameters swapped.
      ValueId pred = b.param(DType::Bool, {});
      ValueId x = b.param(f, {2});
      ValueId y = b.param(i32, {});
      std::vector<Graph> branches;
      for (std::size_t k = 0; k < 2; ++k)
        branches.push_back(make_region(
            OpKind::Cond, k, {tt(f, {2}), tt(i32)}, [&](Builder& r, std::vector<ValueId> p) {
              if (k == 0) return std::vector<ValueId>{r.op(OpKind::Neg, {p[0]}, f, {2}), p[1]};
              return p;
            }));
      const ValueId first =
          b.control(OpKind::Cond, {pred, x, y}, {}, {tt(f, {2}), tt(i32)}, std::move(branches));
      b.g.outputs.push_back(first + 1);
      return first;
    }
  }
}

// Host ops with their tokens threaded: x and a token in, the host op's results out.
inline ValueId host_graph(Builder& b, OpKind kind) {
  const DType f = DType::F32;
  ValueId x = b.param(f, {3});
  ValueId token = b.param(DType::Token, {});
  switch (kind) {
    case OpKind::DebugPrint:
      return b.control(
          kind, {token, x},
          Attrs{{"format", std::string("x = {} \"quoted\" {{}}")}, {"ordered", std::int64_t{1}}},
          {tt(DType::Token)}, {});
    case OpKind::HostCall: {
      ValueId first = b.control(kind, {token, x},
                                Attrs{{"callback", std::int64_t{0}},
                                      {"effect", std::string("io_callback")},
                                      {"ordered", std::int64_t{1}}},
                                {tt(DType::Token), TensorType{f, {3}}}, {});
      b.g.outputs.push_back(first);
      return first + 1;
    }
    default:
      return b.op(kind, {token, token}, DType::Token, {});
  }
}

// Bit operations and the remaining elementwise ops: their sample, or nullopt for other ops.
inline std::optional<ValueId> elementwise_bits_graph(Builder& b, OpKind kind) {
  const DType f = DType::F32;
  switch (kind) {
    case OpKind::ShiftLeft:
    case OpKind::ShiftRightLogical:
    case OpKind::ShiftRightArithmetic: {
      ValueId x = b.param(DType::U32, {4});
      ValueId n = b.param(DType::U32, {4});
      return b.op(kind, {x, n}, DType::U32, {4});
    }
    case OpKind::BitcastConvert: {
      // f64[3] -> u32[3, 2] -> f64[3], and f32 -> i32 at one width.
      ValueId x = b.param(DType::F64, {3});
      ValueId halves = b.op(kind, {x}, DType::U32, {3, 2});
      b.g.outputs.push_back(b.op(kind, {halves}, DType::F64, {3}));
      ValueId y = b.param(f, {2});
      b.g.outputs.push_back(b.op(kind, {y}, DType::I32, {2}));
      return halves;
    }
    case OpKind::PopulationCount:
    case OpKind::Clz: {
      ValueId x = b.param(DType::I32, {2, 3});
      return b.op(kind, {x}, DType::I32, {2, 3});
    }
    case OpKind::IsFinite: {
      ValueId x = b.param(f, {2, 3});
      return b.op(kind, {x}, DType::Bool, {2, 3});
    }
    case OpKind::NextAfter: {
      ValueId x = b.param(f, {4});
      ValueId y = b.param(f, {4});
      return b.op(kind, {x, y}, f, {4});
    }
    case OpKind::Clamp: {
      // A scalar lower bound and a full-shape upper one.
      ValueId lo = b.constant(f, -1.0);
      ValueId x = b.param(f, {4});
      ValueId hi = b.param(f, {4});
      return b.op(kind, {lo, x, hi}, f, {4});
    }
    case OpKind::IntegerPow: {
      ValueId x = b.param(f, {3});
      return b.op(kind, {x}, f, {3}, {{"y", std::int64_t{-3}}});
    }
    case OpKind::SelectN: {
      ValueId which = b.param(DType::I32, {4});
      ValueId x = b.param(f, {4});
      ValueId y = b.param(f, {4});
      ValueId z = b.param(f, {4});
      return b.op(kind, {which, x, y, z}, f, {4});
    }
    case OpKind::ErfInv: {
      ValueId x = b.param(f, {2, 3});
      return b.op(kind, {x}, f, {2, 3});
    }
    default:
      return std::nullopt;
  }
}

// A small valid graph that uses `kind`, with sensible attributes.
inline Graph graph_using(OpKind kind) {
  Builder b;
  b.g.name = "uses_" + std::string(op_name(kind));
  if (const std::optional<ValueId> out = elementwise_bits_graph(b, kind)) {
    b.g.outputs.insert(b.g.outputs.begin(), *out);
    return b.g;
  }
  const OpInfo& info = op_info(kind);
  const DType f = DType::F32;
  ValueId out = -1;
  switch (info.op_class) {
    case OpClass::Leaf:
      if (kind == OpKind::Parameter) {
        out = b.param(f, {2, 3});
      } else if (kind == OpKind::Constant) {
        out = b.constant(f, 1.5);
        b.g.outputs.push_back(b.constant(DType::I32, std::int64_t{-7}));
        b.g.outputs.push_back(b.constant(DType::Bool, std::int64_t{1}));
      } else {
        out = b.op(kind, {}, DType::I32, {2, 3}, {{"dimension", std::int64_t{1}}});
      }
      break;
    case OpClass::Unary: {
      const DType t = kind == OpKind::Not ? DType::Bool : needs_float(kind) ? f : DType::I32;
      ValueId x = b.param(t, {2, 3});
      out = b.op(kind, {x}, t, {2, 3});
      break;
    }
    case OpClass::Binary: {
      const bool logical = kind == OpKind::And || kind == OpKind::Or || kind == OpKind::Xor;
      const DType t = logical ? DType::I32 : f;
      ValueId x = b.param(t, {4});
      ValueId y = b.param(t, {4});
      out = b.op(kind, {x, y}, t, {4});
      break;
    }
    case OpClass::Compare: {
      ValueId x = b.param(f, {4});
      ValueId y = b.param(f, {4});
      out = b.op(kind, {x, y}, DType::Bool, {4});
      break;
    }
    case OpClass::Select: {
      ValueId p = b.param(DType::Bool, {2, 2});
      ValueId x = b.param(f, {2, 2});
      ValueId y = b.param(f, {2, 2});
      out = b.op(kind, {p, x, y}, f, {2, 2});
      break;
    }
    case OpClass::Convert: {
      ValueId x = b.param(f, {3});
      out = b.op(kind, {x}, DType::I64, {3});
      break;
    }
    case OpClass::Reduce: {
      ValueId x = b.param(f, {2, 3, 4});
      const bool arg = kind == OpKind::ArgMax || kind == OpKind::ArgMin;
      out = b.op(kind, {x}, arg ? DType::I32 : f, {2}, {{"axes", Ints{1, 2}}});
      break;
    }
    case OpClass::Dot: {
      ValueId x = b.param(f, {5, 2, 3});
      ValueId y = b.param(f, {5, 3, 4});
      out = b.op(kind, {x, y}, f, {5, 2, 4},
                 {{"lhs_contracting", Ints{2}},
                  {"rhs_contracting", Ints{1}},
                  {"lhs_batch", Ints{0}},
                  {"rhs_batch", Ints{0}}});
      break;
    }
    case OpClass::Result:
    case OpClass::Control:
      out = control_graph(b, kind);
      break;
    case OpClass::Host:
    case OpClass::Token:
      out = host_graph(b, kind);
      break;
    // Cumulative ops, rev and sorting.
    case OpClass::Cumulative: {
      ValueId x = b.param(f, {2, 5});
      out = b.op(kind, {x}, f, {2, 5}, {{"axis", std::int64_t{1}}, {"reverse", std::int64_t{1}}});
      break;
    }
    case OpClass::Sort: {
      ValueId x = b.param(f, {3, 5});
      if (kind == OpKind::Sort) {
        out = b.op(kind, {x}, f, {3, 5},
                   {{"dimension", std::int64_t{0}}, {"is_stable", std::int64_t{1}}});
      } else if (kind == OpKind::Argsort) {
        ValueId y = b.param(DType::I32, {3, 5});
        out = b.op(kind, {y, x}, DType::I32, {3, 5},
                   {{"dimension", std::int64_t{1}}, {"is_stable", std::int64_t{1}}});
      } else {
        out = b.op(kind, {x}, kind == OpKind::TopK ? f : DType::I32, {3, 2},
                   {{"k", std::int64_t{2}}});
      }
      break;
    }
    case OpClass::Convolution: {
      // A 2-D NHWC convolution with every attribute away from its default: strides, padding
      // (one side negative), both dilations and two feature groups.
      ValueId x = b.param(f, {2, 5, 6, 4});
      ValueId w = b.param(f, {2, 2, 2, 6});
      out = b.op(kind, {x, w}, f, {2, 3, 3, 6},
                 {{"window_strides", Ints{2, 1}},
                  {"padding_low", Ints{1, 0}},
                  {"padding_high", Ints{0, -1}},
                  {"lhs_dilation", Ints{1, 1}},
                  {"rhs_dilation", Ints{1, 2}},
                  {"lhs_spec", Ints{0, 3, 1, 2}},
                  {"rhs_spec", Ints{3, 2, 0, 1}},
                  {"out_spec", Ints{0, 3, 1, 2}},
                  {"feature_group_count", std::int64_t{2}},
                  {"batch_group_count", std::int64_t{1}}});
      break;
    }
    case OpClass::Window: {
      // Windows of 2 x 2 over a [5, 6] operand, strided and padded; reduce_window also dilates.
      ValueId x = b.param(f, {5, 6});
      Attrs window{{"window_dimensions", Ints{2, 2}},
                   {"window_strides", Ints{2, 1}},
                   {"padding_low", Ints{1, 0}},
                   {"padding_high", Ints{0, 1}}};
      if (kind == OpKind::SelectAndScatterAdd) {
        window.set("select_prim", std::string("ge"));
        ValueId source = b.param(f, {3, 6});
        out = b.op(kind, {source, x}, f, {5, 6}, window);
      } else if (kind == OpKind::SelectAndGatherAdd) {
        window.set("base_dilation", Ints{1, 1});
        window.set("window_dilation", Ints{1, 1});
        window.set("select_prim", std::string("le"));
        ValueId tangents = b.param(f, {5, 6});
        out = b.op(kind, {tangents, x}, f, {3, 6}, window);
      } else {
        window.set("base_dilation", Ints{1, 1});
        window.set("window_dilation", Ints{1, 2});
        out = b.op(kind, {x}, f, {3, 5}, window);
      }
      break;
    }
    // Linear algebra: a batch of two 3x3 matrices; the solve's diagonal is taken as ones, so
    // random inputs stay well conditioned.
    case OpClass::Linalg: {
      ValueId a = b.param(f, {2, 3, 3});
      if (kind == OpKind::Cholesky || kind == OpKind::Lu) {
        out = b.op(kind, {a}, f, {2, 3, 3});
      } else if (kind == OpKind::EighVectors || kind == OpKind::EighValues) {
        const Attrs eigh = {{"lower", std::int64_t{1}}, {"sort_eigenvalues", std::int64_t{1}}};
        out = kind == OpKind::EighVectors ? b.op(kind, {a}, f, {2, 3, 3}, eigh)
                                          : b.op(kind, {a}, f, {2, 3}, eigh);
      } else if (kind == OpKind::LuPivots || kind == OpKind::LuPermutation) {
        out = b.op(kind, {a}, DType::I32, {2, 3});
      } else {
        ValueId rhs = b.param(f, {2, 3, 4});
        out = b.op(kind, {a, rhs}, f, {2, 3, 4},
                   {{"left_side", std::int64_t{1}},
                    {"lower", std::int64_t{1}},
                    {"transpose_a", std::int64_t{0}},
                    {"conjugate_a", std::int64_t{0}},
                    {"unit_diagonal", std::int64_t{1}}});
      }
      break;
    }
    case OpClass::Layout:
      switch (kind) {
        case OpKind::BroadcastInDim: {
          ValueId x = b.param(f, {3});
          out = b.op(kind, {x}, f, {2, 3}, {{"dims", Ints{1}}});
          break;
        }
        case OpKind::Reshape: {
          ValueId x = b.param(f, {2, 3});
          out = b.op(kind, {x}, f, {3, 2});
          break;
        }
        case OpKind::Transpose: {
          ValueId x = b.param(f, {2, 3, 4});
          out = b.op(kind, {x}, f, {4, 2, 3}, {{"permutation", Ints{2, 0, 1}}});
          break;
        }
        case OpKind::Slice: {
          ValueId x = b.param(f, {4, 6});
          out = b.op(kind, {x}, f, {2, 3},
                     {{"start", Ints{1, 0}}, {"limit", Ints{3, 6}}, {"stride", Ints{1, 2}}});
          break;
        }
        case OpKind::DynamicSlice: {
          ValueId x = b.param(f, {4, 6});
          ValueId i = b.param(DType::I32, {});
          ValueId j = b.param(DType::I32, {});
          out = b.op(kind, {x, i, j}, f, {2, 3}, {{"sizes", Ints{2, 3}}});
          break;
        }
        case OpKind::DynamicUpdateSlice: {
          ValueId x = b.param(f, {4, 6});
          ValueId u = b.param(f, {2, 3});
          ValueId i = b.param(DType::I32, {});
          ValueId j = b.constant(DType::I32, std::int64_t{1});
          out = b.op(kind, {x, u, i, j}, f, {4, 6});
          break;
        }
        case OpKind::Concatenate: {
          ValueId x = b.param(f, {2, 3});
          ValueId y = b.param(f, {4, 3});
          out = b.op(kind, {x, y, x}, f, {8, 3}, {{"dimension", std::int64_t{0}}});
          break;
        }
        case OpKind::Pad: {
          ValueId x = b.param(f, {2, 3});
          ValueId v = b.constant(f, -1.0);
          // Axis 0: 1 + 2 + 1 interior = 4; axis 1: 0 + 3 + 2 - 1 (negative low) = 4.
          out = b.op(kind, {x, v}, f, {4, 4},
                     {{"low", Ints{1, -1}}, {"high", Ints{0, 2}}, {"interior", Ints{1, 0}}});
          break;
        }
        // Cumulative ops, rev and sorting.
        case OpKind::Rev: {
          ValueId x = b.param(f, {2, 3, 4});
          out = b.op(kind, {x}, f, {2, 3, 4}, {{"dimensions", Ints{2, 0}}});
          break;
        }
        // Gather and scatter: rows of a table by index, and updates added back into them.
        case OpKind::Gather: {
          ValueId x = b.param(f, {5, 3});
          ValueId i = b.param(DType::I32, {4, 1});
          out = b.op(kind, {x, i}, f, {4, 3},
                     {{"offset_dims", Ints{1}},
                      {"collapsed_slice_dims", Ints{0}},
                      {"start_index_map", Ints{0}},
                      {"operand_batching_dims", Ints{}},
                      {"start_indices_batching_dims", Ints{}},
                      {"slice_sizes", Ints{1, 3}},
                      {"mode", std::string("fill")}});
          break;
        }
        case OpKind::Scatter:
        case OpKind::ScatterAdd:
        case OpKind::ScatterMul:
        case OpKind::ScatterMin:
        case OpKind::ScatterMax: {
          ValueId x = b.param(f, {5, 3});
          ValueId i = b.param(DType::I32, {4, 1});
          ValueId u = b.param(f, {4, 3});
          out = b.op(kind, {x, i, u}, f, {5, 3},
                     {{"update_window_dims", Ints{1}},
                      {"inserted_window_dims", Ints{0}},
                      {"scatter_dims_to_operand_dims", Ints{0}},
                      {"operand_batching_dims", Ints{}},
                      {"scatter_indices_batching_dims", Ints{}},
                      {"mode", std::string("fill")},
                      {"indices_are_sorted", std::int64_t{0}},
                      {"unique_indices", std::int64_t{0}}});
          break;
        }
        default:
          ADD_FAILURE() << "no test graph for layout op " << op_name(kind);
      }
      break;
  }
  b.g.outputs.insert(b.g.outputs.begin(), out);
  return b.g;
}

}  // namespace weft::samples
