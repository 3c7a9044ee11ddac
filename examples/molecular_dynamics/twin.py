#!/usr/bin/env python3
"""JAX twin of examples/molecular_dynamics: Lennard-Jones particles with cell lists, in f64.

Particles in a periodic cubic box; each step bins them into cells no smaller than the cutoff,
sorts them by cell (argsort), counts each cell's occupants (scatter-add), finds each cell's
first particle (searchsorted), and computes each particle's force from the particles in its 27
neighbouring cells (up to a fixed occupancy per cell), with minimum-image distances and a
truncated Lennard-Jones potential. Velocity Verlet steps advance the system (jax.lax.fori_loop).
Writes oracle_small.json beside this file; `--size full` prints the full-size figures instead.

    python3 examples/molecular_dynamics/twin.py [--size small|full]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_io  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

SIZES = {"small": dict(cells=3, per_cell=4, occupancy=16, steps=4),
         "full": dict(cells=10, per_cell=4, occupancy=16, steps=10)}
CUTOFF, DT, SPACING = 2.5, 0.002, 1.6  # reduced units; SPACING: lattice step (density ~0.24)


def lattice(key, cells, per_cell):
    """A jittered simple-cubic lattice filling `cells`^3 cells of side CUTOFF."""
    box = cells * CUTOFF
    side = int(round((cells**3 * per_cell) ** (1 / 3)))
    grid = jnp.stack(jnp.meshgrid(*[jnp.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)
    step = box / side
    k_jitter, k_vel = jax.random.split(key)
    positions = (grid + 0.5) * step + jax.random.uniform(k_jitter, grid.shape, jnp.float64, -0.1, 0.1)
    velocities = jax.random.normal(k_vel, grid.shape, jnp.float64) * 0.5
    return positions % box, velocities - velocities.mean(0), box


def forces(positions, box, cells, occupancy):
    n = positions.shape[0]
    cell_size = box / cells
    coords = jnp.floor(positions / cell_size).astype(jnp.int32) % cells
    cell = (coords[:, 0] * cells + coords[:, 1]) * cells + coords[:, 2]
    order = jnp.argsort(cell, stable=True)
    sorted_cells = cell[order]
    count = jnp.zeros((cells**3,), jnp.int32).at[cell].add(1)
    first = jnp.searchsorted(sorted_cells, jnp.arange(cells**3), side="left")
    offsets = jnp.stack(jnp.meshgrid(*[jnp.arange(-1, 2)] * 3, indexing="ij"), -1).reshape(-1, 3)
    neighbour_coords = (coords[:, None, :] + offsets[None, :, :]) % cells  # [n, 27, 3]
    neighbour = (neighbour_coords[..., 0] * cells + neighbour_coords[..., 1]) * cells + neighbour_coords[..., 2]
    slot = jnp.arange(occupancy)
    index = first[neighbour][..., None] + slot  # [n, 27, occupancy]
    valid = slot < count[neighbour][..., None]
    j = order[jnp.clip(index, 0, n - 1)]
    valid = valid & (j != jnp.arange(n)[:, None, None])
    d = positions[:, None, None, :] - positions[j]
    d = d - box * jnp.round(d / box)  # minimum image
    r2 = jnp.sum(d * d, axis=-1)
    inside = valid & (r2 < CUTOFF**2)
    r2 = jnp.where(inside, r2, 1.0)
    inv6 = 1.0 / r2**3
    magnitude = jnp.where(inside, 24.0 * inv6 * (2.0 * inv6 - 1.0) / r2, 0.0)
    energy = 0.5 * jnp.sum(jnp.where(inside, 4.0 * inv6 * (inv6 - 1.0), 0.0))
    return jnp.sum(magnitude[..., None] * d, axis=(1, 2)), energy


def simulate(positions, velocities, box, cells, occupancy, steps):
    f, _ = forces(positions, box, cells, occupancy)

    def step(_, state):
        x, v, f = state
        v = v + 0.5 * DT * f
        x = (x + DT * v) % box
        f, _ = forces(x, box, cells, occupancy)
        return x, v + 0.5 * DT * f, f

    x, v, f = lax.fori_loop(0, steps, step, (positions, velocities, f))
    _, potential = forces(x, box, cells, occupancy)
    return x, v, potential, 0.5 * jnp.sum(v * v)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    s = SIZES[args.size]
    positions, velocities, box = lattice(jax.random.key(5), s["cells"], s["per_cell"])
    run = jax.jit(simulate, static_argnums=(2, 3, 4, 5))
    jax.block_until_ready((positions, velocities))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    out = run(positions, velocities, float(box), s["cells"], s["occupancy"], s["steps"])
    jax.block_until_ready(out)
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(5):
            start = time.perf_counter()
            jax.block_until_ready(run(positions, velocities, float(box), s["cells"], s["occupancy"], s["steps"]))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"molecular_dynamics full ({positions.shape[0]} particles): first call {first * 1e3:.1f} ms, "
              f"{s['steps']} steps median {times[len(times) // 2] * 1e3:.3f} ms, energy "
              f"{float(out[2] + out[3]):.6f}")
        return
    f0, e0 = forces(positions, float(box), s["cells"], s["occupancy"])
    x, v, potential, kinetic = out
    oracle_io.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"),
                    dict(s, box=float(box)), {"positions": positions, "velocities": velocities}, {},
                    {"forces": f0, "potential0": e0, "positions": x, "velocities": v,
                     "potential": potential, "kinetic": kinetic})


if __name__ == "__main__":
    main()
