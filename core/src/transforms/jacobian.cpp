// jacfwd, jacrev and hessian: vmap over a basis of tangents (or cotangents).
#include "weft/transforms/jacobian.h"

#include "trace/array_impl.h"
#include "transforms/jvp_rules.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/vmap.h"

namespace weft {

namespace {

std::int64_t element_count(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

// The standard basis of values of `type`: [n, type.shape...], row j is 1 at element j.
Array basis(const TensorType& type, const std::source_location& loc) {
  const std::int64_t n = element_count(type.shape);
  const Shape square{n, n};
  const Array eye = lax::convert_element_type(
      lax::eq(lax::iota(DType::I32, square, 0, loc), lax::iota(DType::I32, square, 1, loc), loc),
      type.dtype, loc);
  Shape shape{n};
  shape.insert(shape.end(), type.shape.begin(), type.shape.end());
  return lax::reshape(eye, shape, loc);
}

void check_argnums(const JacobianOptions& options, std::size_t arguments, const char* api,
                   const std::vector<Array>& args, const std::source_location& loc) {
  if (options.argnums.empty())
    throw InvalidArgumentError(std::string(api) + " at " + detail::describe_location(loc) +
                               ": argnums is empty; name at least one argument");
  for (int a : options.argnums) {
    if (a < 0 || static_cast<std::size_t>(a) >= arguments)
      throw InvalidArgumentError(std::string(api) + " at " + detail::describe_location(loc) +
                                 ": argnums names argument " + std::to_string(a) +
                                 " but the function was called with " + std::to_string(arguments) +
                                 " arguments");
    if (!is_float(args[static_cast<std::size_t>(a)].dtype()))
      throw DTypeError(std::string(api) + " at " + detail::describe_location(loc) + ": argument " +
                       std::to_string(a) + " is " +
                       std::string(dtype_name(args[static_cast<std::size_t>(a)].dtype())) +
                       "; Jacobians are taken with respect to float arguments");
  }
}

// [n, rest...] -> [rest..., n]: the basis axis moved last.
Array basis_axis_last(const Array& x, const std::source_location& loc) {
  lax::Axes perm;
  const auto rank = static_cast<std::int64_t>(x.shape().size());
  for (std::int64_t d = 1; d < rank; ++d) perm.push_back(d);
  perm.push_back(0);
  return lax::transpose(x, perm, loc);
}

Shape concat(const Shape& a, const Shape& b) {
  Shape out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

ArrayFunction jacfwd(ArrayFunction f, JacobianOptions options, std::source_location loc) {
  return [f = std::move(f), options, loc](const std::vector<Array>& args) {
    check_argnums(options, args.size(), "jacfwd", args, loc);
    return detail::stage_or_run("jacfwd", loc, [&] {
      // by_argument[i][k]: d out_k / d arg_i, [out_k..., arg_i...].
      std::vector<std::vector<Array>> by_argument;
      for (int a : options.argnums) {
        const auto i = static_cast<std::size_t>(a);
        const ArrayFunction push = [&](const std::vector<Array>& t) {
          std::vector<Array> tangents;
          for (const Array& x : args) tangents.push_back(detail::zeros_like_value(x, loc));
          tangents[i] = t.at(0);
          return jvp(f, args, tangents, loc).tangents_out;
        };
        std::vector<Array> columns =
            vmap(push, {}, loc)({basis({args[i].dtype(), args[i].shape()}, loc)});
        std::vector<Array> jac;
        for (const Array& c : columns) {
          const Shape out(c.shape().begin() + 1, c.shape().end());
          jac.push_back(lax::reshape(basis_axis_last(c, loc), concat(out, args[i].shape()), loc));
        }
        by_argument.push_back(std::move(jac));
      }
      std::vector<Array> out;
      for (std::size_t k = 0; k < by_argument[0].size(); ++k)
        for (const std::vector<Array>& jac : by_argument) out.push_back(jac[k]);
      return out;
    });
  };
}

ArrayFunction jacrev(ArrayFunction f, JacobianOptions options, std::source_location loc) {
  return [f = std::move(f), options, loc](const std::vector<Array>& args) {
    check_argnums(options, args.size(), "jacrev", args, loc);
    return detail::stage_or_run("jacrev", loc, [&] {
      // The outputs' types, from a trace (calling f here would stage its effects once more).
      const detail::TracedRegion traced = detail::trace_for_transform("jacrev", f, args, loc);
      std::vector<TensorType> outputs;
      for (ValueId o : traced.graph.outputs) outputs.push_back(traced.graph.node(o).type());
      std::vector<Array> out;
      for (std::size_t k = 0; k < outputs.size(); ++k) {
        if (!is_float(outputs[k].dtype))
          throw DTypeError("jacrev at " + detail::describe_location(loc) + ": output " +
                           std::to_string(k) + " is " + type_to_string(outputs[k]) +
                           "; Jacobians are taken of float outputs");
        const ArrayFunction pull = [&](const std::vector<Array>& ct) {
          const VjpResult r = vjp(f, args, loc);
          std::vector<Array> cotangents;
          for (const Array& y : r.primals_out)
            cotangents.push_back(detail::zeros_like_value(y, loc));
          cotangents[k] = ct.at(0);
          const std::vector<Array> grads = r.pullback(cotangents);
          std::vector<Array> picked;
          for (int a : options.argnums) picked.push_back(grads[static_cast<std::size_t>(a)]);
          return picked;
        };
        const std::vector<Array> rows = vmap(pull, {}, loc)({basis(outputs[k], loc)});
        for (std::size_t j = 0; j < rows.size(); ++j) {
          const Array& arg = args[static_cast<std::size_t>(options.argnums[j])];
          out.push_back(lax::reshape(rows[j], concat(outputs[k].shape, arg.shape()), loc));
        }
      }
      return out;
    });
  };
}

ArrayFunction hessian(ArrayFunction f, JacobianOptions options, std::source_location loc) {
  return jacfwd(jacrev(std::move(f), options, loc), options, loc);
}

}  // namespace weft
