// A static loop whose carries evolve element by element (ScheduleStep::Kind::LoopKernel) as one
// kernel: each work-item loads its element of every carry into a register, runs the body
// `length` times and stores the results. One launch instead of `length`, and no carry ever
// travels through memory between iterations.
#include <algorithm>
#include <cstdint>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {

namespace {

bool reads(const Graph& body, ValueId v) {
  for (const Node& n : body.nodes)
    if (std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end()) return true;
  return std::find(body.outputs.begin(), body.outputs.end(), v) != body.outputs.end();
}

}  // namespace

void emit_loop_in_kernel(KernelContext& ctx, ValueId scan_id, const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& scan = g.node(scan_id);
  const Graph& body = scan.regions.at(0);
  const ScanAttrs scan_attrs = ScanAttrs::read(scan.attrs);
  const auto carries = static_cast<std::size_t>(scan_attrs.carries);
  const std::int64_t length = scan_attrs.length;
  const bool reverse = scan_attrs.reverse;
  const Shape& shape = body.node(body.params.at(1)).shape;
  const auto n = static_cast<std::size_t>(num_elements(shape));
  const std::string idx_t = n < (std::size_t{1} << 30) ? "int" : "long";
  const std::string count_t = length < (std::int64_t{1} << 31) ? "int" : "long";

  // Arguments: the scan's operands (initial carries, then captured values: a0, a1, ...), then
  // one output per carry.
  std::vector<int> args, writes;
  std::string params;
  for (std::size_t i = 0; i < scan.inputs.size(); ++i) {
    params += "__global const " + cl_storage_type(g.node(scan.inputs[i]).dtype) + "* restrict a" +
              std::to_string(i) + ", ";
    args.push_back(ctx.buffer_of.at(scan.inputs[i]));
  }
  for (std::size_t c = 0; c < carries; ++c) {
    const ValueId result = scan_id + 1 + static_cast<ValueId>(c);
    params += "__global " + cl_storage_type(g.node(result).dtype) + "* restrict out" +
              std::to_string(c) + (c + 1 < carries ? ", " : "");
    args.push_back(ctx.buffer_of.at(result));
    writes.push_back(args.back());
  }

  // Body parameters, all registers: the iteration, the carries (c0, c1, ...), and the captured
  // values, loaded once before the loop (p0, p1, ...; scalars or this work-item's element).
  ExprEmitter emit(
      body, [](ValueId) { return std::string(); }, idx_t);
  if (!ctx.caps.builtin_math) emit.use_math(&ctx.program.math);
  emit.set_indent("    ");
  const bool reads_iteration = reads(body, body.params[0]);
  if (reads_iteration) emit.bind(body.params[0], "iteration");
  std::string loop;
  auto load = [&](std::size_t p, const std::string& var, bool is_const) {
    const Node& param = body.node(body.params[p]);
    const std::string value =
        cl_load(param.dtype, "a" + std::to_string(p - 1), param.shape.empty() ? "0" : "gid");
    loop += std::string("  ") + (is_const ? "const " : "") + cl_type(param.dtype) + " " + var +
            " = " + value + ";\n";
    emit.bind(body.params[p], var);
  };
  for (std::size_t c = 0; c < carries; ++c) load(1 + c, "c" + std::to_string(c), false);
  for (std::size_t p = 1 + carries; p < body.params.size(); ++p)
    if (reads(body, body.params[p])) load(p, "p" + std::to_string(p - 1 - carries), true);
  std::vector<std::string> next;
  for (std::size_t c = 0; c < carries; ++c)
    next.push_back(emit.value(body.outputs[c], Index{"gid", {}, shape}));

  loop += "  for (" + count_t + " k = 0; k < " + std::to_string(length) + "; ++k) {\n";
  if (reads_iteration)
    loop += "    const int iteration = " +
            (reverse ? "(int)(" + std::to_string(length - 1) + " - k)" : std::string("(int)k")) +
            ";\n";
  loop += emit.take_code();
  // Every new value is computed from the old carries before any carry changes.
  for (std::size_t c = 0; c < carries; ++c)
    loop += "    const " + cl_type(body.node(body.params[1 + c]).dtype) + " next" +
            std::to_string(c) + " = " + next[c] + ";\n";
  for (std::size_t c = 0; c < carries; ++c)
    loop += "    c" + std::to_string(c) + " = next" + std::to_string(c) + ";\n";
  loop += "  }\n";
  for (std::size_t c = 0; c < carries; ++c) {
    loop += "  " +
            cl_store(body.node(body.params[1 + c]).dtype, "out" + std::to_string(c), "gid",
                     "c" + std::to_string(c)) +
            "\n";
  }
  loop += "}\n\n";

  // As emit_loop_kernel: the bulk without a bounds check, the remainder in a checked launch.
  const std::string signature = "(" + params + ") {\n";
  const std::size_t local = std::min<std::size_t>(256, ctx.caps.max_work_group_size);
  const std::size_t bulk = n / local * local;
  if (bulk > 0) {
    ctx.source << "__kernel void " << name << signature << "  const " << idx_t << " gid = ("
               << idx_t << ")get_global_id(0);\n"
               << loop;
    ctx.add_launch({name, args, writes, bulk, local});
  }
  if (n > bulk) {
    const std::string tail = bulk > 0 ? name + "_tail" : name;
    const std::size_t tail_local = std::min<std::size_t>(64, ctx.caps.max_work_group_size);
    ctx.source << "__kernel void " << tail << signature << "  const " << idx_t << " gid = " << bulk
               << " + (" << idx_t << ")get_global_id(0);\n  if (gid >= " << n << ") return;\n"
               << loop;
    ctx.add_launch({tail, args, writes, round_up(n - bulk, tail_local), tail_local});
  }
}

}  // namespace weft::opencl
