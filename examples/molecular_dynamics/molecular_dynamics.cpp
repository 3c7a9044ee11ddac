// Lennard-Jones particles with cell lists, in f64, with its JAX twin (twin.py beside this file):
// each step bins the particles into cells no smaller than the cutoff, sorts them by cell
// (argsort), counts each cell's occupants (scatter-add), finds each cell's first particle
// (searchsorted), and sums each particle's force over the particles of its 27 neighbouring cells
// (up to a fixed occupancy per cell: gathers), with minimum-image distances and a truncated
// Lennard-Jones potential. Velocity Verlet steps advance the system (lax::fori_loop).
//
//   example_molecular_dynamics [--size small|full] [--check
//   examples/molecular_dynamics/oracle_small.json]
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "support/example.h"
#include "weft/random.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::DType;
namespace np = weft::np;
namespace lax = weft::lax;
namespace random = weft::random;

constexpr double kCutoff = 2.5, kDt = 0.002;

struct Sizes {
  std::int64_t cells, per_cell, occupancy, steps;
};

// Column `c` of an [n, 3] (or [..., 3]) array.
Array column(const Array& x, std::int64_t c) {
  std::vector<std::int64_t> start(x.ndim(), 0), limit(x.shape().begin(), x.shape().end());
  start.back() = c;
  limit.back() = c + 1;
  weft::Shape shape(x.shape().begin(), x.shape().end() - 1);
  return lax::reshape(lax::slice(x, start, limit), shape);
}

Array flat_cell(const Array& coords, std::int64_t cells) {
  return (column(coords, 0) * static_cast<int>(cells) + column(coords, 1)) *
             static_cast<int>(cells) +
         column(coords, 2);
}

// The 27 offsets (-1, 0, 1)^3 in meshgrid's "ij" order, [27, 3].
Array neighbour_offsets() {
  std::vector<std::int32_t> values;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      for (int c = -1; c <= 1; ++c) values.insert(values.end(), {a, b, c});
  return Array::from_vector<std::int32_t>({27, 3}, values);
}

struct ForcesOut {
  Array forces, energy;
};

ForcesOut forces(const Array& positions, double box, std::int64_t cells, std::int64_t occupancy) {
  const std::int64_t n = positions.shape()[0], num_cells = cells * cells * cells;
  const int cells_i = static_cast<int>(cells);
  const double cell_size = box / static_cast<double>(cells);
  const Array coords = np::astype(np::floor(positions / cell_size), DType::I32) % cells_i;
  const Array cell = flat_cell(coords, cells);  // [n]
  const Array order = np::argsort(cell);        // stable
  const Array sorted_cells = np::take(cell, order);
  const Array count =
      np::at(np::zeros({num_cells}, DType::I32), cell).add(np::ones({n}, DType::I32));
  const Array first = np::searchsorted(sorted_cells, np::arange(num_cells));
  const Array neighbour_coords =
      (np::reshape(coords, {n, 1, 3}) + np::reshape(neighbour_offsets(), {1, 27, 3})) % cells_i;
  const Array neighbour = flat_cell(neighbour_coords, cells);  // [n, 27]
  const Array slot = np::arange(occupancy);
  const Array index = np::reshape(np::take(first, neighbour, 0), {n, 27, 1}) + slot;
  Array valid = slot < np::reshape(np::take(count, neighbour, 0), {n, 27, 1});
  const Array j = np::take(order, np::clip(index, 0, static_cast<int>(n - 1)), 0);
  valid = valid & (j != np::reshape(np::arange(n), {n, 1, 1}));
  Array d = np::reshape(positions, {n, 1, 1, 3}) - np::take(positions, j, 0);
  d = d - box * np::round(d / box);  // minimum image
  Array r2 = np::sum(d * d, {-1});
  const Array inside = valid & (r2 < kCutoff * kCutoff);
  r2 = np::where(inside, r2, 1.0);
  const Array inv6 = 1.0 / np::power(r2, 3);
  const Array magnitude = np::where(inside, 24.0 * inv6 * (2.0 * inv6 - 1.0) / r2, 0.0);
  const Array energy = 0.5 * np::sum(np::where(inside, 4.0 * inv6 * (inv6 - 1.0), 0.0));
  return {np::sum(np::reshape(magnitude, {n, 27, occupancy, 1}) * d, {1, 2}), energy};
}

