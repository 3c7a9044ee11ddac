// The order of the timeline's rows: host threads (where work starts), then device queues, the
// runtime threads, the callback threads and the cache writer; within a group by device, then
// by name with numbers compared as numbers ("thread 2" before "thread 10").
#pragma once

#include <string_view>

#include "weft/telemetry/record.h"

namespace weft::monitor {

// Negative, zero or positive like strcmp, with digit runs compared by value.
int natural_compare(std::string_view a, std::string_view b);

// The group a row of this kind is shown in; lower groups come first.
int track_group(telemetry::TrackKind kind);

// Strict weak order of rows.
bool track_before(const telemetry::Track& a, const telemetry::Track& b);

}  // namespace weft::monitor
