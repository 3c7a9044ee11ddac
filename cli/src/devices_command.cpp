// `weft devices`: what weft sees of each OpenCL device, and which one is the default.
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "format.h"
#include "weft/opencl/device_info.h"
#include "weft/weft.h"

namespace weft::cli {

namespace {

nlohmann::json info_json(const opencl::DeviceInfo& info, bool is_default) {
  return {{"name", info.name},
          {"default", is_default},
          {"type", std::string(opencl::device_type_prefix(info.type))},
          {"platform", info.platform_name},
          {"platform_version", info.platform_version},
          {"device_name", info.device_name},
          {"vendor", info.vendor},
          {"driver_version", info.driver_version},
          {"device_version", info.device_version},
          {"opencl_c_version", info.opencl_c_version},
          {"compute_units", info.compute_units},
          {"max_work_group_size", info.max_work_group_size},
          {"global_mem_bytes", info.global_mem_bytes},
          {"local_mem_bytes", info.local_mem_bytes},
          {"max_alloc_bytes", info.max_alloc_bytes},
          {"fp64", info.fp64},
          {"queue_order", info.out_of_order ? "out-of-order" : "in-order"}};
}

void print_info(const opencl::DeviceInfo& info, bool is_default) {
  std::cout << info.name << (is_default ? "  (default)" : "") << "\n";
  Table table({"property", "value"});
  table.add_row({"platform", info.platform_name + " (" + info.platform_version + ")"});
  table.add_row({"device", info.device_name});
  table.add_row({"vendor", info.vendor});
  table.add_row({"driver version", info.driver_version});
  table.add_row({"device version", info.device_version});
  table.add_row({"OpenCL C", info.opencl_c_version});
  table.add_row({"compute units", std::to_string(info.compute_units)});
  table.add_row({"max work-group size", std::to_string(info.max_work_group_size)});
  table.add_row({"global memory", format_bytes(info.global_mem_bytes)});
  table.add_row({"local memory", format_bytes(info.local_mem_bytes)});
  table.add_row({"max allocation", format_bytes(info.max_alloc_bytes)});
  table.add_row({"fp64", info.fp64 ? "yes" : "no (f64 arrays are rejected)"});
  table.add_row({"queue order", info.out_of_order ? "out-of-order" : "in-order"});
  std::cout << table.render("  ", /*with_header=*/false);
}

}  // namespace

CLI::App* add_devices_command(CLI::App& app, DevicesOptions& options) {
  CLI::App* cmd = app.add_subcommand("devices", "List the OpenCL devices weft can run on.");
  cmd->add_flag("--json", options.json, "Print one JSON object instead of text.");
  return cmd;
}

int run_devices(const DevicesOptions& options) {
  const std::vector<Device*> all = devices();
  const char* env = std::getenv("WEFT_DEVICE");
  // A WEFT_DEVICE naming no device breaks default_device(); the listing is how users find a
  // valid name, so it reports the problem instead of failing.
  const Device* chosen = nullptr;
  std::string env_problem;
  try {
    chosen = &default_device();
  } catch (const InvalidArgumentError& e) {
    env_problem = e.what();
  }
  if (options.json) {
    nlohmann::json out = {{"default", chosen ? nlohmann::json(chosen->name()) : nlohmann::json()},
                          {"devices", nlohmann::json::array()}};
    if (env) out["weft_device_env"] = env;
    if (!env_problem.empty()) out["default_error"] = env_problem;
    for (const Device* d : all)
      out["devices"].push_back(info_json(opencl::info_of(*d), d == chosen));
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << all.size() << (all.size() == 1 ? " device" : " devices");
  if (chosen)
    std::cout << "; default " << chosen->name()
              << (env && *env ? " (from WEFT_DEVICE)" : " (first GPU, else first CPU)");
  else
    std::cout << "; no default: WEFT_DEVICE=" << (env ? env : "") << " names no device";
  std::cout << "\n\n";
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i) std::cout << "\n";
    print_info(opencl::info_of(*all[i]), all[i] == chosen);
  }
  return kExitOk;
}

}  // namespace weft::cli
