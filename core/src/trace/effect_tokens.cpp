#include "trace/effect_tokens.h"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "weft/callback.h"
#include "weft/error.h"
#include "weft/ir/host_callback.h"
#include "weft/telemetry/host_span.h"

namespace weft {
namespace detail {
namespace {

// Per user thread: the last token of each ordered effect (sequencing is per thread).
thread_local std::map<std::string, std::shared_ptr<Buffer>> t_runtime_tokens;

// Output tokens of dispatches not yet waited for: process-wide and per thread. Settled ones
// without a failure are dropped as the lists grow.
class OutputTokens {
 public:
  void record(const std::shared_ptr<Buffer>& token) {
    std::lock_guard lock(mutex_);
    add(all_, all_prune_at_, token);
  }
  std::vector<std::shared_ptr<Buffer>> take_all() {
    std::lock_guard lock(mutex_);
    return std::exchange(all_, {});
  }
  // Whether this failure was raised by a barrier already (errors are not sticky).
  bool first_raise(const std::exception_ptr& failure) {
    std::lock_guard lock(mutex_);
    if (std::find(raised_.begin(), raised_.end(), failure) != raised_.end()) return false;
    raised_.push_back(failure);
    if (raised_.size() > 256) raised_.pop_front();
    return true;
  }

  static void add(std::vector<std::shared_ptr<Buffer>>& list, std::size_t& prune_at,
                  const std::shared_ptr<Buffer>& token) {
    if (list.size() >= prune_at) {
      std::erase_if(list, [](const std::shared_ptr<Buffer>& t) {
        if (!t->settled()) return false;
        try {
          t->device().wait(*t);
          return true;
        } catch (...) {
          return false;  // kept for the barrier to raise
        }
      });
      prune_at = std::max<std::size_t>(64, 2 * list.size());
    }
    list.push_back(token);
  }

 private:
  std::mutex mutex_;
  std::vector<std::shared_ptr<Buffer>> all_;
  std::size_t all_prune_at_ = 64;
  std::deque<std::exception_ptr> raised_;
};

OutputTokens& output_tokens() {
  static OutputTokens* instance = new OutputTokens();  // used by exit handlers
  return *instance;
}

thread_local std::vector<std::shared_ptr<Buffer>> t_output_tokens;
thread_local std::size_t t_output_prune_at = 64;

}  // namespace

std::vector<std::shared_ptr<Buffer>> run_with_effect_tokens(
    Executable& executable, Device& device, const TokenSignature& tokens,
    std::vector<std::shared_ptr<Buffer>> inputs) {
  if (!tokens.output_token) return executable.run(inputs);
  for (const std::string& effect : tokens.ordered_effects) {
    std::shared_ptr<Buffer>& last = t_runtime_tokens[effect];
    if (!last || &last->device() != &device) {
      std::vector<std::shared_ptr<Buffer>> after;
      if (last) after.push_back(last);
      last = device.token_after(after);
    }
    inputs.push_back(last);
  }
  std::vector<std::shared_ptr<Buffer>> outputs = executable.run(inputs);
  const std::size_t first_token = tokens.outputs;
  for (std::size_t e = 0; e < tokens.ordered_effects.size(); ++e)
    t_runtime_tokens[tokens.ordered_effects[e]] = outputs.at(first_token + e);
  const std::shared_ptr<Buffer>& output_token =
      outputs.at(first_token + tokens.ordered_effects.size());
  output_tokens().record(output_token);
  OutputTokens::add(t_output_tokens, t_output_prune_at, output_token);
  outputs.resize(tokens.outputs);
  return outputs;
}

void note_callback_failure_raised(const std::exception_ptr& failure) {
  output_tokens().first_raise(failure);
}

}  // namespace detail

void effects_barrier(EffectsBarrierScope scope) {
  // A callback waiting for every effect would wait for itself.
  if (inside_host_callback()) scope = EffectsBarrierScope::ThisThread;
  std::vector<std::shared_ptr<Buffer>> tokens;
  if (scope == EffectsBarrierScope::ThisThread) {
    tokens = std::exchange(detail::t_output_tokens, {});
  } else {
    tokens = detail::output_tokens().take_all();
  }
  telemetry::HostSpan wait(
      telemetry::SpanKind::barrier_wait, "effects_barrier",
      {{"scope", scope == EffectsBarrierScope::ThisThread ? "this thread" : "all threads"},
       {"tokens", std::to_string(tokens.size())}});
  std::exception_ptr failure;
  for (const auto& token : tokens) {
    try {
      token->device().wait(*token);
    } catch (...) {
      std::exception_ptr caught = std::current_exception();
      if (!failure && detail::output_tokens().first_raise(caught)) failure = caught;
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace weft
