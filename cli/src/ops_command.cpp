// `weft ops`: every primitive weft has, with its JAX name(s), the dtypes it accepts, its
// transformation rules and how the OpenCL code generator runs it, read from the primitives'
// definitions. `--markdown` writes docs/primitives.md.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "format.h"
#include "weft/error.h"
#include "weft/ir/primitive_catalog.h"
#include "weft/opencl/lowering_status.h"

namespace weft::cli {
namespace {

std::string join(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

std::vector<std::string> dtype_names(const std::vector<DType>& dtypes) {
  std::vector<std::string> names;
  for (DType d : dtypes) names.emplace_back(dtype_name(d));
  return names;
}

// "any" when every array dtype is accepted, else the names.
std::string dtypes_text(const std::vector<DType>& dtypes) {
  if (dtypes.size() == std::size(kAllDTypes)) return "any";
  return join(dtype_names(dtypes), " ");
}

std::string rule_word(const RuleSummary& r) {
  switch (r.state) {
    case RuleSummary::State::defined:
      return "yes";
    case RuleSummary::State::refused:
      return "none";
    case RuleSummary::State::by_walker:
      return "walker";
  }
  return "?";
}

std::string rule_text(const RuleSummary& r) {
  switch (r.state) {
    case RuleSummary::State::defined:
      return "yes";
    case RuleSummary::State::refused:
      return "none: " + r.refusal;
    case RuleSummary::State::by_walker:
      return "the transformation's graph walker handles it";
  }
  return "?";
}

// true, {"none": refusal} or "walker".
nlohmann::json rule_json(const RuleSummary& r) {
  switch (r.state) {
    case RuleSummary::State::defined:
      return true;
    case RuleSummary::State::refused:
      return {{"none", r.refusal}};
    case RuleSummary::State::by_walker:
      return "walker";
  }
  return nullptr;
}

std::vector<PrimitiveSummary> selected(const OpsOptions& options) {
  std::vector<PrimitiveSummary> all = primitive_catalog();
  if (options.names.empty()) return all;
  std::vector<PrimitiveSummary> chosen;
  for (const std::string& name : options.names) {
    bool found = false;
    for (const PrimitiveSummary& s : all) {
      bool matches = s.name == name;
      for (const std::string& j : s.jax_names) matches = matches || j == name;
      if (matches) {
        chosen.push_back(s);
        found = true;
      }
    }
    if (!found)
      throw InvalidArgumentError("weft ops: no primitive is called '" + name +
                                 "' (weft's or JAX's name); run `weft ops` for the list");
  }
  return chosen;
}

void print_json(const std::vector<PrimitiveSummary>& ops) {
  nlohmann::json out = nlohmann::json::array();
  for (const PrimitiveSummary& s : ops)
    out.push_back({{"name", s.name},
                   {"jax", s.jax_names},
                   {"class", s.op_class},
                   {"arity", s.arity},
                   {"dtypes", dtype_names(s.dtypes)},
                   {"jvp", rule_json(s.jvp)},
                   {"transpose", rule_json(s.transpose)},
                   {"batching", rule_json(s.batching)},
                   {"transformation_only", s.transformation_only},
                   {"opencl", opencl::lowering_status(s.kind)}});
  std::cout << out.dump(2) << "\n";
}

void print_details(const std::vector<PrimitiveSummary>& ops) {
  for (const PrimitiveSummary& s : ops) {
    std::cout << s.name << "\n";
    Table table({"property", "value"});
    table.add_row({"jax", s.jax_names.empty() ? "-" : join(s.jax_names, ", ")});
    table.add_row({"class", s.op_class});
    table.add_row({"arity", s.arity < 0 ? "variadic" : std::to_string(s.arity)});
    table.add_row({"dtypes", dtypes_text(s.dtypes)});
    table.add_row({"jvp", rule_text(s.jvp)});
    table.add_row({"transpose", rule_text(s.transpose)});
    table.add_row({"batching", rule_text(s.batching)});
    table.add_row({"opencl", opencl::lowering_status(s.kind)});
    if (s.transformation_only)
      table.add_row({"note", "exists only while a transformation traces a function"});
    std::cout << table.render("  ", /*with_header=*/false);
  }
}

void print_table(const std::vector<PrimitiveSummary>& ops) {
  Table table({"op", "jax", "class", "dtypes", "jvp", "transpose", "batching", "opencl"});
  for (const PrimitiveSummary& s : ops)
    table.add_row({s.name, s.jax_names.empty() ? "-" : join(s.jax_names, ", "), s.op_class,
                   dtypes_text(s.dtypes), rule_word(s.jvp), rule_word(s.transpose),
                   rule_word(s.batching), opencl::lowering_status(s.kind)});
  std::cout << table.render("", /*with_header=*/true);
  std::cout << ops.size() << " primitives; `weft ops NAME` shows one with its refusals.\n";
}

// Table cells: a '|' would end the cell.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

void print_markdown(const std::vector<PrimitiveSummary>& ops) {
  std::cout << "# Primitives\n\n"
               "Generated by `weft ops --markdown` from each primitive's definition "
               "(core/src/primitives/); a test checks that this page matches it. `dtypes` lists "
               "the dtypes of the operands that carry data (\"any\": every array dtype); a rule "
               "marked \"none\" refuses with the message below the table, and \"walker\" means "
               "the transformation's graph walker handles the op itself.\n\n"
               "| op | jax | class | dtypes | jvp | transpose | batching | OpenCL |\n"
               "|---|---|---|---|---|---|---|---|\n";
  for (const PrimitiveSummary& s : ops)
    std::cout << "| `" << s.name << "` | "
              << (s.jax_names.empty() ? "-" : "`" + join(s.jax_names, "`, `") + "`") << " | "
              << s.op_class << " | " << dtypes_text(s.dtypes) << " | " << rule_word(s.jvp) << " | "
              << rule_word(s.transpose) << " | " << rule_word(s.batching) << " | "
              << cell(opencl::lowering_status(s.kind)) << " |\n";
  std::cout << "\n## Refusals\n\n";
  for (const PrimitiveSummary& s : ops) {
    const std::pair<const char*, const RuleSummary*> rules[] = {
        {"jvp", &s.jvp}, {"transpose", &s.transpose}, {"batching", &s.batching}};
    for (const auto& [what, rule] : rules)
      if (rule->state == RuleSummary::State::refused)
        std::cout << "- `" << s.name << "` " << what << ": " << rule->refusal << "\n";
  }
}

}  // namespace

CLI::App* add_ops_command(CLI::App& app, OpsOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "ops", "List every primitive: JAX names, dtypes, transformation rules, OpenCL lowering.");
  cmd->add_option("names", options.names,
                  "Show only these primitives (weft's or JAX's names), with their refusals.");
  auto* json = cmd->add_flag("--json", options.json, "Print one JSON array instead of text.");
  cmd->add_flag("--markdown", options.markdown, "Print the docs/primitives.md page.")
      ->excludes(json);
  return cmd;
}

int run_ops(const OpsOptions& options) {
  const std::vector<PrimitiveSummary> ops = selected(options);
  if (options.json)
    print_json(ops);
  else if (options.markdown)
    print_markdown(ops);
  else if (!options.names.empty())
    print_details(ops);
  else
    print_table(ops);
  return kExitOk;
}

}  // namespace weft::cli
