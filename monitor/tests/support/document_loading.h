// Test helper: a TraceDocument holding a trace read back from a file.
#pragma once

#include <QString>
#include <filesystem>
#include <memory>

#include "trace_document.h"
#include "trace_loading.h"

namespace weft::monitor::testing {

// Reads `path` into a new document; throws std::runtime_error with the reader's message.
inline std::unique_ptr<TraceDocument> load_document(const std::filesystem::path& path) {
  LoadedTrace loaded = load_trace_file(path);
  if (!loaded.trace) throw std::runtime_error(loaded.error);
  auto document = std::make_unique<TraceDocument>();
  document->setTrace(std::move(*loaded.trace), QString::fromStdString(path.string()));
  return document;
}

}  // namespace weft::monitor::testing
