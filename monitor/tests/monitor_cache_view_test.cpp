// The cache view against a real ProgramStore database: its entries table holds what the
// database lists, the lookup counts are the trace's, a remembered miss is explained exactly as
// `weft cache explain` prints it, and a forgotten miss or a missing database says so.
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "cache_database.h"
#include "cache_entries_model.h"
#include "cache_lookup_model.h"
#include "cache_view.h"
#include "support/document_loading.h"
#include "support/synthetic_trace.h"
#include "weft/cache/explain.h"
#include "weft/cache/store.h"

using namespace weft;
using namespace weft::monitor;
using namespace weft::monitor::testing;

namespace {

cache::CacheKeyComponents components(const std::string& ir, const std::string& function) {
  cache::CacheKeyComponents c;
  c.ir_text = ir;
  c.weft_version = "0.1.0";
  c.build_options = "-cl-std=CL1.2";
  c.platform_name = "Portable Computing Language";
  c.platform_version = "OpenCL 3.0 PoCL 3.1";
  c.device_name = "cpu-haswell";
  c.driver_version = "3.1";
  c.opencl_c_version = "OpenCL C 1.2 PoCL";
  c.function_name = function;
  return c;
}

std::vector<std::uint8_t> binary(int seed) {
  std::vector<std::uint8_t> bytes(4096);
  std::mt19937 random(static_cast<unsigned>(seed));
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = i % 3 == 0 ? static_cast<std::uint8_t>(random()) : 7;
  return bytes;
}

cache::StoreOptions writer_options(const std::filesystem::path& directory) {
  cache::StoreOptions options;
  options.directory = directory;
  options.key = std::vector<std::uint8_t>(32, 0x5a);
  options.min_compile_time_s = 0;
  return options;
}

}  // namespace

class CacheViewTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::filesystem::path cache_dir_;
  std::filesystem::path trace_path_;
  std::vector<std::string> stored_keys_;
  std::string missed_key_;     // missed, and the database remembers it
  std::string forgotten_key_;  // "missed" only in the trace

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    cache_dir_ = dir_.filePath(QStringLiteral("cache")).toStdString();
    // As in a recording process: the trace records this process's cache directory.
    qputenv("WEFT_CACHE_DIR", QByteArray::fromStdString(cache_dir_.string()));
    {
      cache::ProgramStore store(writer_options(cache_dir_));
      const char* functions[] = {"mlp", "softmax", "layernorm"};
      for (int i = 0; i < 3; ++i) {
        const auto c = components("graph " + std::to_string(i), functions[i]);
        QCOMPARE(store.insert(c, binary(i), "{}", 0.5).status, cache::InsertStatus::written);
        stored_keys_.push_back(cache::compute_key(c));
      }
      // Two hits on the first entry, and a miss the database remembers.
      QVERIFY(store.lookup(components("graph 0", "mlp")).hit());
      QVERIFY(store.lookup(components("graph 0", "mlp")).hit());
      const auto missing = components("graph 0 with new shapes", "mlp");
      QVERIFY(!store.lookup(missing).hit());
      missed_key_ = cache::compute_key(missing);
      store.flush();
    }
    forgotten_key_ = std::string(32, 'e');

    // The trace: three hits, two misses (one remembered, one not).
    TraceBuilder b;
    const Track main = host_track("main (thread 1)");
    auto lookup = [&](std::int64_t at, const std::string& key, const std::string& status) {
      b.add(weft::telemetry::SpanKind::cache_lookup, main, "mlp", at, at + 1000,
            {{"key", key},
             {"status", status},
             {"reason", status == "hit" ? "none" : "not_found"},
             {"device", "cpu:0"}});
    };
    lookup(0, stored_keys_[0], "hit");
    lookup(10'000, stored_keys_[1], "hit");
    lookup(20'000, missed_key_, "miss");
    lookup(30'000, stored_keys_[2], "hit");
    lookup(40'000, forgotten_key_, "miss");
    trace_path_ = dir_.filePath(QStringLiteral("cache.wefttrace")).toStdString();
    b.write(trace_path_);
  }

  void entriesEqualTheDatabase() {
    auto document = load_document(trace_path_);
    QCOMPARE(document->trace().meta.at("cache_dir"), cache_dir_.string());
    CacheView view(document.get());
    QVERIFY2(view.database().isOpen(), view.database().error().c_str());
    QVERIFY(view.databaseText().contains(QStringLiteral("the trace's cache_dir")));
    cache::StoreOptions reader;
    reader.directory = cache_dir_;
    reader.writer = false;
    cache::ProgramStore store(reader);
    const std::vector<cache::EntryInfo> listed = store.list();
    CacheEntriesModel* entries = view.entries();
    QCOMPARE(entries->rowCount(), static_cast<int>(listed.size()));
    QCOMPARE(entries->rowCount(), 3);
    std::uint64_t hits = 0;
    for (int row = 0; row < entries->rowCount(); ++row) {
      const auto& entry = listed[static_cast<std::size_t>(row)];
      QCOMPARE(entries->index(row, CacheEntriesModel::KeyColumn).data().toString().toStdString(),
               entry.key);
      QCOMPARE(
          entries->index(row, CacheEntriesModel::FunctionColumn).data().toString().toStdString(),
          entry.components.function_name);
      QCOMPARE(entries->index(row, CacheEntriesModel::DeviceColumn).data().toString(),
               QStringLiteral("cpu-haswell"));
      QCOMPARE(entries->index(row, CacheEntriesModel::HitsColumn).data().toULongLong(),
               entry.hit_count);
      QCOMPARE(entries->index(row, CacheEntriesModel::CompileTimeColumn)
                   .data(CacheEntriesModel::SortRole)
                   .toDouble(),
               entry.compile_time_s);
      QCOMPARE(entries->index(row, CacheEntriesModel::SizeColumn)
                   .data(CacheEntriesModel::SortRole)
                   .toULongLong(),
               entry.compressed_size);
      QVERIFY(std::find(stored_keys_.begin(), stored_keys_.end(), entry.key) != stored_keys_.end());
      hits += entry.hit_count;
    }
    QCOMPARE(hits, std::uint64_t{2});
  }

  void lookupCountsAreTheTraces() {
    auto document = load_document(trace_path_);
    CacheView view(document.get());
    QCOMPARE(view.lookups()->rowCount(), 5);
    const CacheLookupHistogram histogram = view.lookups()->histogram(CacheView::kBuckets);
    QCOMPARE(histogram.totals.at("hit"), std::size_t{3});
    QCOMPARE(histogram.totals.at("miss"), std::size_t{2});
    std::size_t sum = 0;
    for (const auto& bucket : histogram.counts)
      for (std::size_t count : bucket) sum += count;
    QCOMPARE(sum, std::size_t{5});
    QCOMPARE(histogram.counts.size(), static_cast<std::size_t>(CacheView::kBuckets));
    // The first lookup in the first bucket, the last in the last.
    QCOMPARE(histogram.counts.front()[0], std::size_t{1});
    QCOMPARE(histogram.counts.back()[1], std::size_t{1});
    view.resize(1200, 800);
    const QImage painted = view.grab().toImage();  // the chart and tables paint
    QVERIFY(!painted.isNull());
    const QString counts = view.countsText();
    QVERIFY2(counts.contains(QStringLiteral("5 cache lookups")), qPrintable(counts));
    QVERIFY2(counts.contains(QStringLiteral("3 hit")), qPrintable(counts));
    QVERIFY2(counts.contains(QStringLiteral("2 miss")), qPrintable(counts));
  }

  void missesAreExplainedLikeTheCli() {
    auto document = load_document(trace_path_);
    CacheView view(document.get());
    cache::StoreOptions reader;
    reader.directory = cache_dir_;
    reader.writer = false;
    cache::ProgramStore store(reader);
    const auto explanation = cache::explain_miss(store, missed_key_);
    QVERIFY(explanation.has_value());
    const std::string expected = cache::format_explanation(*explanation);

    view.explainLookup(2);  // the remembered miss
    QCOMPARE(view.explanationText().toStdString(), expected);
    QVERIFY(view.explanationText().contains(QStringLiteral("not_found")));

    view.explainLookup(4);  // a miss the database does not remember
    QVERIFY2(view.explanationText().contains(QStringLiteral("no longer remembers")),
             qPrintable(view.explanationText()));

    view.explainLookup(0);
    QVERIFY(view.explanationText().startsWith(QStringLiteral("A hit")));
  }

  void aMissingDatabaseIsReportedNotFatal() {
    auto document = load_document(trace_path_);
    CacheView view(document.get());
    view.setCacheDirectory(dir_.filePath(QStringLiteral("nowhere")).toStdString(),
                           QStringLiteral("test"));
    QVERIFY(!view.database().isOpen());
    QVERIFY(view.databaseText().contains(QStringLiteral("No cache database")));
    QCOMPARE(view.entries()->rowCount(), 0);
    view.explainLookup(2);
    QVERIFY(view.explanationText().contains(QStringLiteral("cannot be opened")));
    // A file that is no database at all.
    const std::filesystem::path junk = dir_.filePath(QStringLiteral("junk")).toStdString();
    std::filesystem::create_directories(junk);
    QFile file(QString::fromStdString((junk / "cache.sqlite3").string()));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray(5000, 'x'));
    file.close();
    view.setCacheDirectory(junk, QStringLiteral("test"));
    QVERIFY(!view.database().isOpen() || !view.database().error().empty() ||
            view.entries()->rowCount() == 0);
  }

  void cacheDirectoryResolution() {
    std::string origin;
    QCOMPARE(resolve_cache_directory({{"cache_dir", "/from/trace"}}, &origin),
             std::filesystem::path("/from/trace"));
    QCOMPARE(origin, std::string("the trace's cache_dir"));
    QCOMPARE(resolve_cache_directory({{"cache_dir", ""}}, &origin), cache_dir_);
    QCOMPARE(origin, std::string("WEFT_CACHE_DIR"));
  }
};

QTEST_MAIN(CacheViewTest)
#include "monitor_cache_view_test.moc"
