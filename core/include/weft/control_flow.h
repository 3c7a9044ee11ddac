// Structured control flow on traced values (weft::lax, after jax.lax): cond, switch_,
// while_loop, fori_loop and scan. Each traces the functions it is given once, as regions of
// one control op (see weft/ir/regions.h), whatever the values: the condition, the index and the
// trip count may depend on the data.
//
// Carries, operands and results are trees, as jit's arguments are (weft/trace/tree.h): Arrays,
// or tuples, pairs, std::arrays, vectors and string-keyed maps of them; a leaf may be a concrete
// array, a tracer or a literal (Array::scalar). A function may close over arrays and over values
// of the function it is called in: they become operands of the control op (closure conversion).
//
// Inside jit every call is staged. Outside, it runs at once as one compiled program on the
// device of its operands and returns concrete arrays.
//
// Errors name the caller's line: TreeStructureError when a body or a branch returns a tree
// shaped differently, ShapeError/DTypeError when a leaf's shape/dtype differs (naming the leaf
// and both types) or when a predicate, index or bound has the wrong type,
// InvalidArgumentError for a scan without a length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/array.h"
#include "weft/ops.h"
#include "weft/trace/tree.h"

namespace weft::lax {

// An Array argument that also records the caller's line: the conversion from Array happens at
// the call, so the default argument names it. cond and switch_ take their predicate or index
// as one, because their trailing operand pack leaves no room for a defaulted location.
struct LocatedArray {
  Array array;
  std::source_location loc;
  LocatedArray(Array a, std::source_location l = std::source_location::current())
      : array(std::move(a)), loc(l) {}
};

struct ScanOptions {
  // The number of iterations; required when xs has no leaves, else it must equal their
  // leading axis.
  std::optional<std::int64_t> length = std::nullopt;
  bool reverse = false;  // iterate from the last row to the first (ys keep their row order)
};

// The xs of a scan over nothing (give ScanOptions::length): f(carry, std::tuple<>).
inline constexpr std::tuple<> no_xs{};

}  // namespace weft::lax

