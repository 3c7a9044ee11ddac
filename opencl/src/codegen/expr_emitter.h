// Emits OpenCL C statements that compute one element of a fused node. Operands are pulled
// through index arithmetic (broadcast, reshape, transpose, slice, pad, concatenate, dynamic
// slices), so every fusible op costs index math rather than a buffer. What each op emits is
// its lowering (lowering.h); this class drives them and owns the indices and variables.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/emit_task.h"
#include "codegen/lowering.h"
#include "codegen/math_library.h"
#include "weft/ir/graph.h"

namespace weft::opencl {

// Where in a node's result an element lives: a row-major linear index, per-axis indices, or
// both. Whichever is missing is derived on demand.
struct Index {
  std::string linear;             // empty when unknown
  std::vector<std::string> dims;  // empty when unknown (or rank 0)
  Shape shape;
  // Lane mode (set_vector_mode with lanes_along_last_axis): the index is that of the first of
  // `width` neighbouring elements along the last axis, and the value differs between lanes.
  // Without it the value is the same for every lane (a per-row value, a scalar).
  bool lanes = false;
};

class ExprEmitter {
 public:
  // `buffer_arg(v)` names the kernel argument holding node v, or "" when v is computed here.
  ExprEmitter(const Graph& graph, std::function<std::string(ValueId)> buffer_arg,
              std::string index_type);

  // Emits what is needed and returns an expression (a variable or literal) for node v at idx.
  // Iterative however deep the fused producers of v are (see emit_task.h).
  std::string value(ValueId v, const Index& idx);
  // Index helpers, exposed for kernel templates.
  std::string linear_of(Index& idx);
  const std::vector<std::string>& dims_of(Index& idx);

  // Vector mode: values of `full_shape` are `width`-wide vectors (the kernel handles `width`
  // consecutive elements per work-item and its linear index counts vectors); other values
  // (scalars) stay scalar and widen where they meet vectors.
  void set_vector_mode(int width, Shape full_shape) {
    vector_width_ = width;
    vector_shape_ = std::move(full_shape);
  }
  // Lane mode: which values are vectors is said by Index::lanes instead of by shape, and
  // indices count elements (the first lane's), so vectors need not be aligned and per-axis
  // indices stay valid: a broadcast is a vector load when it maps the input's last axis to the
  // lanes' axis, else one value for all lanes. Kernels that fold or write chunks of rows use
  // it; lane_vectorizable() says which groups it can compute.
  void set_lane_mode(int width) {
    vector_width_ = width;
    lane_mode_ = true;
  }

  // Node v is the variable `name` at every index: a loop carry held in a register, or the
  // iteration number (only for kernels whose values all share one index).
  void bind(ValueId v, std::string name) { bound_[v] = std::move(name); }

  // Whenever node v is computed, its element is also stored into the kernel argument `arg`
  // (a multi-output kernel's side output, FusionGroup::side_outputs).
  void store_side_output(ValueId v, std::string arg) { side_outputs_[v] = std::move(arg); }

  // f32 transcendentals call weft's own functions (recorded in `math`) instead of the driver's.
  void use_math(MathFunctions* math) { math_ = math; }

  void push_scope();  // values emitted inside a loop body must not leak out of it
  void pop_scope();
  void set_indent(std::string indent) { indent_ = std::move(indent); }
  std::string take_code();  // emitted statements so far (clears them)
  void line(const std::string& s) { code_ << indent_ << s << "\n"; }
  std::string fresh(const char* prefix);
  // Prepended to every variable this emitter names, so that several emitters' code can share
  // one kernel body (the blocks of a multi-block vector kernel).
  void set_name_prefix(std::string prefix) { name_prefix_ = std::move(prefix); }
  const std::string& index_type() const { return index_type_; }
  bool uses_fp64() const { return uses_fp64_; }

  // For the lowerings' element tasks (codegen/lowering.h):
  // `co_await operand(v, idx)` inside an element task: v's expression at idx, at once when it is
  // memoised or read from a buffer, else after a pause in which value() computes it.
  // Trivially destructible on purpose: GCC 12 mishandles awaiters and temporaries with
  // destructors that live across a suspension, so the request itself waits in the emitter.
  class Operand {
   public:
    explicit Operand(ExprEmitter& emitter, bool ready) : emitter_(&emitter), ready_(ready) {}
    bool await_ready() const noexcept { return ready_; }
    void await_suspend(std::coroutine_handle<>) const noexcept {}
    std::string await_resume() const { return std::move(emitter_->delivered_); }

   private:
    ExprEmitter* emitter_;
    bool ready_;
  };
  Operand operand(ValueId v, const Index& idx);
  // A fresh variable holding `expr`, node n's element at idx (widened when that is a vector).
  std::string bind_value(const Node& n, const Index& idx, const std::string& expr);
  // v clamped to [lo, hi] in the index type.
  std::string clamp(const std::string& v, std::int64_t lo, std::int64_t hi);
  // A dynamic slice's start (u32, i32 or i64) clamped to [lo, hi] in the index type.
  std::string clamp_start(const std::string& start, std::int64_t lo, std::int64_t hi);
  const Graph& graph() const { return graph_; }

 private:
  // What a paused compute() waits for: node v at idx, memoised under key.
  struct OperandRequest {
    ValueId v;
    Index idx;
    std::string key;
  };
  // The memoised or loaded expression of v at idx into `out`; false when it must be computed.
  bool resolve_without_compute(ValueId v, Index& idx, const std::string& key, std::string& out);
  // The task computing node v at idx, from its lowering.
  EmitTask compute(ValueId v, Index idx);
  EmitTask compute_unary(const Node& n, Index idx, const Lowering& lowering);
  EmitTask compute_binary(const Node& n, Index idx, const Lowering& lowering);
  ElementOp element_op(const Node& n, const Index& idx) const;
  std::string load(ValueId v, const std::string& arg, Index& idx);
  std::string lookup(const std::string& key) const;
  void remember(const std::string& key, const std::string& value);

  const Graph& graph_;
  std::function<std::string(ValueId)> buffer_arg_;
  std::string index_type_;
  std::ostringstream code_;
  std::string indent_ = "  ";
  std::vector<std::map<std::string, std::string>> memo_;
  std::map<ValueId, std::string> bound_;
  std::map<ValueId, std::string> side_outputs_;
  void store_side(ValueId v, Index& idx, const std::string& value);
  std::optional<OperandRequest> request_;  // set by a compute() that has just paused
  std::string delivered_;                  // the operand a compute() resumes with
  int counter_ = 0;
  std::string name_prefix_;
  bool uses_fp64_ = false;
  MathFunctions* math_ = nullptr;
  int vector_width_ = 1;
  bool lane_mode_ = false;
  Shape vector_shape_;
  bool is_vector(const Shape& shape) const { return vector_width_ > 1 && shape == vector_shape_; }
  // Whether the value at idx is a vector.
  bool vector_at(const Index& idx) const {
    return lane_mode_ ? vector_width_ > 1 && idx.lanes : is_vector(idx.shape);
  }
};

// Whether `start` (computed at lane indices) and the members of `group` it reaches can be
// computed in lane mode: f32 arithmetic, loads of the group's inputs, reshapes that keep the
// last axis and broadcasts whose lanes stay contiguous, while lanes vary; anything once the
// value is the same for all lanes.
// `inputs` are the group's buffers.
bool lane_vectorizable(const Graph& graph, ValueId start, const std::vector<ValueId>& inputs);

}  // namespace weft::opencl
