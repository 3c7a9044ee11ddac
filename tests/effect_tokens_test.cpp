// Compiler tokens (weft/compile/tokens.h) on IR text: what thread_effect_tokens makes of
// prints and callbacks at top level and inside while (condition and body), cond and scan; that
// the threaded graph verifies, round-trips through its text and prints what the traced graph
// prints on the reference interpreter; that compilers refuse unthreaded effects; and the
// errors for malformed host ops in IR text.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/print_capture.h"
#include "weft/compile/schedule.h"
#include "weft/compile/tokens.h"
#include "weft/error.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/effects.h"
#include "weft/ir/text.h"

namespace weft {
namespace {

using Strings = std::vector<std::string>;

// A while whose condition and body print, then an ordered callback.
constexpr const char* kWhileProgram = R"(
func @f(%x: f32[], %n: i32[]) -> (f32[]) {
  debug_print[format="start x = {}", ordered=1] %x : ()
  %i0 = constant[value=0] : i32[]
  %r, %k = while[carries=2] %x, %i0, %n : f32[], i32[] {
    cond(%a: f32[], %i: i32[], %m: i32[]) -> (bool[]) {
      debug_print[format="cond i = {}", ordered=1] %i : ()
      %p = lt %i, %m : bool[]
      return %p
    }
    body(%a: f32[], %i: i32[], %m: i32[]) -> (f32[], i32[]) {
      debug_print[format="body a = {} {{braces}}", ordered=0] %a : ()
      %one = constant[value=1] : i32[]
      %j = add %i, %one : i32[]
      %two = constant[value=2.0] : f32[]
      %b = mul %a, %two : f32[]
      return %b, %j
    }
  }
  %y = host_call[callback=0, effect="io_callback", ordered=1] %r : f32[]
  return %y
}
)";

// A scan printing each row in order, and a cond printing in one branch only.
constexpr const char* kScanCondProgram = R"(
func @g(%c0: f32[], %xs: f32[3], %flag: bool[]) -> (f32[]) {
  %c, %ys = scan[carries=1, length=3, reverse=0, xs=1] %c0, %xs : f32[], f32[3] {
    body(%t: i32[], %c: f32[], %x: f32[]) -> (f32[], f32[]) {
      debug_print[format="t {} x {}", ordered=1] %t, %x : ()
      %s = add %c, %x : f32[]
      return %s, %s
    }
  }
  %r = cond %flag, %c : f32[] {
    branch0(%v: f32[]) -> (f32[]) {
      return %v
    }
    branch1(%v: f32[]) -> (f32[]) {
      debug_print[format="taken {}", ordered=1] %v : ()
      return %v
    }
  }
  return %r
}
)";

std::shared_ptr<HostCallback> add_half_callback() {
  auto cb = std::make_shared<HostCallback>();
  cb->api = "io_callback";
  cb->origin = "effect_tokens_test";
  cb->result_types = {{DType::F32, {}}};
  cb->function = [](std::vector<HostArray>& args, const HostCallbackContext&) {
    HostArray r = args.at(0);
    r.set_f64(0, r.get_f64(0) + 0.5);
    return std::vector<HostArray>{r};
  };
  return cb;
}

Graph parse_with_callback(const char* text) {
  Graph g = parse_graph(text);
  g.callbacks.push_back(add_half_callback());
  return g;
}

