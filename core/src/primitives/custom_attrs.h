// The attributes of the ops that exist only while a transformation traces (custom_jvp,
// custom_vjp, custom_lin, the pmap collectives), typed: each op's are read and written through
// its struct, and each attribute's name is spelled once, here. Reading throws InvalidGraphError
// naming a missing or mistyped attribute (a graph parsed from text).
#pragma once

#include <cstdint>
#include <string>

#include "weft/ir/attrs.h"

namespace weft::prim {

// custom_jvp, custom_vjp: the leading `inputs` operands are the function's arguments; the
// others are values it closes over, which its rules do not see.
struct CustomFunctionAttrs {
  static constexpr const char* kInputs = "inputs";
  std::int64_t inputs = 0;

  static CustomFunctionAttrs read(const Attrs& attrs) { return {attrs.get_int(kInputs)}; }
  Attrs write() const { return Attrs{{kInputs, inputs}}; }
};

// custom_lin: the leading `tangents` operands are tangents; the others are residuals.
struct CustomLinAttrs {
  static constexpr const char* kTangents = "tangents";
  std::int64_t tangents = 0;

  static CustomLinAttrs read(const Attrs& attrs) { return {attrs.get_int(kTangents)}; }
  Attrs write() const { return Attrs{{kTangents, tangents}}; }
};

// psum, pmean, pmax, all_gather, axis_index: the pmap axis they combine the devices' values
// over.
struct CollectiveAttrs {
  static constexpr const char* kAxisName = "axis_name";
  std::string axis_name;

  static CollectiveAttrs read(const Attrs& attrs) { return {attrs.get_string(kAxisName)}; }
  Attrs write() const { return Attrs{{kAxisName, axis_name}}; }
};

}  // namespace weft::prim