namespace weft::detail {

// What a function given to a control-flow function returned, flattened.
struct FlatOut {
  std::vector<Array> leaves;
  std::string sig;               // tree signature of the carry (loops) or the output (branches)
  std::size_t carry_leaves = 0;  // scan: leaves[0, carry_leaves) are the carry, the rest y
  std::string y_sig;             // scan: tree signature of y
};
// Called with the region's parameter tracers (scan: the i32[] iteration first).
using FlatFn = std::function<FlatOut(const std::vector<Array>& params)>;
struct NamedFn {
  std::string name;  // "cond_fn", "body_fn", "true_fn", "branch 2": how messages call it
  FlatFn fn;
};

// The type-erased control-flow functions (core/src/control_flow_*.cpp). `hidden` init leaves
// come before the tree's (fori_loop's counter and bound).
std::vector<Array> while_loop_flat(const std::vector<Array>& init, const std::string& init_sig,
                                   std::size_t hidden, const NamedFn& cond, const NamedFn& body,
                                   const std::string& api, const std::source_location& loc);
// `branches` in the user's order; `boolean`: lax::cond (a predicate, branches true_fn then
// false_fn), else lax::switch_ (an integer index, clamped).
std::vector<Array> cond_flat(const Array& index, bool boolean, const std::vector<NamedFn>& branches,
                             const std::vector<Array>& operands, const std::source_location& loc);
// Returns the final carry's leaves, then the stacked ys.
std::vector<Array> scan_flat(const std::vector<Array>& init, const std::string& init_sig,
                             const std::vector<Array>& xs, const std::string& xs_sig,
                             const FlatFn& body, const lax::ScanOptions& options,
                             const std::string& api, const std::source_location& loc);
// fori_loop with C++ bounds: the trip count (InvalidArgumentError outside the i32 range).
std::int64_t fori_trip_count(std::int64_t lower, std::int64_t upper,
                             const std::source_location& loc);
// fori_loop with an Array bound: both bounds as Arrays of one integer dtype (a C++ bound,
// given as a null array, takes the other's dtype); DTypeError/ShapeError otherwise.
std::pair<Array, Array> fori_bounds(const Array* lower, std::int64_t lower_value,
                                    const Array* upper, std::int64_t upper_value,
                                    const std::source_location& loc);

inline FlatOut flat_scalar(Array value) {
  FlatOut out;
  out.leaves.push_back(std::move(value));
  out.sig = "A";
  return out;
}

template <typename T>
FlatOut flatten_out(const T& tree) {
  static_assert(!std::is_void_v<T>, "a function given to lax control flow must return a value");
  FlatOut out;
  TreeTraits<T>::flatten(tree, out.leaves, out.sig);
  return out;
}

template <typename T>
std::vector<Array> flatten_tree(const T& tree, std::string& sig) {
  std::vector<Array> leaves;
  TreeTraits<T>::flatten(tree, leaves, sig);
  return leaves;
}

template <typename T>
T rebuild_tree(const T& proto, const std::vector<Array>& leaves, std::size_t& pos) {
  return TreeTraits<T>::rebuild(proto, leaves, pos);
}

// A branch of cond/switch_: rebuilds the operand trees from the parameters and calls `f`.
// `proto`, when given, keeps the result (its container structure rebuilds the op's results).
template <typename F, typename... Ops>
FlatFn branch_fn(const F& f, const std::tuple<const Ops&...>& operands,
                 std::shared_ptr<void>* proto) {
  return [&f, &operands, proto](const std::vector<Array>& params) {
    std::size_t pos = 0;
    std::tuple<std::decay_t<Ops>...> traced = std::apply(
        [&](const auto&... o) {
          return std::tuple<std::decay_t<Ops>...>{rebuild_tree(o, params, pos)...};
        },
        operands);
    using R = std::decay_t<std::invoke_result_t<const F&, const std::decay_t<Ops>&...>>;
    if constexpr (std::is_void_v<R>) {
      // A branch run for its effects only (debug_print): no outputs, as an empty tuple.
      std::apply(f, std::as_const(traced));
      FlatOut out;
      out.sig = "t()";
      return out;
    } else {
      R result = std::apply(f, std::as_const(traced));
      FlatOut out = flatten_out(result);
      if (proto) *proto = std::make_shared<R>(std::move(result));
      return out;
    }
  };
}

template <typename T>
struct IsPair : std::false_type {};
template <typename A, typename B>
struct IsPair<std::pair<A, B>> : std::true_type {};

template <typename R, typename... Ops>
R cond_result(const Array& index, bool boolean, const std::vector<NamedFn>& branches,
              const std::shared_ptr<void>& proto, const std::tuple<const Ops&...>& operands,
              const std::source_location& loc) {
  std::vector<Array> leaves;
  std::string sig;
  std::apply(
      [&](const auto&... o) { (TreeTraits<std::decay_t<Ops>>::flatten(o, leaves, sig), ...); },
      operands);
  const std::vector<Array> out = cond_flat(index, boolean, branches, leaves, loc);
  if constexpr (!std::is_void_v<R>) {
    std::size_t pos = 0;
    return rebuild_tree(*static_cast<const R*>(proto.get()), out, pos);
  }
}

}  // namespace weft::detail

