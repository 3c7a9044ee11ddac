// A coroutine for enqueueing a block: it runs at once on the calling thread and finishes
// there unless a step needs a value on the host (a while predicate, a cond index); then it
// pauses until the device runtime's thread resumes it with the value. Awaiting a task that
// has finished costs nothing, so plans without such steps never pause.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

namespace weft::opencl::detail {

template <typename T>
class RunTask {
 public:
  struct promise_type {
    std::optional<T> value;
    std::exception_ptr error;
    std::coroutine_handle<> continuation;  // the task awaiting this one, if it paused

    RunTask get_return_object() {
      return RunTask(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_never initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
        if (auto next = h.promise().continuation) return next;
        return std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_value(T v) { value.emplace(std::move(v)); }
    void unhandled_exception() { error = std::current_exception(); }
  };

  RunTask(RunTask&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  RunTask& operator=(RunTask&&) = delete;
  RunTask(const RunTask&) = delete;
  ~RunTask() {
    if (handle_) handle_.destroy();
  }

  bool done() const { return handle_.done(); }
  // The finished task's value; rethrows what it threw.
  T take() {
    if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
    return std::move(*handle_.promise().value);
  }
  // Lets the owner of a top-level task run something once it finishes (on whichever thread
  // finishes it). Only for a task that has paused.
  void then(std::coroutine_handle<> continuation) { handle_.promise().continuation = continuation; }

  // co_await: resumes the awaiting coroutine with the value once the task finishes.
  bool await_ready() const noexcept { return handle_.done(); }
  void await_suspend(std::coroutine_handle<> awaiting) noexcept {
    handle_.promise().continuation = awaiting;
  }
  T await_resume() { return take(); }

 private:
  explicit RunTask(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
  std::coroutine_handle<promise_type> handle_;
};

}  // namespace weft::opencl::detail
