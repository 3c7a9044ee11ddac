// vjp, grad and value_and_grad: linearize the traced function, then transpose its linear part.
#include "weft/transforms/grad.h"

#include <memory>
#include <utility>

#include "trace/array_impl.h"
#include "transforms/linearize.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {

using detail::Tangent;

Array ones_like(const Array& like, const std::source_location& loc) {
  const Array one = lax::constant(1, like.dtype(), loc);
  return like.shape().empty() ? one : lax::broadcast_in_dim(one, like.shape(), {}, loc);
}

std::vector<bool> wanted(std::size_t arguments, const GradOptions& options, const char* api,
                         const std::source_location& loc) {
  std::vector<bool> out(arguments, false);
  for (int a : options.argnums) {
    if (a < 0 || static_cast<std::size_t>(a) >= arguments)
      throw InvalidArgumentError(std::string(api) + " at " + detail::describe_location(loc) +
                                 ": argnums names argument " + std::to_string(a) +
                                 " but the function was called with " + std::to_string(arguments) +
                                 " arguments");
    out[static_cast<std::size_t>(a)] = true;
  }
  if (options.argnums.empty())
    throw InvalidArgumentError(std::string(api) + " at " + detail::describe_location(loc) +
                               ": argnums is empty; name at least one argument");
  return out;
}

// value, then the gradients (argnums order), then aux outputs.
std::vector<Array> value_and_grad_impl(const ArrayFunction& f, const GradOptions& options,
                                       const std::vector<Array>& args, const char* api,
                                       const std::source_location& loc) {
  const std::vector<bool> differentiate = wanted(args.size(), options, api, loc);
  return detail::stage_or_run(api, loc, [&] {
    const detail::TracedRegion traced = detail::trace_for_transform(api, f, args, loc);
    std::vector<Array> primals = args;
    std::vector<bool> flags = differentiate;
    primals.insert(primals.end(), traced.captured.begin(), traced.captured.end());
    flags.resize(primals.size(), false);
    const detail::Linearized lin = detail::linearize_graph(traced.graph, primals, flags, api, loc);
    if (lin.primals_out.empty())
      throw InvalidArgumentError(std::string(api) + " at " + detail::describe_location(loc) +
                                 ": the function returned nothing to differentiate");
    const Array& value = lin.primals_out[0];
    if (!value.shape().empty() || !is_float(value.dtype()))
      throw InvalidArgumentError(
          std::string(api) + " at " + detail::describe_location(loc) +
          ": the function's first output is " + std::string(dtype_name(value.dtype())) +
          shape_to_string(value.shape()) +
          "; grad needs a float scalar (reduce it, or use vjp for other outputs)");
    if (!options.has_aux && lin.primals_out.size() > 1)
      throw InvalidArgumentError(std::string(api) + " at " + detail::describe_location(loc) +
                                 ": the function returned " +
                                 std::to_string(lin.primals_out.size()) +
                                 " outputs; return one, or set has_aux to pass the others through");
    std::vector<Tangent> cotangents(lin.primals_out.size());
    cotangents[0] = ones_like(value, loc);
    const std::vector<Tangent> grads = detail::transpose_graph(lin, cotangents, api, loc);
    // transpose_graph answers for the float arguments it linearized, in order.
    std::vector<Array> out{value};
    std::size_t next = 0;
    std::vector<Array> by_argument(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!differentiate[i]) continue;
      if (!is_float(args[i].dtype())) {
        by_argument[i] = detail::zeros_like_value(args[i], loc);
        continue;
      }
      const Tangent& g = grads.at(next++);
      by_argument[i] = g ? *g : detail::zeros_like_value(args[i], loc);
    }
    for (int a : options.argnums) out.push_back(by_argument[static_cast<std::size_t>(a)]);
    out.insert(out.end(), lin.primals_out.begin() + 1, lin.primals_out.end());
    return out;
  });
}

}  // namespace

VjpResult vjp(const ArrayFunction& f, const std::vector<Array>& primals, std::source_location loc) {
  const auto lin = detail::linearize_function(f, primals, "vjp", loc);
  VjpResult result;
  // The closures keep `lin`, not the outputs: those belong to the caller.
  result.primals_out = std::exchange(lin->primals_out, {});
  std::vector<TensorType> out_types, in_types;
  for (const Array& a : result.primals_out) out_types.push_back({a.dtype(), a.shape()});
  for (const Array& a : primals) in_types.push_back({a.dtype(), a.shape()});
  result.pullback = [lin, out_types, in_types, loc](const std::vector<Array>& cotangents) {
    if (cotangents.size() != out_types.size())
      throw InvalidArgumentError("vjp pullback (vjp at " + detail::describe_location(loc) +
                                 "): " + std::to_string(cotangents.size()) + " cotangents for " +
                                 std::to_string(out_types.size()) +
                                 " outputs; give one per output");
    for (std::size_t k = 0; k < cotangents.size(); ++k)
      if (cotangents[k].dtype() != out_types[k].dtype ||
          cotangents[k].shape() != out_types[k].shape)
        throw ShapeError(
            "vjp pullback (vjp at " + detail::describe_location(loc) + "): cotangent " +
            std::to_string(k) + " is " + std::string(dtype_name(cotangents[k].dtype())) +
            shape_to_string(cotangents[k].shape()) + " but output " + std::to_string(k) + " is " +
            type_to_string(out_types[k]) + "; a cotangent has its output's dtype and shape");
    return detail::stage_or_run("vjp pullback", loc, [&] {
      std::vector<Tangent> cts(cotangents.begin(), cotangents.end());
      const std::vector<Tangent> grads = detail::transpose_graph(*lin, cts, "vjp", loc);
      std::vector<Array> out;
      std::size_t next = 0;
      for (const TensorType& t : in_types) {
        const Array zero = lax::constant(0, t.dtype, loc);
        const Array zeros = t.shape.empty() ? zero : lax::broadcast_in_dim(zero, t.shape, {}, loc);
        if (!is_float(t.dtype)) {
          out.push_back(zeros);
          continue;
        }
        const Tangent& g = grads.at(next++);
        out.push_back(g ? *g : zeros);
      }
      return out;
    });
  };
  return result;
}

ArrayFunction value_and_grad(ArrayFunction f, GradOptions options, std::source_location loc) {
  return [f = std::move(f), options = std::move(options), loc](const std::vector<Array>& args) {
    return value_and_grad_impl(f, options, args, "value_and_grad", loc);
  };
}

ArrayFunction grad(ArrayFunction f, GradOptions options, std::source_location loc) {
  return [f = std::move(f), options = std::move(options), loc](const std::vector<Array>& args) {
    std::vector<Array> out = value_and_grad_impl(f, options, args, "grad", loc);
    out.erase(out.begin());
    return out;
  };
}

std::function<Array(const Array&)> grad(std::function<Array(const Array&)> f,
                                        std::source_location loc) {
  return [f = std::move(f), loc](const Array& x) {
    const ArrayFunction g = [&f](const std::vector<Array>& a) {
      return std::vector<Array>{f(a.at(0))};
    };
    return value_and_grad_impl(g, GradOptions{}, {x}, "grad", loc).at(1);
  };
}

}  // namespace weft
