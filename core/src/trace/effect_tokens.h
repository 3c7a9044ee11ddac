// Runtime and output tokens (the sequencing seed): what a dispatch of a function with effects
// passes in and keeps. Internal to core.
#pragma once

#include <exception>
#include <memory>
#include <vector>

#include "weft/backend.h"
#include "weft/compile/tokens.h"

namespace weft::detail {

// Runs `executable`, compiled on `device` from a graph thread_effect_tokens returned with
// `tokens`, on `inputs` (the traced graph's parameters): passes this thread's runtime token of
// each ordered effect (handed over from another device without blocking), keeps the tokens
// it returns and its output token, and returns the traced graph's outputs.
std::vector<std::shared_ptr<Buffer>> run_with_effect_tokens(
    Executable& executable, Device& device, const TokenSignature& tokens,
    std::vector<std::shared_ptr<Buffer>> inputs);

// A callback's failure was raised where the user waited for a result computed from it:
// effects barriers do not raise it again.
void note_callback_failure_raised(const std::exception_ptr& failure);

}  // namespace weft::detail
