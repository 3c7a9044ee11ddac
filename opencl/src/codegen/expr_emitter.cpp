#include "codegen/expr_emitter.h"

#include <algorithm>
#include <optional>
#include <set>

#include "codegen/cl_types.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += e + ",";
  return s;
}

std::string index_key(const Index& idx) {
  const std::string lanes = idx.lanes ? "~" : "";
  if (!idx.linear.empty()) return lanes + "L" + idx.linear + shape_to_string(idx.shape);
  return lanes + "D" + join(idx.dims);
}

}  // namespace

ExprEmitter::ExprEmitter(const Graph& graph, std::function<std::string(ValueId)> buffer_arg,
                         std::string index_type)
    : graph_(graph), buffer_arg_(std::move(buffer_arg)), index_type_(std::move(index_type)) {
  memo_.emplace_back();
}

std::string ExprEmitter::fresh(const char* prefix) {
  // Vector-mode names differ from scalar ones: a kernel may hold code of both emitters.
  return name_prefix_ + prefix + std::string(vector_width_ > 1 ? "w" : "") +
         std::to_string(counter_++);
}

std::string ExprEmitter::take_code() {
  std::string s = code_.str();
  code_.str("");
  return s;
}

void ExprEmitter::push_scope() {
  memo_.emplace_back();
}
void ExprEmitter::pop_scope() {
  memo_.pop_back();
}

std::string ExprEmitter::lookup(const std::string& key) const {
  for (auto it = memo_.rbegin(); it != memo_.rend(); ++it)
    if (auto f = it->find(key); f != it->end()) return f->second;
  return {};
}

void ExprEmitter::remember(const std::string& key, const std::string& value) {
  memo_.back()[key] = value;
}

std::string ExprEmitter::linear_of(Index& idx) {
  if (!idx.linear.empty()) return idx.linear;
  if (idx.shape.empty()) return idx.linear = "0";
  std::string expr;
  std::int64_t stride = 1;
  for (std::size_t k = idx.shape.size(); k-- > 0;) {
    if (idx.shape[k] != 1) {
      std::string term =
          stride == 1 ? idx.dims[k] : "(" + idx.dims[k] + ")*" + std::to_string(stride);
      expr = expr.empty() ? term : term + " + " + expr;
    }
    stride *= idx.shape[k];
  }
  if (expr.empty()) return idx.linear = "0";
  std::string key = "lin:" + join(idx.dims) + shape_to_string(idx.shape);
  if (auto hit = lookup(key); !hit.empty()) return idx.linear = hit;
  std::string var = fresh("l");
  line("const " + index_type_ + " " + var + " = " + expr + ";");
  remember(key, var);
  return idx.linear = var;
}

const std::vector<std::string>& ExprEmitter::dims_of(Index& idx) {
  const std::size_t rank = idx.shape.size();
  if (idx.dims.size() == rank) return idx.dims;
  idx.dims.assign(rank, "0");
  std::int64_t stride = 1;
  std::vector<std::int64_t> strides(rank);
  for (std::size_t k = rank; k-- > 0;) {
    strides[k] = stride;
    stride *= idx.shape[k];
  }
  for (std::size_t k = 0; k < rank; ++k) {
    if (idx.shape[k] == 1) continue;
    std::string key = "dim:" + idx.linear + shape_to_string(idx.shape) + "#" + std::to_string(k);
    if (auto hit = lookup(key); !hit.empty()) {
      idx.dims[k] = hit;
      continue;
    }
    std::string e =
        strides[k] == 1 ? idx.linear : "(" + idx.linear + ")/" + std::to_string(strides[k]);
    if (k > 0) e = "(" + e + ")%" + std::to_string(idx.shape[k]);
    std::string var = fresh("i");
    line("const " + index_type_ + " " + var + " = " + e + ";");
    remember(key, var);
    idx.dims[k] = var;
  }
  return idx.dims;
}

std::string memo_key(ValueId v, const Index& idx) {
  return std::to_string(v) + "@" + index_key(idx);
}

// Resolves v at idx into delivered_ when no computation is needed; otherwise leaves a request
// for value() to run compute(v, idx) before the caller resumes.
ExprEmitter::Operand ExprEmitter::operand(ValueId v, const Index& idx) {
  Index at = idx;
  std::string key = memo_key(v, at);
  if (resolve_without_compute(v, at, key, delivered_)) return Operand(*this, true);
  request_ = OperandRequest{v, std::move(at), std::move(key)};
  return Operand(*this, false);
}

