// A coroutine that produces one string of OpenCL C (an expression naming a node's element),
// pausing whenever it needs another node's element first. Its driver (ExprEmitter::value)
// keeps the paused tasks on an explicit stack, so that the depth of the graph never becomes
// depth of the C++ call stack: a chain of 50,000 fused ops is 50,000 heap frames, not 50,000
// nested calls.
#pragma once

#include <coroutine>
#include <exception>
#include <string>
#include <utility>

namespace weft::opencl {

class EmitTask {
 public:
  struct promise_type {
    std::string value;
    std::exception_ptr error;

    EmitTask get_return_object() {
      return EmitTask(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    // Created paused: the driver decides when it runs.
    std::suspend_always initial_suspend() noexcept { return {}; }
    // Kept until the driver has taken the value.
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_value(std::string v) { value = std::move(v); }
    void unhandled_exception() { error = std::current_exception(); }
  };

  EmitTask(EmitTask&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  EmitTask& operator=(EmitTask&& other) noexcept {
    if (this != &other) {
      if (handle_) handle_.destroy();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  EmitTask(const EmitTask&) = delete;
  EmitTask& operator=(const EmitTask&) = delete;
  ~EmitTask() {
    if (handle_) handle_.destroy();
  }

  // Runs until the task finishes or pauses for an operand.
  void resume() { handle_.resume(); }
  bool done() const { return handle_.done(); }
  // The finished task's string; rethrows what the task threw.
  std::string take_value() {
    if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
    return std::move(handle_.promise().value);
  }

 private:
  explicit EmitTask(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
  std::coroutine_handle<promise_type> handle_;
};

}  // namespace weft::opencl
