#include "runtime/pocl_grid_order.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

namespace weft::opencl::detail {

namespace {

bool finished(cl_event event) {
  cl_int status = CL_QUEUED;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr) !=
      CL_SUCCESS)
    return false;  // keep waiting on it: the wait reports the failure
  return status == CL_COMPLETE || status < 0;
}

// Launches recorded between two sweeps for finished ones.
constexpr std::size_t kSweepEvery = 64;

}  // namespace

void KernelGridOrder::forget_finished() {
  std::erase_if(launches_, [](const ClEvent& e) { return finished(e.get()); });
}

bool KernelGridOrder::before_launch(std::size_t width, std::vector<cl_event>& wait) {
  if (widening_ && finished(widening_.get())) widening_ = ClEvent();
  if (width > widest_) {
    forget_finished();
    for (const ClEvent& e : launches_) wait.push_back(e.get());
    return true;
  }
  if (widening_) wait.push_back(widening_.get());
  return false;
}

void KernelGridOrder::after_launch(bool widens, std::size_t width, cl_event done) {
  if (!done) return;
  if (widens) {
    widest_ = width;
    widening_ = ClEvent::retain(done);
  }
  if (launches_.size() >= kSweepEvery) forget_finished();
  launches_.push_back(ClEvent::retain(done));
}

bool needs_grid_order(const std::string& platform_name, bool is_cpu) {
  return is_cpu && platform_name.find("Portable Computing Language") != std::string::npos;
}

std::shared_ptr<KernelGridOrder> kernel_grid_order(cl_context context, const std::string& source,
                                                   const std::string& build_options,
                                                   const std::string& kernel_name) {
  // A hash collision only merges two kernels' orderings, which is safe.
  const std::size_t content = std::hash<std::string>{}(source) ^
                              (std::hash<std::string>{}(build_options)*0x9E3779B97F4A7C15ull);
  using Key = std::tuple<cl_context, std::size_t, std::string>;
  static std::mutex mutex;
  static auto* orders = new std::map<Key, std::weak_ptr<KernelGridOrder>>();  // used at exit
  static std::size_t size_after_sweep = 0;
  std::lock_guard lock(mutex);
  if (orders->size() >= 2 * size_after_sweep + 64) {
    std::erase_if(*orders, [](const auto& entry) { return entry.second.expired(); });
    size_after_sweep = orders->size();
  }
  std::weak_ptr<KernelGridOrder>& slot = (*orders)[Key{context, content, kernel_name}];
  std::shared_ptr<KernelGridOrder> order = slot.lock();
  if (!order) {
    order = std::make_shared<KernelGridOrder>();
    slot = order;
  }
  return order;
}

}  // namespace weft::opencl::detail
