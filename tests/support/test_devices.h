// Which devices a test runs on, chosen by what the machine has and what the test needs, never
// by a hard-coded name: on a machine whose only device is a GPU there is no cpu:0, and under
// PoCL alone there is no gpu:0. A test that needs hardware the machine lacks (two devices)
// skips with GTEST_SKIP and says why.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "weft/backend.h"
#include "weft/opencl/device_info.h"
#include "weft/opencl/register.h"  // the devices come from the OpenCL backend

namespace weft::testing {

// The device of a test that needs one device, any kind: the default device as a user's program
// gets it (WEFT_DEVICE, else the first GPU, else the first CPU; cpu:0 under PoCL alone).
inline Device& test_device() {
  return default_device();
}

// Two devices of one platform and type, for tests that run across two: the first such pair in
// naming order (cpu:0 and cpu:1 under POCL_DEVICES="pthread pthread", gpu:0 and gpu:1 on two
// GPUs). Empty when the machine has no such pair.
inline std::vector<Device*> two_devices() {
  const std::vector<opencl::DeviceInfo>& infos = opencl::device_infos();
  for (std::size_t i = 0; i < infos.size(); ++i)
    for (std::size_t j = i + 1; j < infos.size(); ++j)
      if (infos[i].platform_name == infos[j].platform_name && infos[i].type == infos[j].type)
        return {&device(infos[i].name), &device(infos[j].name)};
  return {};
}

// Why a two-device test cannot run here: the devices the machine has.
inline std::string no_two_devices_reason() {
  std::string names;
  for (const opencl::DeviceInfo& info : opencl::device_infos())
    names += (names.empty() ? "" : ", ") + info.name + " (" + info.platform_name + ")";
  return "needs two devices of one platform (with PoCL: POCL_DEVICES=\"pthread pthread\", as "
         "CTest sets for multidevice_* tests); this machine has " +
         names;
}

}  // namespace weft::testing

// In a test or SetUp: skips unless the machine has two devices of one platform.
#define WEFT_SKIP_WITHOUT_TWO_DEVICES()       \
  if (::weft::testing::two_devices().empty()) \
  GTEST_SKIP() << ::weft::testing::no_two_devices_reason()
