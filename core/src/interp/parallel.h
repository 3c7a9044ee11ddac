// Splitting one large evaluation (a dot's rows) over the machine's cores.
#pragma once

#include <cstdint>
#include <functional>

namespace weft::interp {

// Calls fn(begin, end) on ranges covering [0, count) that start at multiples of `grain`, on up
// to one thread per core (the calling thread takes the first range) when there are `work`
// operations in all and enough of them to pay for starting threads; otherwise fn(0, count)
// here. Each range is computed independently, so results do not depend on the thread count.
// The first exception a range throws is rethrown here once every range has finished.
void parallel_ranges(std::int64_t count, std::int64_t grain, double work,
                     const std::function<void(std::int64_t, std::int64_t)>& fn);

}  // namespace weft::interp
