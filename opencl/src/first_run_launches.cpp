#include "first_run_launches.h"

#include <algorithm>

namespace weft::opencl::detail {

void FirstRunLaunches::add(ClEvent launch) {
  if (unfinished_.size() >= fold_at_) {
    fold_finished();
    // When the queue runs far ahead most launches are unfinished: wait until the list has
    // doubled before asking again.
    fold_at_ = std::max(kFirstFold, 2 * unfinished_.size());
  }
  unfinished_.push_back(std::move(launch));
}

void FirstRunLaunches::fold(const ClEvent& launch, cl_int status) {
  if (status < 0) {
    failed_ = true;
    return;
  }
  cl_ulong start = 0, end = 0;
  if (clGetEventProfilingInfo(launch.get(), CL_PROFILING_COMMAND_START, sizeof start, &start,
                              nullptr) != CL_SUCCESS ||
      clGetEventProfilingInfo(launch.get(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) !=
          CL_SUCCESS) {
    profiled_ = false;
    return;
  }
  if (end > start) seconds_ += static_cast<double>(end - start) * 1e-9;
}

void FirstRunLaunches::fold_finished() {
  std::erase_if(unfinished_, [this](const ClEvent& launch) {
    cl_int status = CL_QUEUED;
    if (clGetEventInfo(launch.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                       nullptr) != CL_SUCCESS)
      return false;  // unknown: wait() asks again
    if (status > CL_COMPLETE) return false;
    fold(launch, status);
    return true;
  });
}

bool FirstRunLaunches::wait() {
  if (!unfinished_.empty()) {
    std::vector<cl_event> events;
    events.reserve(unfinished_.size());
    for (const ClEvent& launch : unfinished_) events.push_back(launch.get());
    if (clWaitForEvents(static_cast<cl_uint>(events.size()), events.data()) != CL_SUCCESS)
      failed_ = true;
    fold_finished();
  }
  return !failed_;
}

}  // namespace weft::opencl::detail