bool ExprEmitter::resolve_without_compute(ValueId v, Index& idx, const std::string& key,
                                          std::string& out) {
  if (auto found = bound_.find(v); found != bound_.end()) {
    out = found->second;
    return true;
  }
  if (auto hit = lookup(key); !hit.empty()) {
    out = std::move(hit);
    return true;
  }
  std::string arg = buffer_arg_(v);
  if (arg.empty()) return false;
  out = load(v, arg, idx);
  remember(key, out);
  return true;
}

// Depth-first like the recursive formulation it replaces (so the code is the same, line for
// line), with the pending computations on `stack` instead of the call stack.
std::string ExprEmitter::value(ValueId v, const Index& idx_in) {
  Index idx = idx_in;
  std::string key = memo_key(v, idx);
  std::string result;
  if (resolve_without_compute(v, idx, key, result)) return result;
  struct Pending {
    EmitTask task;
    std::string key;
    ValueId v;
    Index idx;
  };
  std::vector<Pending> stack;
  stack.push_back({compute(v, idx), std::move(key), v, idx});
  while (true) {
    stack.back().task.resume();
    if (!stack.back().task.done()) {  // paused on an operand that must be computed first
      OperandRequest request = std::move(*request_);
      request_.reset();
      stack.push_back({compute(request.v, request.idx), std::move(request.key), request.v,
                       std::move(request.idx)});
      continue;
    }
    std::string expr = stack.back().task.take_value();
    if (side_outputs_.count(stack.back().v)) store_side(stack.back().v, stack.back().idx, expr);
    remember(stack.back().key, expr);
    stack.pop_back();
    if (stack.empty()) return expr;
    delivered_ = std::move(expr);  // what the paused task below awaits
  }
}

void ExprEmitter::store_side(ValueId v, Index& idx, const std::string& value) {
  const std::string& arg = side_outputs_.at(v);
  const std::string lin = linear_of(idx);
  if (vector_at(idx)) {
    const std::string w = std::to_string(vector_width_);
    line("vstore" + w + "(" + value + ", " +
         (lane_mode_ ? "0, " + arg + " + " + lin : lin + ", " + arg) + ");");
  } else {
    line(cl_store(graph_.node(v).dtype, arg, lin, value));
  }
}

std::string ExprEmitter::load(ValueId v, const std::string& arg, Index& idx) {
  const Node& n = graph_.node(v);
  std::string lin = linear_of(idx);
  std::string var = fresh("v");
  if (vector_at(idx)) {
    const std::string w = std::to_string(vector_width_);
    const std::string at = lane_mode_ ? "0, " + arg + " + " + lin : lin + ", " + arg;
    line("const " + cl_type(n.dtype) + w + " " + var + " = vload" + w + "(" + at + ");");
    return var;
  }
  line("const " + cl_type(n.dtype) + " " + var + " = " + cl_load(n.dtype, arg, lin) + ";");
  return var;
}

std::string ExprEmitter::clamp(const std::string& v, std::int64_t lo, std::int64_t hi) {
  return "min(max((" + index_type_ + ")(" + v + "), (" + index_type_ + ")" + std::to_string(lo) +
         "), (" + index_type_ + ")" + std::to_string(hi) + ")";
}

std::string ExprEmitter::clamp_start(const std::string& start, std::int64_t lo, std::int64_t hi) {
  // Clamped as a long, then narrowed: the bounds fit the index type, the start may not (a u32
  // start of 3e9 or an i64 one must not wrap into the window before it is clamped).
  return "((" + index_type_ + ")min(max((long)(" + start + "), (long)" + std::to_string(lo) +
         "), (long)" + std::to_string(hi) + "))";
}

std::string ExprEmitter::bind_value(const Node& n, const Index& idx, const std::string& expr) {
  const std::string T = cl_type(n.dtype);
  std::string var = fresh("v");
  if (vector_at(idx)) {
    // The cast widens an expression made only of scalars; on a vector it changes nothing.
    const std::string VT = T + std::to_string(vector_width_);
    line("const " + VT + " " + var + " = (" + VT + ")(" + expr + ");");
  } else {
    // Narrow integers wrap on the assignment; f16 and bf16 round here, after every op.
    line("const " + T + " " + var + " = " + cl_round_to_dtype(n.dtype, expr) + ";");
  }
  return var;
}

