// WEFT_LOG's grammar and its known components: an unknown component is kept, warned about once
// (naming it and the known ones), and never stops the program.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/log.h"

namespace weft {
namespace {

// Collects the lines written through weft::log while alive; restores the levels afterwards.
class LogCapture {
 public:
  LogCapture() {
    log::set_sink([this](const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
    });
  }
  ~LogCapture() {
    log::set_sink({});
    log::reset_levels_from_environment();
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

TEST(LogComponents, TheKnownOnesAreDefinedInOnePlace) {
  const auto known = log::known_components();
  for (const char* name : {"build", "cache", "cli", "codegen", "runtime"}) {
    EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << name;
    EXPECT_TRUE(log::is_known_component(name)) << name;
  }
  EXPECT_TRUE(std::is_sorted(known.begin(), known.end()));
  EXPECT_FALSE(log::is_known_component("foo"));
  EXPECT_FALSE(log::is_known_component(""));
}

TEST(LogComponents, AnUnknownComponentIsWarnedAboutOnceAndKept) {
  LogCapture capture;
  log::set_levels("foo=debug,cache=info");
  std::vector<std::string> lines = capture.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("weft[log] warning: WEFT_LOG=\"foo=debug,cache=info\": unknown "
                           "component \"foo\"",
                           0),
            0u)
      << lines[0];
  EXPECT_NE(lines[0].find("Known components: build, cache, callback, cli, codegen, runtime"),
            std::string::npos)
      << lines[0];
  // The rest of the setting applies, and so does the unknown one (an embedding application
  // may log under its own names).
  EXPECT_TRUE(log::enabled("cache", log::Level::info));
  EXPECT_FALSE(log::enabled("cache", log::Level::debug));
  EXPECT_TRUE(log::enabled("foo", log::Level::debug));
  // The same setting again says nothing more.
  log::set_levels("foo=debug,cache=info");
  EXPECT_EQ(capture.lines().size(), 1u);
}

TEST(LogComponents, SeveralUnknownComponentsShareOneLine) {
  LogCapture capture;
  log::set_levels("debug,chache=debug,bulid=info");
  const std::vector<std::string> lines = capture.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("unknown components \"chache\", \"bulid\""), std::string::npos)
      << lines[0];
}

TEST(LogComponents, KnownComponentsAndPlainLevelsAreSilent) {
  LogCapture capture;
  log::set_levels("info,build=debug,codegen=off, runtime = warning,cli=error");
  EXPECT_TRUE(capture.lines().empty());
  EXPECT_TRUE(log::enabled("build", log::Level::debug));
  EXPECT_FALSE(log::enabled("codegen", log::Level::error));
  EXPECT_TRUE(log::enabled("anything", log::Level::info));
}

TEST(LogComponents, AnUnknownLevelIsStillAnError) {
  LogCapture capture;
  EXPECT_THROW(log::set_levels("cache=loud"), InvalidArgumentError);
}

}  // namespace
}  // namespace weft
