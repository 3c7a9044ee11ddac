#include "codegen/expr_emitter.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "codegen/cl_types.h"
#include "weft/error.h"

namespace weft::opencl {
namespace {

std::string unsigned_of(DType t) {
  return t == DType::I64 ? "ulong" : "uint";
}

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

const char* builtin_unary(OpKind op) {
  switch (op) {
    case OpKind::Floor:
      return "floor";
    case OpKind::Ceil:
      return "ceil";
    case OpKind::Round:
      return "round";
    case OpKind::Exp:
      return "exp";
    case OpKind::Exp2:
      return "exp2";
    case OpKind::Log:
      return "log";
    case OpKind::Log1p:
      return "log1p";
    case OpKind::Expm1:
      return "expm1";
    case OpKind::Sqrt:
      return "sqrt";
    case OpKind::Rsqrt:
      return "rsqrt";
    case OpKind::Sin:
      return "sin";
    case OpKind::Cos:
      return "cos";
    case OpKind::Tan:
      return "tan";
    case OpKind::Tanh:
      return "tanh";
    case OpKind::Erf:
      return "erf";
    default:
      return nullptr;
  }
}

const char* compare_op(OpKind op) {
  switch (op) {
    case OpKind::Eq:
      return "==";
    case OpKind::Ne:
      return "!=";
    case OpKind::Lt:
      return "<";
    case OpKind::Le:
      return "<=";
    case OpKind::Gt:
      return ">";
    case OpKind::Ge:
      return ">=";
    default:
      return nullptr;
  }
}

// The value of v when it is a float constant, perhaps broadcast or reshaped (the same at every
// element).
std::optional<double> float_constant(const Graph& graph, ValueId v) {
  for (;;) {
    const Node& n = graph.node(v);
    if (n.op == OpKind::Constant && is_float(n.dtype)) return n.attrs.get_float("value");
    if (n.op != OpKind::BroadcastInDim && n.op != OpKind::Reshape) return std::nullopt;
    v = n.inputs[0];
  }
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

// Trivially destructible on purpose: GCC 12 mishandles awaiters and temporaries with
// destructors that live across a suspension, so the request itself waits in the emitter.
class ExprEmitter::Operand {
 public:
  explicit Operand(ExprEmitter& emitter, bool ready) : emitter_(&emitter), ready_(ready) {}
  bool await_ready() const noexcept { return ready_; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  std::string await_resume() const { return std::move(emitter_->delivered_); }

 private:
  ExprEmitter* emitter_;
  bool ready_;
};

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
    line(arg + "[" + lin + "] = " + value + ";");
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
  std::string e = arg + "[" + lin + "]";
  if (n.dtype == DType::Bool) e = "(" + e + " != 0)";
  line("const " + cl_type(n.dtype) + " " + var + " = " + e + ";");
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

std::string ExprEmitter::convert(DType from, DType to, const std::string& a) {
  if (from == to) return a;
  if (to == DType::Bool) return "(" + a + " != 0)";
  if (from == DType::Bool) return "(" + a + " ? (" + cl_type(to) + ")1 : (" + cl_type(to) + ")0)";
  // NaN must give 0; some drivers' saturating conversions (NVIDIA's to long) give the minimum.
  if (is_float(from) && !is_float(to))
    return "(isnan(" + a + ") ? (" + cl_type(to) + ")0 : convert_" + cl_type(to) + "_sat_rtz(" + a +
           "))";
  return "((" + cl_type(to) + ")(" + a + "))";
}

std::string ExprEmitter::unary(const Node& n, const std::string& a, bool vector) {
  const DType t = n.dtype;
  const std::string T = cl_type(t);
  if (math_ && t == DType::F32 && MathFunctions::provides(n.op))
    return math_->call(n.op, vector ? vector_width_ : 1, a);
  if (const char* fn = builtin_unary(n.op)) return std::string(fn) + "(" + a + ")";
  switch (n.op) {
    case OpKind::Neg:
      if (is_float(t)) return "(-" + a + ")";
      if (t == DType::U32) return "((uint)(0u - " + a + "))";
      return "((" + T + ")(-(" + unsigned_of(t) + ")(" + a + ")))";
    case OpKind::Abs:
      if (is_float(t)) return "fabs(" + a + ")";
      if (t == DType::U32) return a;
      return "((" + T + ")abs(" + a + "))";
    case OpKind::Sign:
      if (is_float(t))
        return "(isnan(" + a + ") ? " + a + " : (" + a + " > 0 ? (" + T + ")1 : (" + a +
               " < 0 ? (" + T + ")-1 : " + a + ")))";
      if (t == DType::U32) return "((uint)(" + a + " > 0u))";
      return "((" + T + ")((" + a + " > 0) - (" + a + " < 0)))";
    case OpKind::Logistic: {
      // From e^-|x|, which cannot overflow: e / (1 + e) keeps the denormal results of x < -87.
      const std::string e = "exp(-fabs(" + a + "))";
      return "(" + a + " < (" + T + ")0 ? " + e + " / ((" + T + ")1 + " + e + ") : (" + T +
             ")1 / ((" + T + ")1 + " + e + "))";
    }
    case OpKind::Not:
      if (t == DType::Bool) return "(!" + a + ")";
      return "((" + T + ")(~" + a + "))";
    default:
      break;
  }
  throw Error("codegen: no OpenCL lowering for unary op " + std::string(op_name(n.op)));
}

// IEEE 754-2019 maximum and minimum, as the interpreter computes them: NaN if either operand
// is NaN, and +0 > -0. fmax/fmin and compare-and-select leave the zero's sign to the
// compiler (LLVM treats equal values as interchangeable), so equal operands are merged by
// their bits: AND keeps the sign only when both are -0 (max), OR when either is (min).
std::string ExprEmitter::float_max_min(const Node& n, const std::string& a, const std::string& b,
                                       bool vector) {
  const bool is_max = n.op == OpKind::Max;
  // max and min commute: put a constant operand, if any, second.
  std::optional<double> c = float_constant(graph_, n.inputs[1]);
  std::string v = a, k = b;
  if (!c && (c = float_constant(graph_, n.inputs[0]))) std::swap(v, k);
  // A constant other than NaN and zero: one compare and select (vmaxps/vminps on x86), which
  // keeps NaN in the other operand, since NaN fails the comparison.
  const std::string select = "((" + v + (is_max ? " < " : " > ") + k + ") ? " + k + " : " + v + ")";
  if (c && !std::isnan(*c) && *c != 0) return select;
  // max(v, +0) (a ReLU): adding +0 turns whichever zero the select gave into +0.
  if (c && is_max && *c == 0 && !std::signbit(*c)) return "(" + select + " + " + k + ")";
  const DType t = n.dtype;
  const std::string w = vector ? std::to_string(vector_width_) : "";
  const std::string F = cl_type(t) + w, I = std::string(t == DType::F64 ? "long" : "int") + w;
  auto bits = [&](const std::string& x) { return "as_" + I + "((" + F + ")(" + x + "))"; };
  const std::string merged = "as_" + F + "(" + bits(a) + (is_max ? " & " : " | ") + bits(b) + ")";
  return "((isnan(" + a + ") || isnan(" + b + ")) ? (" + a + " + " + b + ") : ((" + a + " == " + b +
         ") ? " + merged + " : f" + (is_max ? "max" : "min") + "(" + a + ", " + b + ")))";
}

std::string ExprEmitter::binary(const Node& n, const std::string& a, const std::string& b,
                                bool vector) {
  const DType t = graph_.node(n.inputs[0]).dtype;
  const std::string T = cl_type(t);
  if (const char* cmp = compare_op(n.op)) return "(" + a + " " + cmp + " " + b + ")";
  const bool fl = is_float(t), sgn = is_signed_integer(t);
  auto wrap = [&](const char* op) {
    if (!sgn) return "(" + a + " " + op + " " + b + ")";
    const std::string U = unsigned_of(t);
    return "((" + T + ")((" + U + ")(" + a + ") " + op + " (" + U + ")(" + b + ")))";
  };
  switch (n.op) {
    case OpKind::Add:
      return wrap("+");
    case OpKind::Sub:
      return wrap("-");
    case OpKind::Mul:
      return wrap("*");
    case OpKind::Div:
      if (fl) return "(" + a + " / " + b + ")";
      if (t == DType::U32) return "(" + b + " == 0u ? UINT_MAX : " + a + " / " + b + ")";
      return "(" + b + " == 0 ? (" + T + ")-1 : ((" + b + " == (" + T + ")-1) ? (" + T + ")(-(" +
             unsigned_of(t) + ")(" + a + ")) : " + a + " / " + b + "))";
    case OpKind::Rem:
      if (fl) return "fmod(" + a + ", " + b + ")";
      if (t == DType::U32) return "(" + b + " == 0u ? " + a + " : " + a + " % " + b + ")";
      return "(" + b + " == 0 ? " + a + " : (" + b + " == (" + T + ")-1 ? (" + T + ")0 : " + a +
             " % " + b + "))";
    case OpKind::Pow:
      if (fl) return "pow(" + a + ", " + b + ")";
      return "weft_ipow_" + T + "(" + a + ", " + b + ")";
    case OpKind::Max:
    case OpKind::Min:
      if (fl) return float_max_min(n, a, b, vector);
      return std::string(n.op == OpKind::Max ? "max" : "min") + "(" + a + ", " + b + ")";
    case OpKind::Atan2:
      return "atan2(" + a + ", " + b + ")";
    case OpKind::And:
      return t == DType::Bool ? "(" + a + " && " + b + ")" : "(" + a + " & " + b + ")";
    case OpKind::Or:
      return t == DType::Bool ? "(" + a + " || " + b + ")" : "(" + a + " | " + b + ")";
    case OpKind::Xor:
      return t == DType::Bool ? "(" + a + " != " + b + ")" : "(" + a + " ^ " + b + ")";
    default:
      break;
  }
  throw Error("codegen: no OpenCL lowering for binary op " + std::string(op_name(n.op)));
}

// One node's element at idx, pausing (co_await) for each operand it needs. Operands are
// awaited one statement at a time, in the order the code must use them.
EmitTask ExprEmitter::compute(ValueId v, Index idx) {
  const Node& n = graph_.node(v);
  const std::string T = cl_type(n.dtype);
  if (n.dtype == DType::F64) uses_fp64_ = true;
  const bool vector = vector_at(idx);
  if (lane_mode_ && idx.lanes && op_info(n.op).op_class != OpClass::Unary &&
      op_info(n.op).op_class != OpClass::Binary && n.op != OpKind::BroadcastInDim &&
      n.op != OpKind::Reshape && n.op != OpKind::Constant)
    throw Error("codegen: " + std::string(op_name(n.op)) +
                " cannot vary across lanes (lane_vectorizable should have refused the group)");
  auto bind_var = [&](const std::string& expr) {
    std::string var = fresh("v");
    if (vector) {
      // The cast widens an expression made only of scalars; on a vector it changes nothing.
      const std::string VT = T + std::to_string(vector_width_);
      line("const " + VT + " " + var + " = (" + VT + ")(" + expr + ");");
    } else {
      line("const " + T + " " + var + " = " + expr + ";");
    }
    return var;
  };
  auto input = [&](std::size_t i, const Index& at) { return operand(n.inputs[i], at); };
  const Index scalar{"0", {}, {}};

  switch (op_info(n.op).op_class) {
    case OpClass::Unary: {
      std::string a = co_await input(0, idx);
      co_return bind_var(unary(n, a, vector));
    }
    case OpClass::Binary:
    case OpClass::Compare: {
      std::string a = co_await input(0, idx);
      std::string b = co_await input(1, idx);
      co_return bind_var(binary(n, a, b, vector));
    }
    case OpClass::Select: {
      std::string p = co_await input(0, idx);
      std::string x = co_await input(1, idx);
      std::string y = co_await input(2, idx);
      co_return bind_var("(" + p + " ? " + x + " : " + y + ")");
    }
    case OpClass::Convert: {
      const DType from = graph_.node(n.inputs[0]).dtype;
      std::string a = co_await input(0, idx);
      co_return bind_var(convert(from, n.dtype, a));
    }
    default:
      break;
  }

  switch (n.op) {
    case OpKind::Constant:
      if (is_float(n.dtype)) co_return cl_float_literal(n.attrs.get_float("value"), n.dtype);
      co_return cl_int_literal(n.attrs.get_int("value"), n.dtype);
    case OpKind::Iota: {
      const auto& d = dims_of(idx);
      co_return "((" + T + ")(" + d[n.attrs.get_int("dimension")] + "))";
    }
    case OpKind::BroadcastInDim: {
      const Shape& in = graph_.node(n.inputs[0]).shape;
      if (in.empty()) {
        std::string a = co_await input(0, scalar);
        co_return a;
      }
      const auto& d = dims_of(idx);
      const auto& map = n.attrs.get_ints("dims");
      Index at{{}, {}, in};
      for (std::size_t i = 0; i < in.size(); ++i) at.dims.push_back(in[i] == 1 ? "0" : d[map[i]]);
      // Lanes run along the last axis: they reach the input only through its own last axis.
      at.lanes =
          idx.lanes && in.back() > 1 && map.back() == static_cast<std::int64_t>(n.shape.size()) - 1;
      std::string a = co_await input(0, at);
      co_return a;
    }
    case OpKind::Reshape: {
      // Lanes stay lanes: lane mode admits reshapes that keep the last axis.
      Index at{linear_of(idx), {}, graph_.node(n.inputs[0]).shape};
      at.lanes = idx.lanes;
      std::string a = co_await input(0, at);
      co_return a;
    }
    case OpKind::Transpose: {
      const auto& d = dims_of(idx);
      const auto& perm = n.attrs.get_ints("permutation");
      Index at{{}, std::vector<std::string>(d.size()), graph_.node(n.inputs[0]).shape};
      for (std::size_t k = 0; k < d.size(); ++k) at.dims[perm[k]] = d[k];
      std::string a = co_await input(0, at);
      co_return a;
    }
    case OpKind::Slice: {
      const auto& d = dims_of(idx);
      const auto& start = n.attrs.get_ints("start");
      const auto& stride = n.attrs.get_ints("stride");
      Index at{{}, {}, graph_.node(n.inputs[0]).shape};
      for (std::size_t k = 0; k < d.size(); ++k) {
        std::string e = stride[k] == 1 ? d[k] : "(" + d[k] + ")*" + std::to_string(stride[k]);
        if (start[k] != 0) e = "(" + e + " + " + std::to_string(start[k]) + ")";
        at.dims.push_back(e);
      }
      std::string a = co_await input(0, at);
      co_return a;
    }
    case OpKind::DynamicSlice: {
      const auto& d = dims_of(idx);
      const Shape& in = graph_.node(n.inputs[0]).shape;
      Index at{{}, {}, in};
      for (std::size_t k = 0; k < d.size(); ++k) {
        std::string s = fresh("s");
        std::string start = co_await input(k + 1, scalar);
        line("const " + index_type_ + " " + s + " = " + clamp_start(start, 0, in[k] - n.shape[k]) +
             ";");
        at.dims.push_back("(" + d[k] + " + " + s + ")");
      }
      std::string a = co_await input(0, at);
      co_return a;
    }
    case OpKind::DynamicUpdateSlice: {
      const Shape& upd = graph_.node(n.inputs[1]).shape;
      std::string base = co_await input(0, idx);
      if (num_elements(upd) == 0) co_return base;
      const auto& d = dims_of(idx);
      Index at{{}, {}, upd};
      std::string inside = "true";
      for (std::size_t k = 0; k < d.size(); ++k) {
        std::string rel = fresh("r");
        std::string start = co_await input(k + 2, scalar);
        line("const " + index_type_ + " " + rel + " = " + d[k] + " - " +
             clamp_start(start, 0, n.shape[k] - upd[k]) + ";");
        inside += " && " + rel + " >= 0 && " + rel + " < " + std::to_string(upd[k]);
        at.dims.push_back(clamp(rel, 0, upd[k] - 1));
      }
      std::string u = co_await input(1, at);
      co_return bind_var("((" + inside + ") ? " + u + " : " + base + ")");
    }
    case OpKind::Concatenate: {
      const auto& d = dims_of(idx);
      const auto dim = static_cast<std::size_t>(n.attrs.get_int("dimension"));
      std::int64_t offset = 0;
      std::vector<std::pair<std::int64_t, std::string>> parts;  // (end offset, value)
      for (std::size_t j = 0; j < n.inputs.size(); ++j) {
        const Shape& s = graph_.node(n.inputs[j]).shape;
        if (s[dim] == 0) continue;
        Index at{{}, d, s};
        std::string local =
            offset == 0 ? d[dim] : "(" + d[dim] + " - " + std::to_string(offset) + ")";
        at.dims[dim] = clamp(local, 0, s[dim] - 1);
        offset += s[dim];
        std::string part = co_await input(j, at);
        parts.emplace_back(offset, std::move(part));
      }
      std::string result = parts.back().second;
      for (std::size_t j = parts.size() - 1; j-- > 0;)
        result = "(" + d[dim] + " < " + std::to_string(parts[j].first) + " ? " + parts[j].second +
                 " : " + result + ")";
      co_return bind_var(result);
    }
    case OpKind::Pad: {
      const Shape& in = graph_.node(n.inputs[0]).shape;
      std::string pad_value = co_await input(1, scalar);
      if (num_elements(in) == 0) co_return pad_value;
      const auto& d = dims_of(idx);
      const auto& low = n.attrs.get_ints("low");
      const auto& interior = n.attrs.get_ints("interior");
      Index at{{}, {}, in};
      std::string valid = "true";
      for (std::size_t k = 0; k < d.size(); ++k) {
        std::string t = fresh("p");
        line("const " + index_type_ + " " + t + " = " + d[k] + " - (" + std::to_string(low[k]) +
             ");");
        const std::int64_t step = interior[k] + 1;
        std::string q = step == 1 ? t : "(" + t + ")/" + std::to_string(step);
        valid += " && " + t + " >= 0 && " + q + " < " + std::to_string(in[k]);
        if (step != 1) valid += " && (" + t + ")%" + std::to_string(step) + " == 0";
        at.dims.push_back(clamp(q, 0, in[k] - 1));
      }
      std::string x = co_await input(0, at);
      co_return bind_var("((" + valid + ") ? " + x + " : " + pad_value + ")");
    }
    default:
      break;
  }
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
    const auto& map = n.attrs.get_ints("dims");
    const auto last = static_cast<std::int64_t>(n.shape.size()) - 1;
    // Only the input's last axis may feed the lanes' axis: then the lanes are contiguous.
    for (std::size_t i = 0; i + 1 < in.size(); ++i)
      if (map[i] == last && in[i] > 1) return false;
    work.push_back({n.inputs[0], !in.empty() && in.back() > 1 && map.back() == last});
  }
  return true;
}

}  // namespace weft::opencl
