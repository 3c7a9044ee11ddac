// sort, argsort, top_k and top_k_indices run in sort kernels of their own
// (codegen/sort_kernel.cpp); top_k with k up to kTopKPrivateMax selects without sorting
// (codegen/top_k_kernel.cpp).
#include "codegen/kernel_context.h"
#include "codegen/lowerings/families.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl::lowerings {
namespace {

void emit_sort(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  emit_sort_kernel(ctx, group, name, {.axis = SortAttrs::read(root.attrs).dimension});
}

void emit_argsort(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  emit_sort_kernel(ctx, group, name,
                   {.axis = SortAttrs::read(root.attrs).dimension, .values = false});
}

template <bool values>
void emit_top_k(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  const std::int64_t last = static_cast<std::int64_t>(root.shape.size()) - 1;
  const std::int64_t k = TopKAttrs::read(root.attrs).k;
  if (k <= kTopKPrivateMax) return emit_top_k_kernel(ctx, group, name, k, values);
  emit_sort_kernel(ctx, group, name,
                   {.axis = last, .descending = true, .values = values, .count = k});
}

}  // namespace

void define_sort_lowerings(Lowerings& table) {
  table.add(own_kernel(OpKind::Sort, "sort", emit_sort));
  table.add(own_kernel(OpKind::Argsort, "sort", emit_argsort));
  table.add(own_kernel(OpKind::TopK, "sort", emit_top_k<true>));
  table.add(own_kernel(OpKind::TopKIndices, "sort", emit_top_k<false>));
}

}  // namespace weft::opencl::lowerings