namespace weft::lax {

// true_fn(operands...) if pred else false_fn(operands...), both traced. pred: a bool scalar
// (an integer scalar means pred != 0). Both must return the same tree of the same types, or
// both nothing (branches run for their effects: then cond returns void).
template <typename TrueFn, typename FalseFn, typename... Ops>
auto cond(LocatedArray pred, const TrueFn& true_fn, const FalseFn& false_fn,
          const Ops&... operands) {
  using R = std::decay_t<std::invoke_result_t<const TrueFn&, const Ops&...>>;
  const std::tuple<const Ops&...> ops(operands...);
  std::shared_ptr<void> proto;
  std::vector<detail::NamedFn> branches{{"true_fn", detail::branch_fn(true_fn, ops, &proto)},
                                        {"false_fn", detail::branch_fn(false_fn, ops, nullptr)}};
  return detail::cond_result<R>(pred.array, true, branches, proto, ops, pred.loc);
}

// branches[index](operands...), every branch traced; an index below 0 picks the first branch
// and one past the end the last (as jax.lax.switch). index: an integer scalar. branches: a
// std::tuple of callables or a std::vector of std::functions.
template <typename... Fs, typename... Ops>
auto switch_(LocatedArray index, const std::tuple<Fs...>& branches, const Ops&... operands) {
  static_assert(sizeof...(Fs) > 0, "lax::switch_ needs at least one branch");
  using F0 = std::tuple_element_t<0, std::tuple<Fs...>>;
  using R = std::decay_t<std::invoke_result_t<const F0&, const Ops&...>>;
  const std::tuple<const Ops&...> ops(operands...);
  std::shared_ptr<void> proto;
  std::vector<detail::NamedFn> named;
  std::size_t k = 0;
  std::apply(
      [&](const auto&... f) {
        ((named.push_back({"branch " + std::to_string(k),
                           detail::branch_fn(f, ops, k == 0 ? &proto : nullptr)}),
          ++k),
         ...);
      },
      branches);
  return detail::cond_result<R>(index.array, false, named, proto, ops, index.loc);
}

template <typename Sig, typename... Ops>
auto switch_(LocatedArray index, const std::vector<std::function<Sig>>& branches,
             const Ops&... operands) {
  using R = std::decay_t<std::invoke_result_t<const std::function<Sig>&, const Ops&...>>;
  const std::tuple<const Ops&...> ops(operands...);
  std::shared_ptr<void> proto;
  std::vector<detail::NamedFn> named;  // cond_flat rejects an empty list
  for (std::size_t k = 0; k < branches.size(); ++k)
    named.push_back({"branch " + std::to_string(k),
                     detail::branch_fn(branches[k], ops, k == 0 ? &proto : nullptr)});
  return detail::cond_result<R>(index.array, false, named, proto, ops, index.loc);
}

// while cond_fn(carry): carry = body_fn(carry); returns the last carry. cond_fn returns a bool
// scalar; body_fn returns a carry of the same tree and types as init.
template <typename CondFn, typename BodyFn, typename T>
T while_loop(const CondFn& cond_fn, const BodyFn& body_fn, const T& init, WEFT_LOC_PARAM) {
  using C = std::decay_t<std::invoke_result_t<const CondFn&, const T&>>;
  static_assert(std::is_convertible_v<C, Array>,
                "lax::while_loop: cond_fn must return an Array (a bool scalar)");
  std::string sig;
  const std::vector<Array> leaves = detail::flatten_tree(init, sig);
  detail::NamedFn cond{"cond_fn", [&](const std::vector<Array>& params) {
                         std::size_t pos = 0;
                         const T carry = detail::rebuild_tree(init, params, pos);
                         return detail::flat_scalar(Array(cond_fn(carry)));
                       }};
  detail::NamedFn body{"body_fn", [&](const std::vector<Array>& params) {
                         std::size_t pos = 0;
                         const T carry = detail::rebuild_tree(init, params, pos);
                         return detail::flatten_out(body_fn(carry));
                       }};
  const std::vector<Array> out =
      detail::while_loop_flat(leaves, sig, 0, cond, body, "while_loop", loc);
  std::size_t pos = 0;
  return detail::rebuild_tree(init, out, pos);
}

// for i in [lower, upper): carry = body_fn(i, carry). With C++ integer bounds the trip count is
// static (a scan; i is an i32 Array); with an Array bound (integer scalar) it is a while loop
// and i has the bounds' dtype.
template <typename Lower, typename Upper, typename BodyFn, typename T>
T fori_loop(const Lower& lower, const Upper& upper, const BodyFn& body_fn, const T& init,
            WEFT_LOC_PARAM) {
  constexpr bool lower_static = std::is_integral_v<Lower>;
  constexpr bool upper_static = std::is_integral_v<Upper>;
  static_assert((lower_static || std::is_convertible_v<Lower, Array>)&&(
                    upper_static || std::is_convertible_v<Upper, Array>),
                "lax::fori_loop: bounds are C++ integers or integer scalar Arrays");
  std::string sig;
  std::vector<Array> leaves = detail::flatten_tree(init, sig);
  std::vector<Array> out;
  if constexpr (lower_static && upper_static) {
    const std::int64_t trip = detail::fori_trip_count(static_cast<std::int64_t>(lower),
                                                      static_cast<std::int64_t>(upper), loc);
    const auto first = static_cast<std::int64_t>(lower);
    auto body = [&](const std::vector<Array>& params) {
      const Array i = first == 0 ? params[0] : lax::add(params[0], Array::scalar_int(first), loc);
      std::size_t pos = 1;
      const T carry = detail::rebuild_tree(init, params, pos);
      detail::FlatOut o = detail::flatten_out(body_fn(i, carry));
      o.carry_leaves = o.leaves.size();
      o.y_sig = "t()";
      return o;
    };
    out = detail::scan_flat(leaves, sig, {}, "t()", body, ScanOptions{.length = trip}, "fori_loop",
                            loc);
    std::size_t pos = 0;
    return detail::rebuild_tree(init, out, pos);
  } else {
    const Array* lower_array = nullptr;
    const Array* upper_array = nullptr;
    std::int64_t lower_value = 0, upper_value = 0;
    Array lower_holder, upper_holder;
    if constexpr (lower_static) {
      lower_value = static_cast<std::int64_t>(lower);
    } else {
      lower_holder = Array(lower);
      lower_array = &lower_holder;
    }
    if constexpr (upper_static) {
      upper_value = static_cast<std::int64_t>(upper);
    } else {
      upper_holder = Array(upper);
      upper_array = &upper_holder;
    }
    auto [lo, hi] = detail::fori_bounds(lower_array, lower_value, upper_array, upper_value, loc);
    leaves.insert(leaves.begin(), {lo, hi});
    detail::NamedFn cond{"the loop condition", [&](const std::vector<Array>& params) {
                           return detail::flat_scalar(lax::lt(params[0], params[1], loc));
                         }};
    detail::NamedFn body{"body_fn", [&](const std::vector<Array>& params) {
                           std::size_t pos = 2;
                           const T carry = detail::rebuild_tree(init, params, pos);
                           detail::FlatOut o = detail::flatten_out(body_fn(params[0], carry));
                           const Array next =
                               lax::add(params[0], Array::scalar_int(1, params[0].dtype()), loc);
                           o.leaves.insert(o.leaves.begin(), {next, params[1]});
                           return o;
                         }};
    out = detail::while_loop_flat(leaves, sig, 2, cond, body, "fori_loop", loc);
    std::size_t pos = 2;
    return detail::rebuild_tree(init, out, pos);
  }
}

// Scans f over the leading axis of xs: (carry, y) = f(carry, x) for each row x of xs; returns
// the last carry and the ys stacked along a new leading axis. xs may be lax::no_xs (then give
// options.length); y may be std::tuple<>.
template <typename F, typename Carry, typename Xs>
auto scan(const F& f, const Carry& init, const Xs& xs, ScanOptions options = {}, WEFT_LOC_PARAM) {
  using Out = std::decay_t<std::invoke_result_t<const F&, const Carry&, const Xs&>>;
  static_assert(detail::IsPair<Out>::value,
                "lax::scan: f(carry, x) must return std::pair<carry, y> (y may be std::tuple<>)");
  using Y = typename Out::second_type;
  std::string carry_sig, xs_sig;
  const std::vector<Array> carry_leaves = detail::flatten_tree(init, carry_sig);
  const std::vector<Array> xs_leaves = detail::flatten_tree(xs, xs_sig);
  std::shared_ptr<Y> proto;
  auto body = [&](const std::vector<Array>& params) {
    std::size_t pos = 1;  // params[0] is the iteration number
    const Carry carry = detail::rebuild_tree(init, params, pos);
    const Xs x = detail::rebuild_tree(xs, params, pos);
    Out result = f(carry, x);
    detail::FlatOut o;
    TreeTraits<typename Out::first_type>::flatten(result.first, o.leaves, o.sig);
    o.carry_leaves = o.leaves.size();
    TreeTraits<Y>::flatten(result.second, o.leaves, o.y_sig);
    proto = std::make_shared<Y>(std::move(result.second));
    return o;
  };
  const std::vector<Array> out =
      detail::scan_flat(carry_leaves, carry_sig, xs_leaves, xs_sig, body, options, "scan", loc);
  std::size_t pos = 0;
  Carry last = detail::rebuild_tree(init, out, pos);
  Y ys = detail::rebuild_tree(*proto, out, pos);
  return std::pair<Carry, Y>(std::move(last), std::move(ys));
}

}  // namespace weft::lax
