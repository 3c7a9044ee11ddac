// Parallel map over devices (after jax.pmap): the leading axis of each argument is split across
// devices, each device runs the function on its slice, and the results are stacked again.
//
//   auto step = weft::pmap([](const std::vector<Array>& a) {
//     return std::vector<Array>{weft::pmean(local_gradient(a[0]), "i")};
//   });
//   Array g = step({shards}).at(0);  // shards: [devices, ...]
//
// The function is traced once on one slice's shapes; each device gets its own programs, which
// run concurrently. Collectives (psum, pmean, pmax, all_gather, axis_index) name the axis of
// an enclosing pmap; between them each device runs one program, and the collective combines
// the devices' values. Host callbacks run once per device with that device's slice: a tap
// with tap_with_device names it ("cpu:1"), hcb::call returns each device its own result, and
// ordered effects keep program order on each device.
//
// pmap runs outside jit (inside a trace it raises TransformError); collectives at the top level
// of the function (inside a loop or branch they raise TransformError), and not under other
// transformations inside the pmapped function.
#pragma once

#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "weft/backend.h"
#include "weft/transforms/jvp.h"

namespace weft {

struct PmapOptions {
  // The devices, one per slice (empty: the first N of weft::devices(), N the leading axis).
  std::vector<Device*> devices = {};
  std::string axis_name = "i";  // what collectives call the mapped axis
  // One entry per argument (empty: all split); nullopt: the argument is given whole to every
  // device.
  std::vector<std::optional<int>> in_axes = {};
};

// Results are stacked along a new leading axis on the first device.
ArrayFunction pmap(ArrayFunction f, PmapOptions options = {},
                   std::source_location loc = std::source_location::current());

// Across the devices of the pmap whose axis is `axis_name`:
Array psum(const Array& x, const std::string& axis_name,
           std::source_location loc = std::source_location::current());
Array pmean(const Array& x, const std::string& axis_name,
            std::source_location loc = std::source_location::current());
Array pmax(const Array& x, const std::string& axis_name,
           std::source_location loc = std::source_location::current());
// Every device's x, stacked along a new leading axis (the same on every device).
Array all_gather(const Array& x, const std::string& axis_name,
                 std::source_location loc = std::source_location::current());
// This device's position along the axis (i32 scalar).
Array axis_index(const std::string& axis_name,
                 std::source_location loc = std::source_location::current());

}  // namespace weft