// (positions, velocities) -> (positions, velocities, potential, kinetic) after `steps` steps.
std::vector<Array> simulate(const Array& positions, const Array& velocities, double box,
                            const Sizes& s) {
  const Array f = forces(positions, box, s.cells, s.occupancy).forces;
  const std::vector<Array> out = lax::fori_loop(
      0, static_cast<int>(s.steps),
      [&](const Array&, const std::vector<Array>& state) {
        const Array v = state[1] + 0.5 * kDt * state[2];
        const Array x = (state[0] + kDt * v) % box;
        const Array f = forces(x, box, s.cells, s.occupancy).forces;
        return std::vector<Array>{x, v + 0.5 * kDt * f, f};
      },
      std::vector<Array>{positions, velocities, f});
  const Array potential = forces(out[0], box, s.cells, s.occupancy).energy;
  return {out[0], out[1], potential, 0.5 * np::sum(out[1] * out[1])};
}

// The twin's jittered lattice, for the full-size timing only: weft::random has no f64 normal
// yet, so the jitter and velocities are drawn in f32 and widened (the same distribution, not the
// twin's values; the small size loads the twin's inputs instead).
std::pair<Array, Array> lattice(const Sizes& s, double box) {
  const std::int64_t side =
      std::llround(std::cbrt(double(s.cells * s.cells * s.cells * s.per_cell)));
  const weft::Shape shape{side * side * side, 3};
  std::vector<double> cells;  // meshgrid(arange(side) x 3, indexing="ij"), [side^3, 3]
  for (std::int64_t i = 0; i < side; ++i)
    for (std::int64_t j = 0; j < side; ++j)
      for (std::int64_t k = 0; k < side; ++k)
        cells.insert(cells.end(), {double(i), double(j), double(k)});
  const Array grid = Array::from_vector<double>(shape, cells);
  const auto [k_jitter, k_vel] = random::split2(random::key(5));
  const Array jitter = random::uniform(k_jitter, shape, DType::F64, -0.1, 0.1);
  const Array velocities = np::astype(random::normal(k_vel, shape), DType::F64) * 0.5;
  const Array positions = ((grid + 0.5) * (box / double(side)) + jitter) % box;
  return {positions, velocities - np::mean(velocities, {0})};
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options = ex::parse_options(
      argc, argv, "Lennard-Jones particles with cell lists, in f64 (examples/README.md).");
  const Sizes s = options.size == "small" ? Sizes{3, 4, 16, 4} : Sizes{10, 4, 16, 10};
  const double box = static_cast<double>(s.cells) * kCutoff;
  try {
    auto run = weft::jit([&](const std::vector<Array>& a) { return simulate(a[0], a[1], box, s); });
    if (options.size == "full") {
      const auto [positions, velocities] = lattice(s, box);
      ex::time_step(
          "molecular_dynamics", {positions, velocities},
          [&] {
            run(std::vector<Array>{positions, velocities}).front().to_host();
          },
          options.repeats);
      return 0;
    }
    if (options.check.empty()) {
      std::fprintf(stderr,
                   "example_molecular_dynamics: the small size needs --check ORACLE.json "
                   "(its inputs come from the twin)\n");
      return 2;
    }
    // weft::random has no f64 normal yet, so the small size takes the twin's initial positions
    // and velocities from the oracle's "inputs" instead of regenerating them.
    const ex::Oracle oracle = ex::load_oracle(options.check);
    const Array positions = Array::from_host(oracle.inputs.at("positions"));
    const Array velocities = Array::from_host(oracle.inputs.at("velocities"));
    const std::vector<Array> out = run(std::vector<Array>{positions, velocities});
    // The initial forces and energy, traced too (eagerly each op would be a program to build).
    const std::vector<Array> initial = weft::jit([box, &s](const std::vector<Array>& a) {
      const ForcesOut f = forces(a[0], box, s.cells, s.occupancy);
      return std::vector<Array>{f.forces, f.energy};
    })(std::vector<Array>{positions});
    std::printf("molecular_dynamics small: potential %.9f kinetic %.9f\n",
                out[2].to_host().get_f64(0), out[3].to_host().get_f64(0));
    ex::Checker check;
    check.expect("forces", initial[0], oracle.expected.at("forces"));
    check.expect("potential0", initial[1], oracle.expected.at("potential0"));
    check.expect("positions", out[0], oracle.expected.at("positions"));
    check.expect("velocities", out[1], oracle.expected.at("velocities"));
    check.expect("potential", out[2], oracle.expected.at("potential"));
    check.expect("kinetic", out[3], oracle.expected.at("kinetic"));
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_molecular_dynamics: %s\n", e.what());
    return 1;
  }
}
