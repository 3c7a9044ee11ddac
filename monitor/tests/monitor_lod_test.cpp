// Level of detail: at every zoom, what the timeline draws for a lane (spans one by one, or
// merged per pixel column) covers exactly the spans a brute-force scan finds visible, stays
// within a few items per pixel, and hit testing finds the span under the cursor. Also the
// ruler's time formatting.
#include <QTemporaryDir>
#include <QtTest>
#include <random>
#include <set>

#include "support/document_loading.h"
#include "support/synthetic_trace.h"
#include "time_format.h"
#include "timeline_lod.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

namespace {

std::set<std::size_t> brute_force_visible(const TimelineLane& lane, std::int64_t t0,
                                          std::int64_t t1) {
  std::set<std::size_t> visible;
  for (std::size_t p = 0; p < lane.size(); ++p)
    if (lane.end[p] >= t0 && lane.start[p] <= t1) visible.insert(p);
  return visible;
}

// Checks lod_items for one lane and window against the brute force; returns the item count.
std::size_t check_window(const TimelineLane& lane, const ViewWindow& view) {
  std::vector<LodItem> items;
  lod_items(lane, view, items);
  std::set<std::size_t> covered;
  double last_x = -1e300;
  for (const LodItem& item : items) {
    if (item.type == LodItem::Type::span) {
      if (item.x1 - item.x0 < 1.0)
        QTest::qFail("a span item narrower than a pixel", __FILE__, __LINE__);
    } else {
      // Every span of a block starts in its pixel column (or before the window, for column 0).
      for (std::size_t p = item.first; p < item.first + item.count; ++p) {
        const double x = view.x_of(lane.start[p]);
        if (!(x < item.x0 + 1 + 1e-6 && (x >= item.x0 - 1e-6 || item.x0 == 0)))
          QTest::qFail("a block holds a span starting outside its column", __FILE__, __LINE__);
      }
    }
    if (item.x0 + 1e-9 < last_x && item.type == LodItem::Type::block)
      QTest::qFail("blocks out of order", __FILE__, __LINE__);
    last_x = item.x0;
    for (std::size_t p = item.first; p < item.first + item.count; ++p)
      if (!covered.insert(p).second) QTest::qFail("a span drawn twice", __FILE__, __LINE__);
  }
  const std::set<std::size_t> expected = brute_force_visible(lane, view.start_ns, view.end_ns());
  if (covered != expected) {
    QTest::qFail(
        qPrintable(QStringLiteral(
                       "LOD covers %1 spans, brute force finds %2 (window %3 + %4 px at %5 ns/px)")
                       .arg(covered.size())
                       .arg(expected.size())
                       .arg(view.start_ns)
                       .arg(view.width_px)
                       .arg(view.ns_per_px)),
        __FILE__, __LINE__);
  }
  const std::vector<std::size_t> positions = visible_positions(lane, view.start_ns, view.end_ns());
  const std::set<std::size_t> listed(positions.begin(), positions.end());
  if (listed != expected)
    QTest::qFail("visible_positions disagrees with brute force", __FILE__, __LINE__);
  return items.size();
}

}  // namespace

class LodTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void randomNestedLanesAtManyZooms() {
    // Bursts of tiny spans, long spans and nested children on one row.
    std::mt19937_64 random(1234);
    std::vector<weft::telemetry::Span> spans;
    const auto track = host_track("main (thread 1)");
    std::int64_t t = 0;
    for (int i = 0; i < 20000; ++i) {
      weft::telemetry::Span span;
      span.id = spans.size() + 1;
      span.track = track;
      const int shape = static_cast<int>(random() % 10);
      const std::int64_t length = shape < 7   ? 1 + static_cast<std::int64_t>(random() % 50)
                                  : shape < 9 ? 1000 + static_cast<std::int64_t>(random() % 100000)
                                              : 0;
      span.start_ns = t;
      span.end_ns = t + length;
      spans.push_back(span);
      if (length > 100 && random() % 2 == 0) {
        weft::telemetry::Span child = span;
        child.id = spans.size() + 1;
        child.start_ns = span.start_ns + length / 4;
        child.end_ns = span.start_ns + length / 2;
        spans.push_back(child);
      }
      t += length + static_cast<std::int64_t>(random() % 300);
    }
    TimelineIndex index;
    index.build(spans);
    QCOMPARE(index.rows().size(), std::size_t{1});
    QVERIFY(index.rows()[0].lanes.size() >= 2);
    const std::int64_t total = index.end_ns() - index.start_ns();
    for (const TimelineLane& lane : index.rows()[0].lanes) {
      for (double fraction : {1.2, 1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-6}) {
        for (int width : {1, 7, 800, 1920}) {
          for (int offset = 0; offset < 4; ++offset) {
            const double visible = std::max(1.0, static_cast<double>(total) * fraction);
            ViewWindow view;
            view.width_px = width;
            view.ns_per_px = visible / width;
            view.start_ns =
                index.start_ns() - static_cast<std::int64_t>(visible * 0.1) +
                static_cast<std::int64_t>(static_cast<double>(random() % 1000) / 1000 * total);
            if (offset == 0) view.start_ns = index.start_ns() - 5;
            const std::size_t items = check_window(lane, view);
            // Blocks: one per column at most; spans: wide ones, so at most one per pixel too.
            QVERIFY2(items <= static_cast<std::size_t>(2 * width + 4),
                     qPrintable(QStringLiteral("%1 items for %2 px").arg(items).arg(width)));
          }
        }
      }
    }
  }

  void largeTraceFromFile() {
    QTemporaryDir dir;
    const std::filesystem::path path =
        dir.filePath(QStringLiteral("large.wefttrace")).toStdString();
    write_large_trace(path, 120000);
    auto document = load_document(path);
    QCOMPARE(document->spans().size(), std::size_t{120000});
    const TimelineIndex& index = document->timeline();
    QCOMPARE(index.rows().size(), std::size_t{8 + 4 + 4 + 2});
    const std::int64_t total = index.end_ns() - index.start_ns();
    for (const TimelineRow& row : index.rows()) {
      for (const TimelineLane& lane : row.lanes) {
        for (double fraction : {1.0, 0.05, 0.001}) {
          ViewWindow view{index.start_ns() + static_cast<std::int64_t>(total * (1 - fraction) / 2),
                          static_cast<double>(total) * fraction / 1400, 1400};
          QVERIFY(check_window(lane, view) <= 2 * 1400 + 4);
        }
      }
    }
  }

  void crowdedLaneStillFindsEverything() {
    // Deeper nesting than kMaxLanes: the last lane overlaps, the prefix maximum keeps the
    // search exact.
    std::vector<weft::telemetry::Span> spans;
    for (int depth = 0; depth < TimelineIndex::kMaxLanes + 6; ++depth) {
      weft::telemetry::Span span;
      span.id = static_cast<weft::telemetry::Id>(depth + 1);
      span.track = host_track("deep");
      span.start_ns = depth * 10;
      span.end_ns = 10000 - depth * 10;
      spans.push_back(span);
    }
    TimelineIndex index;
    index.build(spans);
    const auto& lanes = index.rows()[0].lanes;
    QCOMPARE(lanes.size(), static_cast<std::size_t>(TimelineIndex::kMaxLanes));
    const TimelineLane& crowded = lanes.back();
    QCOMPARE(crowded.size(), std::size_t{7});
    for (std::int64_t t0 : {0, 500, 9900, 9960}) {
      const auto found = visible_positions(crowded, t0, t0 + 20);
      const auto expected = brute_force_visible(crowded, t0, t0 + 20);
      QCOMPARE(std::set<std::size_t>(found.begin(), found.end()), expected);
    }
  }

  void hitTestingFindsTheSpanUnderTheCursor() {
    std::vector<weft::telemetry::Span> spans;
    for (int i = 0; i < 100; ++i) {
      weft::telemetry::Span span;
      span.id = static_cast<weft::telemetry::Id>(i + 1);
      span.track = host_track("row");
      span.start_ns = i * 100;
      span.end_ns = i * 100 + 50;
      spans.push_back(span);
    }
    TimelineIndex index;
    index.build(spans);
    const TimelineLane& lane = index.rows()[0].lanes[0];
    QCOMPARE(span_at(lane, 1025, 0).value(), std::size_t{10});
    QCOMPARE(span_at(lane, 1060, 0).has_value(), false);
    QCOMPARE(span_at(lane, 1060, 20).value(), std::size_t{10});
    QCOMPARE(span_at(lane, 1090, 20).value(), std::size_t{11});
    QCOMPARE(span_at(lane, -500, 10).has_value(), false);
    // Crowded (zoomed far out): still the nearest span.
    QCOMPARE(span_at(lane, 5020, 100000).value(), std::size_t{50});
  }

  void timesReadWell() {
    QCOMPARE(format_duration(830), std::string("830 ns"));
    QCOMPARE(format_duration(12500), std::string("12.5 µs"));
    QCOMPARE(format_duration(1250000), std::string("1.25 ms"));
    QCOMPARE(format_duration(2400000000), std::string("2.4 s"));
    QCOMPARE(format_duration(0), std::string("0 ns"));
    QCOMPARE(format_tick(1500000, 500000), std::string("1.5 ms"));
    QCOMPARE(format_tick(1000000, 200000), std::string("1 ms"));
    QCOMPARE(format_tick(1400200000, 200000), std::string("1.4002 s"));
    QCOMPARE(format_tick(0, 100), std::string("0"));
    QCOMPARE(nice_tick_step(130), std::int64_t{200});
    QCOMPARE(nice_tick_step(4000), std::int64_t{5000});
    QCOMPARE(nice_tick_step(0.5), std::int64_t{1});
    QCOMPARE(parse_time_input("1.5ms").ns.value(), std::int64_t{1500000});
    QCOMPARE(parse_time_input(" 250 us ").ns.value(), std::int64_t{250000});
    QCOMPARE(parse_time_input("250 µs").ns.value(), std::int64_t{250000});
    QCOMPARE(parse_time_input("2s").ns.value(), std::int64_t{2000000000});
    QCOMPARE(parse_time_input("300ns").ns.value(), std::int64_t{300});
    for (const char* wrong : {"soon", "5 parsecs", "", "300"}) {
      const TimeInput input = parse_time_input(wrong);
      QVERIFY2(!input.ns && !input.problem.empty(), wrong);
    }
  }
};

QTEST_MAIN(LodTest)
#include "monitor_lod_test.moc"