ElementOp ExprEmitter::element_op(const Node& n, const Index& idx) const {
  const DType t = graph_.node(n.inputs[0]).dtype;
  return ElementOp{graph_, n, t, cl_type(t), vector_at(idx), vector_width_};
}

EmitTask ExprEmitter::compute_unary(const Node& n, Index idx, const Lowering& lowering) {
  std::string a = co_await operand(n.inputs[0], idx);
  if (math_ && lowering.math && n.dtype == DType::F32)
    co_return bind_value(n, idx,
                         math_->call(*lowering.math, vector_at(idx) ? vector_width_ : 1, a));
  co_return bind_value(n, idx, lowering.unary(element_op(n, idx), a));
}

EmitTask ExprEmitter::compute_binary(const Node& n, Index idx, const Lowering& lowering) {
  std::string a = co_await operand(n.inputs[0], idx);
  std::string b = co_await operand(n.inputs[1], idx);
  co_return bind_value(n, idx, lowering.binary(element_op(n, idx), a, b));
}

// One node's element at idx: a task that pauses (co_await) for each operand it needs, one
// statement at a time, in the order the code must use them.
EmitTask ExprEmitter::compute(ValueId v, Index idx) {
  const Node& n = graph_.node(v);
  if (n.dtype == DType::F64) uses_fp64_ = true;
  if (lane_mode_ && idx.lanes && op_info(n.op).op_class != OpClass::Unary &&
      op_info(n.op).op_class != OpClass::Binary && n.op != OpKind::BroadcastInDim &&
      n.op != OpKind::Reshape && n.op != OpKind::Constant)
    throw Error("codegen: " + std::string(op_name(n.op)) +
                " cannot vary across lanes (lane_vectorizable should have refused the group)");
  const Lowering& lowering = weft::opencl::lowering(n.op);
  if (lowering.unary) return compute_unary(n, std::move(idx), lowering);
  if (lowering.binary) return compute_binary(n, std::move(idx), lowering);
  if (lowering.element) return lowering.element(*this, n, std::move(idx));
  throw Error("codegen: op " + std::string(op_name(n.op)) +
              " cannot be computed inside a fused kernel (it needs its own buffer); this is a "
              "weft fusion bug, please report it with the IR text");
}

}  // namespace weft::opencl

namespace weft::opencl {

bool lane_vectorizable(const Graph& graph, ValueId start, const std::vector<ValueId>& inputs) {
  std::vector<std::pair<ValueId, bool>> work{{start, true}};
  std::set<std::pair<ValueId, bool>> seen;
  while (!work.empty()) {
    const auto [v, lanes] = work.back();
    work.pop_back();
    // Values the same for every lane are computed as scalars, whatever they are.
    if (!lanes || !seen.insert({v, lanes}).second) continue;
    const Node& n = graph.node(v);
    if (n.dtype != DType::F32) return false;
    if (std::find(inputs.begin(), inputs.end(), v) != inputs.end()) continue;  // a vector load
    const OpClass c = op_info(n.op).op_class;
    if (c == OpClass::Unary || c == OpClass::Binary) {
      for (ValueId in : n.inputs) work.push_back({in, true});
      continue;
    }
    const Shape& in = graph.node(n.inputs[0]).shape;
    if (n.op == OpKind::Reshape && !in.empty() && !n.shape.empty() && in.back() == n.shape.back()) {
      work.push_back({n.inputs[0], true});  // a row of lanes is a row of the input too
      continue;
    }
    if (n.op != OpKind::BroadcastInDim) return false;
    const auto map = BroadcastAttrs::read(n.attrs).dims;
    const auto last = static_cast<std::int64_t>(n.shape.size()) - 1;
    // Only the input's last axis may feed the lanes' axis: then the lanes are contiguous.
    for (std::size_t i = 0; i + 1 < in.size(); ++i)
      if (map[i] == last && in[i] > 1) return false;
    work.push_back({n.inputs[0], !in.empty() && in.back() > 1 && map.back() == last});
  }
  return true;
}

}  // namespace weft::opencl