// Runs `g` on the interpreter with `inputs` (fresh tokens for any further parameter) and
// returns the prints and the first output.
std::pair<Strings, HostArray> interpret_printing(const Graph& g, std::vector<HostArray> inputs) {
  for (std::size_t p = inputs.size(); p < g.params.size(); ++p)
    inputs.emplace_back(DType::Token, Shape{});
  testing::PrintCapture capture;
  std::vector<HostArray> out = interpret(g, inputs);
  return {capture.lines(), out.at(0)};
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(EffectTokens, AWhileWithEffectsInItsConditionIsThreadedAsJaxDoes) {
  const Graph traced = parse_with_callback(kWhileProgram);
  const ThreadedGraph threaded = thread_effect_tokens(traced);
  const Graph& g = threaded.graph;
  EXPECT_NO_THROW(verify(g));
  EXPECT_TRUE(has_tokens(g));
  EXPECT_TRUE(effects_are_threaded(g));
  EXPECT_FALSE(effects_are_threaded(traced));
  // One runtime token per ordered effect after the user's parameters; their last tokens and
  // the output token after the user's outputs.
  EXPECT_EQ(threaded.tokens.ordered_effects, (Strings{"debug_print", "io_callback"}));
  EXPECT_TRUE(threaded.tokens.output_token);
  EXPECT_EQ(threaded.tokens.params, 2u);
  EXPECT_EQ(threaded.tokens.outputs, 1u);
  ASSERT_EQ(g.params.size(), 4u);
  EXPECT_EQ(g.nodes[g.params[2]].dtype, DType::Token);
  EXPECT_EQ(g.nodes[g.params[3]].dtype, DType::Token);
  ASSERT_EQ(g.outputs.size(), 4u);
  for (std::size_t o = 1; o < 4; ++o) EXPECT_EQ(g.nodes[g.outputs[o]].dtype, DType::Token);
  // The condition's print moved: once before the loop, once at the end of each iteration.
  const std::string text = print_graph(g);
  EXPECT_EQ(count(text, "format=\"cond i = {}\""), 2u) << text;
  EXPECT_NE(text.find("# effects: debug_print, debug_print (ordered), io_callback (ordered)"),
            std::string::npos)
      << text;
  // Text round trip.
  Graph parsed = parse_graph(text);
  parsed.callbacks = g.callbacks;
  EXPECT_TRUE(parsed == g) << text;
}

TEST(EffectTokens, TheThreadedGraphPrintsWhatTheTracedOnePrints) {
  const Graph traced = parse_with_callback(kWhileProgram);
  const Graph threaded = thread_effect_tokens(traced).graph;
  const std::vector<HostArray> inputs{HostArray::from<float>({}, {1.5f}),
                                      HostArray::from<std::int32_t>({}, {3})};
  const auto [traced_prints, traced_out] = interpret_printing(traced, inputs);
  const auto [threaded_prints, threaded_out] = interpret_printing(threaded, inputs);
  const Strings expected{
      "start x = 1.5",        "cond i = 0", "body a = 1.5 {braces}", "cond i = 1",
      "body a = 3. {braces}", "cond i = 2", "body a = 6. {braces}",  "cond i = 3"};
  EXPECT_EQ(traced_prints, expected);
  EXPECT_EQ(threaded_prints, expected);
  EXPECT_EQ(traced_out.to_vector<float>(), std::vector<float>{12.5f});
  EXPECT_EQ(threaded_out.to_vector<float>(), std::vector<float>{12.5f});
}

TEST(EffectTokens, ScanCarriesAndCondPassesTheToken) {
  const Graph traced = parse_graph(kScanCondProgram);
  const ThreadedGraph threaded = thread_effect_tokens(traced);
  EXPECT_NO_THROW(verify(threaded.graph));
  EXPECT_EQ(threaded.tokens.ordered_effects, Strings{"debug_print"});
  const std::string text = print_graph(threaded.graph);
  // The scan carries the token; both cond branches take and return it, the untaken one as is.
  EXPECT_NE(text.find("scan[carries=2"), std::string::npos) << text;
  EXPECT_NE(text.find("branch0(%"), std::string::npos);
  for (bool flag : {false, true}) {
    const std::vector<HostArray> inputs{HostArray::from<float>({}, {1}),
                                        HostArray::from<float>({3}, {1, 2, 3}),
                                        HostArray::from<bool>({}, {flag})};
    const auto [prints, out] = interpret_printing(threaded.graph, inputs);
    Strings expected{"t 0 x 1.", "t 1 x 2.", "t 2 x 3."};
    if (flag) expected.push_back("taken 7.");
    EXPECT_EQ(prints, expected);
    EXPECT_EQ(out.to_vector<float>(), std::vector<float>{7});
    EXPECT_EQ(interpret_printing(traced, inputs).first, expected);
  }
}

TEST(EffectTokens, AGraphWithoutEffectsIsUnchangedAndUnorderedOnesTakeNoToken) {
  const Graph pure = parse_graph(R"(
func @p(%x: f32[4]) -> (f32[4]) {
  %y = exp %x : f32[4]
  return %y
}
)");
  const ThreadedGraph same = thread_effect_tokens(pure);
  EXPECT_TRUE(same.graph == pure);
  EXPECT_FALSE(same.tokens.output_token);
  EXPECT_FALSE(has_tokens(same.graph));

  const Graph unordered = parse_graph(R"(
func @u(%x: f32[4]) -> (f32[4]) {
  debug_print[format="{}", ordered=0] %x : ()
  return %x
}
)");
  const ThreadedGraph t = thread_effect_tokens(unordered);
  EXPECT_TRUE(t.tokens.ordered_effects.empty());
  EXPECT_TRUE(t.tokens.output_token);
  EXPECT_EQ(t.graph.params.size(), 1u);   // no runtime token in
  EXPECT_EQ(t.graph.outputs.size(), 2u);  // the output token out
}

TEST(EffectTokens, CompilersRefuseAGraphWhoseEffectsAreNotThreaded) {
  const Graph traced = parse_with_callback(kWhileProgram);
  try {
    lower_to_schedule(traced);
    FAIL() << "an unthreaded graph was scheduled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("thread_effect_tokens"), std::string::npos) << e.what();
  }
  const ScheduleBlock block = lower_to_schedule(thread_effect_tokens(traced).graph);
  std::size_t host_steps = 0;
  for (const ScheduleStep& step : block.steps)
    host_steps += step.kind == ScheduleStep::Kind::Host ? 1 : 0;
  EXPECT_EQ(host_steps, 3u);  // start print, the condition's first print, the callback
}

TEST(EffectTokens, MalformedHostOpsInTextGetClearErrors) {
  struct Case {
    const char* text;
    const char* says;
  };
  const std::vector<Case> cases{
      {R"(func @a(%x: f32[]) -> (f32[]) {
  debug_print[format="{} and {}", ordered=1] %x : ()
  return %x
})",
       "placeholder"},
      {R"(func @c(%t: token[]) -> (token[]) {
  %u = add %t, %t : token[]
  return %u
})",
       "token"},
      {R"(func @d(%x: f32[]) -> (f32[]) {
  debug_print[ordered=1] %x : ()
  return %x
})",
       "format"},
  };
  for (const Case& c : cases) {
    try {
      Graph g = parse_graph(c.text);
      verify(g);
      ADD_FAILURE() << "accepted:\n" << c.text;
    } catch (const Error& e) {
      std::string what = e.what();
      std::transform(what.begin(), what.end(), what.begin(), ::tolower);
      EXPECT_NE(what.find(c.says), std::string::npos) << e.what();
    }
  }
  // Text names callbacks by slot; one missing from the table is an error where it would run.
  const Graph unbound = parse_graph(R"(func @b(%x: f32[]) -> (f32[]) {
  %y = host_call[callback=2, effect="io_callback", ordered=1] %x : f32[]
  return %y
})");
  try {
    interpret(unbound, std::vector<HostArray>{HostArray::from<float>({}, {1})});
    ADD_FAILURE() << "ran a host_call without its callback";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("callback slot 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace weft
