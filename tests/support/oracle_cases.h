// Runs a table of oracle cases (JAX results committed as JSON) on the device and in the
// reference interpreter the way every oracle test wants it, for a fraction of the kernel builds:
// all cases of a table trace into ONE jit program (PoCL builds each program, and each kernel in
// it, from source: a program per case and an eager program per op were most of the suite's
// time on a cold kernel cache), the interpreter runs that program's graph, and only the first
// case of each eager group also runs eagerly, so the eager path of every function stays covered.
// Each case keeps its own comparison (its tolerance), and a failure names the case and the path
// (eager, jit, interpreter).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "weft/interp/interpreter.h"
#include "weft/transforms/jvp.h"
#include "weft/weft.h"

namespace weft::testing {

// Empty when `got` matches `want`, else a message saying where they differ.
using ResultComparison = std::function<std::string(const HostArray& got, const HostArray& want)>;

struct OracleCase {
  std::string name;
  // Cases with the same non-empty group run eagerly once, the first of them (say, one per
  // function or op); an empty group never runs eagerly.
  std::string eager_group;
  std::vector<HostArray> args, expected;
  ArrayFunction fn;  // the case's function of its arguments, as device arrays or tracers
  ResultComparison compare;
};

// What the table's one program gave on the device and in the interpreter, per case.
struct OracleRun {
  std::vector<std::vector<HostArray>> jitted, interpreted;
  std::vector<bool> runs_eagerly;
  std::string error;  // set when tracing, compiling or running the program threw
};

// Traces every case into one jit program named `program_name`, runs it on the default device
// and interprets its graph (arguments, then the arrays the cases close over).
inline OracleRun run_oracle_cases(const std::vector<OracleCase>& cases,
                                  const std::string& program_name) {
  OracleRun run;
  std::set<std::string> eager_groups;
  for (const OracleCase& c : cases)
    run.runs_eagerly.push_back(!c.eager_group.empty() && eager_groups.insert(c.eager_group).second);
  std::vector<std::size_t> first_arg;  // where each case's arguments start
  std::vector<HostArray> args;
  for (const OracleCase& c : cases) {
    first_arg.push_back(args.size());
    args.insert(args.end(), c.args.begin(), c.args.end());
  }
  auto result_counts = std::make_shared<std::vector<std::size_t>>(cases.size());
  ArrayFunction all = [&cases, first_arg, result_counts](const std::vector<Array>& xs) {
    std::vector<Array> outs;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto from = xs.begin() + static_cast<std::ptrdiff_t>(first_arg[i]);
      std::vector<Array> case_outs;
      try {
        case_outs = cases[i].fn(
            std::vector<Array>(from, from + static_cast<std::ptrdiff_t>(cases[i].args.size())));
      } catch (const std::exception& e) {
        throw std::runtime_error("case " + cases[i].name + ": " + e.what());
      }
      (*result_counts)[i] = case_outs.size();
      outs.insert(outs.end(), case_outs.begin(), case_outs.end());
    }
    return outs;
  };
  try {
    std::vector<Array> device_args;
    for (const HostArray& h : args) device_args.push_back(Array::from_host(h));
    auto traced = jit(all, {.name = program_name});
    const std::vector<Array> on_device = traced(device_args);
    const Lowered lowered = traced.lower(device_args);
    std::vector<HostArray> inputs = args;
    for (const Array& a : lowered.captured()) inputs.push_back(a.to_host());
    const std::vector<HostArray> interpreted = interpret(lowered.graph(), inputs);
    if (on_device.size() != interpreted.size())
      throw std::runtime_error("the device gave " + std::to_string(on_device.size()) +
                               " results, the interpreter " + std::to_string(interpreted.size()));
    std::size_t next = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      std::vector<HostArray> jitted_case, interpreted_case;
      for (std::size_t k = 0; k < (*result_counts)[i]; ++k, ++next) {
        jitted_case.push_back(on_device.at(next).to_host());
        interpreted_case.push_back(interpreted.at(next));
      }
      run.jitted.push_back(std::move(jitted_case));
      run.interpreted.push_back(std::move(interpreted_case));
    }
  } catch (const std::exception& e) {
    run.error = program_name + " (every case in one program): " + e.what();
  }
  return run;
}

// The case's own lowered program, for a failure message.
inline std::string case_program_text(const OracleCase& c) {
  try {
    std::vector<Array> device_args;
    for (const HostArray& h : c.args) device_args.push_back(Array::from_host(h));
    return jit(c.fn, {.name = c.name}).lower(device_args).as_text();
  } catch (const std::exception& e) {
    return std::string("(lowering the case alone threw: ") + e.what() + ")";
  }
}

// Case `i`'s results against JAX's: under jit and in the interpreter from `run`, and eagerly
// when it is its group's first case.
inline void expect_oracle_case(const std::vector<OracleCase>& cases, const OracleRun& run,
                               std::size_t i) {
  const OracleCase& c = cases.at(i);
  SCOPED_TRACE("case " + c.name);
  ASSERT_EQ(run.error, "");
  ASSERT_EQ(run.jitted.at(i).size(), c.expected.size()) << "jit results";
  for (std::size_t k = 0; k < c.expected.size(); ++k)
    EXPECT_EQ(c.compare(run.jitted[i][k], c.expected[k]), "") << "jit, result " << k;
  bool interpreter_agrees = true;
  for (std::size_t k = 0; k < c.expected.size(); ++k) {
    const std::string difference = c.compare(run.interpreted.at(i).at(k), c.expected[k]);
    EXPECT_EQ(difference, "") << "interpreter, result " << k;
    interpreter_agrees = interpreter_agrees && difference.empty();
  }
  if (!interpreter_agrees) ADD_FAILURE() << "the case's program:\n" << case_program_text(c);
  if (!run.runs_eagerly.at(i)) return;
  std::vector<Array> device_args;
  for (const HostArray& h : c.args) device_args.push_back(Array::from_host(h));
  const std::vector<Array> eager = c.fn(device_args);
  ASSERT_EQ(eager.size(), c.expected.size()) << "eager results";
  for (std::size_t k = 0; k < eager.size(); ++k)
    EXPECT_EQ(c.compare(eager[k].to_host(), c.expected[k]), "") << "eager, result " << k;
}

// Every case of the table, one after another (for a test that checks a whole table).
inline void expect_oracle_cases(const std::vector<OracleCase>& cases,
                                const std::string& program_name) {
  ASSERT_FALSE(cases.empty()) << program_name;
  const OracleRun run = run_oracle_cases(cases, program_name);
  ASSERT_EQ(run.error, "");
  for (std::size_t i = 0; i < cases.size(); ++i) expect_oracle_case(cases, run, i);
}

// A table whose cases are checked one test each (a parameterised test per case): the first
// check runs the table's one program, the others reuse what it gave.
class OracleTable {
 public:
  OracleTable(std::vector<OracleCase> cases, std::string program_name)
      : cases_(std::move(cases)), program_name_(std::move(program_name)) {}

  void expect_case(const std::string& name) {
    for (std::size_t i = 0; i < cases_.size(); ++i)
      if (cases_[i].name == name) {
        if (!run_) run_ = run_oracle_cases(cases_, program_name_);
        expect_oracle_case(cases_, *run_, i);
        return;
      }
    ADD_FAILURE() << "no case " << name << " in " << program_name_;
  }

 private:
  std::vector<OracleCase> cases_;
  std::string program_name_;
  std::optional<OracleRun> run_;
};

}  // namespace weft::testing
