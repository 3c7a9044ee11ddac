// The transformation rules of scan (scan/definition.cpp gives them to its definition).
#pragma once

#include "primitives/primitive.h"

namespace weft::prim::scan_rules {

detail::ControlTangents jvp(const Graph& g, const Node& n, std::span<const Array> operands,
                            std::span<const detail::Tangent> tangents, const std::string& api,
                            const std::source_location& loc);
detail::ControlTangents linearize(const Graph& g, const Node& n, std::span<const Array> operands,
                                  std::span<const detail::Tangent> tangents, const std::string& api,
                                  const std::source_location& loc);
std::vector<detail::Tangent> transpose(const Graph& g, const Node& n,
                                       std::span<const detail::Tangent> result_cotangents,
                                       std::span<const std::optional<Array>> operands,
                                       const std::vector<bool>& linear, const std::string& api,
                                       const std::source_location& loc);
std::vector<detail::Batched> batch(const Graph& g, const Node& n,
                                   std::span<const detail::Batched> operands,
                                   std::int64_t batch_size, const std::string& api,
                                   const std::source_location& loc);

}  // namespace weft::prim::scan_rules
