// custom_jvp, custom_vjp and checkpoint: a function traced as the body of a node of that op
// that carries its rules, while a transformation traces; the plain function otherwise.
#include "weft/transforms/custom.h"

#include "primitives/custom_attrs.h"
#include "trace/array_impl.h"
#include "transforms/custom_rules.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/trace/trace.h"

namespace weft {

namespace detail {

std::vector<Array> stage_custom_op(OpKind op, std::span<const Array> operands, const Attrs& attrs,
                                   std::vector<Graph> regions, std::vector<TensorType> results,
                                   std::shared_ptr<const CustomRules> rules, const std::string& api,
                                   const std::source_location& loc) {
  if (transform_tracing_active())
    return bind_control(op, operands, attrs, std::move(regions), std::move(results), api, loc,
                        std::move(rules));
  if (is_collective(op))
    throw TransformError(std::string(op_name(op)) + " at " + describe_location(loc) +
                         " over the axis '" + prim::CollectiveAttrs::read(attrs).axis_name +
                         "' can only run inside the pmap that binds it, at the top level of its "
                         "function");
  if (regions.empty())
    throw TransformError(api + " at " + describe_location(loc) +
                         ": the linear part of a custom_vjp function has no forward evaluation "
                         "(a bug in weft: it should only be transposed)");
  return eval_graph(regions[0], operands, loc);
}

namespace {

std::vector<Array> call_custom(OpKind op, const ArrayFunction& f,
                               const std::shared_ptr<const CustomRules>& rules,
                               const std::vector<Array>& args, const std::source_location& loc) {
  if (!transform_tracing_active()) return f(args);
  const std::string name(op_name(op));
  std::vector<TensorType> types;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].valid())
      throw InvalidArgumentError(name + " at " + describe_location(loc) + ": argument " +
                                 std::to_string(i) + " is an empty Array");
    types.push_back({args[i].dtype(), args[i].shape()});
  }
  TracedRegion body = trace_region(
      {.name = "body", .function = "the function given to " + name, .api = name, .loc = loc}, types,
      f);
  std::vector<TensorType> results;
  for (ValueId o : body.graph.outputs) results.push_back(body.graph.node(o).type());
  std::vector<Array> operands = args;
  operands.insert(operands.end(), body.captured.begin(), body.captured.end());
  // checkpoint's rules treat the values its function closes over as arguments.
  const Attrs attrs =
      op == OpKind::Checkpoint
          ? Attrs{}
          : prim::CustomFunctionAttrs{static_cast<std::int64_t>(args.size())}.write();
  std::vector<Graph> regions;
  regions.push_back(std::move(body.graph));
  return bind_control(op, operands, attrs, std::move(regions), std::move(results), name, loc,
                      rules);
}

}  // namespace

}  // namespace detail

ArrayFunction custom_jvp(ArrayFunction f, CustomJvpRule rule, std::source_location loc) {
  auto rules = std::make_shared<CustomRules>();
  rules->describe = "custom_jvp at " + detail::describe_location(loc);
  rules->jvp = std::move(rule);
  return [f = std::move(f), rules = std::shared_ptr<const CustomRules>(rules),
          loc](const std::vector<Array>& args) {
    return detail::call_custom(OpKind::CustomJvp, f, rules, args, loc);
  };
}

ArrayFunction custom_vjp(ArrayFunction f, CustomVjpForwardRule fwd, CustomVjpBackwardRule bwd,
                         std::source_location loc) {
  auto rules = std::make_shared<CustomRules>();
  rules->describe = "custom_vjp at " + detail::describe_location(loc);
  rules->fwd = std::move(fwd);
  rules->bwd = std::move(bwd);
  return [f = std::move(f), rules = std::shared_ptr<const CustomRules>(rules),
          loc](const std::vector<Array>& args) {
    return detail::call_custom(OpKind::CustomVjp, f, rules, args, loc);
  };
}

ArrayFunction checkpoint(ArrayFunction f, std::source_location loc) {
  auto rules = std::make_shared<CustomRules>();
  rules->describe = "checkpoint at " + detail::describe_location(loc);
  return [f = std::move(f), rules = std::shared_ptr<const CustomRules>(rules),
          loc](const std::vector<Array>& args) {
    return detail::call_custom(OpKind::Checkpoint, f, rules, args, loc);
  };
}

}  // namespace weft
