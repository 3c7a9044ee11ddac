#include "support/example.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace weft::examples {
namespace {

[[noreturn]] void usage(const char* program, const char* what, const std::string& problem) {
  std::cerr << program << ": " << problem << "\n"
            << "usage: " << program << " [--size small|full] [--check ORACLE.json] [--repeat N]\n"
            << what << "\n";
  std::exit(2);
}

HostArray read_array(const std::string& where, const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("dtype") || !spec.contains("shape") ||
      !spec.contains("values"))
    throw InvalidArgumentError("example oracle: " + where +
                               " is not {dtype, shape, values}; regenerate it with the twin");
  const std::optional<DType> dtype = dtype_from_name(spec.at("dtype").get<std::string>());
  if (!dtype)
    throw InvalidArgumentError("example oracle: " + where + " has an unknown dtype " +
                               spec.at("dtype").dump());
  HostArray h(*dtype, spec.at("shape").get<Shape>());
  const nlohmann::json& values = spec.at("values");
  if (!values.is_array() || values.size() != static_cast<std::size_t>(h.size()))
    throw InvalidArgumentError("example oracle: " + where + " holds " +
                               std::to_string(values.size()) + " values for shape " +
                               shape_to_string(h.shape()));
  for (std::int64_t i = 0; i < h.size(); ++i) {
    const nlohmann::json& v = values[static_cast<std::size_t>(i)];
    if (is_float(*dtype))
      h.set_f64(i, v.get<double>());
    else
      h.set_i64(i, v.get<std::int64_t>());
  }
  return h;
}

Named read_section(const nlohmann::json& data, const char* section) {
  Named out;
  if (!data.contains(section)) return out;
  for (const auto& [name, spec] : data.at(section).items())
    out.emplace(name, read_array(std::string(section) + "." + name, spec));
  return out;
}

}  // namespace

Options parse_options(int argc, char** argv, const char* what) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0], what, arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--size") {
      o.size = value();
      if (o.size != "small" && o.size != "full") usage(argv[0], what, "--size is small or full");
    } else if (arg == "--check") {
      o.check = value();
    } else if (arg == "--repeat") {
      o.repeats = std::atoi(value().c_str());
      if (o.repeats < 1) usage(argv[0], what, "--repeat needs a positive count");
    } else if (arg == "-h" || arg == "--help") {
      usage(argv[0], what, "help");
    } else {
      usage(argv[0], what, "unknown argument " + arg);
    }
  }
  return o;
}

Oracle load_oracle(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw InvalidArgumentError("example oracle: cannot open " + path +
                               "; run the example's twin.py to write it");
  nlohmann::json data;
  try {
    data = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgumentError("example oracle: " + path + " is not JSON (" + e.what() + ")");
  }
  try {
    Oracle o;
    o.sizes = data.value("sizes", nlohmann::json::object());
    o.inputs = read_section(data, "inputs");
    o.params = read_section(data, "params");
    o.expected = read_section(data, "expected");
    return o;
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgumentError("example oracle: " + path + " is malformed (" + e.what() + ")");
  }
}

std::map<std::string, Array> device_arrays(const Named& named, const std::string& prefix) {
  std::map<std::string, Array> out;
  for (const auto& [name, host] : named) {
    if (prefix.empty()) {
      out.emplace(name, Array::from_host(host));
    } else if (name.starts_with(prefix + ".")) {
      out.emplace(name.substr(prefix.size() + 1), Array::from_host(host));
    }
  }
  return out;
}

void Checker::expect(const std::string& name, const HostArray& got, const HostArray& want,
                     double rtol, double atol) {
  ++checks_;
  std::string problem;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    problem = "got " + std::string(dtype_name(got.dtype())) + shape_to_string(got.shape()) +
              ", want " + std::string(dtype_name(want.dtype())) + shape_to_string(want.shape());
  } else {
    double scale = 0, worst = 0;
    for (std::int64_t i = 0; i < want.size(); ++i)
      scale = std::max(scale, std::abs(want.get_f64(i)));
    for (std::int64_t i = 0; i < want.size() && problem.empty(); ++i) {
      const double g = got.get_f64(i), w = want.get_f64(i);
      const double allowed = is_float(want.dtype()) ? rtol * (std::abs(w) + scale) + atol : 0;
      const double error = std::abs(g - w);
      if (!(error <= allowed) && !(std::isnan(g) && std::isnan(w))) {
        std::ostringstream s;
        s.precision(9);
        s << "element " << i << ": got " << g << ", want " << w << " (allowed " << allowed << ")";
        problem = s.str();
      }
      if (std::isfinite(error)) worst = std::max(worst, error);
    }
    if (problem.empty()) {
      std::printf("  ok    %-28s %s%s, max abs error %.3g\n", name.c_str(),
                  std::string(dtype_name(want.dtype())).c_str(),
                  shape_to_string(want.shape()).c_str(), worst);
      return;
    }
  }
  ++failures_;
  std::printf("  FAIL  %-28s %s\n", name.c_str(), problem.c_str());
}

int Checker::exit_code() const {
  std::printf("%d of %d checks passed\n", checks_ - failures_, checks_);
  return failures_ == 0 ? 0 : 3;
}

Array key_at(const Array& keys, std::int64_t i) {
  return lax::reshape(lax::slice(keys, {i, 0}, {i + 1, 2}), {2});
}

void time_step(const std::string& name, const std::vector<Array>& inputs,
               const std::function<void()>& step, int repeats) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  const auto drawn = Clock::now();
  for (const Array& input : inputs) input.block_until_ready();
  const auto start = Clock::now();
  step();
  const double first = seconds(Clock::now() - start);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    step();
    times.push_back(seconds(Clock::now() - t0));
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "%s full: first call %.1f ms, step median %.3f ms (%d calls), %.1f ms waiting for "
      "the inputs before\n",
      name.c_str(), first * 1e3, times[times.size() / 2] * 1e3, repeats,
      seconds(start - drawn) * 1e3);
}

}  // namespace weft::examples
