"""Which workgroups a sampled run emulates (``--workgroups K``), and which part of C each one owns.

A launch at the size a kernel was written for (N = 4096: 1,024 workgroups, each 512 tile iterations
deep) is too long to emulate whole. A sample keeps the full depth of every workgroup it runs (the
whole K loop) and picks the workgroups where index arithmetic goes wrong first: the four corners of
the grid (the ends of both diagonals, where the first and the last rows and columns of C are), the
far corner of a 3-D grid, the centre, then seeded random ones.
"""
from __future__ import annotations

import random

Workgroup = tuple[int, int, int]


def sample_workgroups(grid: tuple[int, int, int], count: int, seed: int = 0) -> tuple[Workgroup, ...] | None:
    """``count`` distinct workgroups of ``grid`` (None: the whole grid, when it has no more)."""
    gx, gy, gz = grid
    if count < 1:
        raise ValueError(f"--workgroups {count}: at least 1")
    if count >= gx * gy * gz:
        return None
    picks: list[Workgroup] = []

    def add(w: Workgroup) -> None:
        if w not in picks and len(picks) < count:
            picks.append(w)

    for w in ((0, 0, 0), (gx - 1, 0, 0), (0, gy - 1, 0), (gx - 1, gy - 1, 0), (gx - 1, gy - 1, gz - 1),
              (gx // 2, gy // 2, gz // 2)):
        add(w)
    rng = random.Random(seed)
    while len(picks) < count:
        add((rng.randrange(gx), rng.randrange(gy), rng.randrange(gz)))
    return tuple(picks)


def describe(workgroups, grid) -> str:
    """'8 of 1024 workgroups: (0,0) (31,0) ...' (z shown only for a 3-D grid)."""
    total = grid[0] * grid[1] * grid[2]
    if workgroups is None:
        return f"all {total} workgroups"
    shown = " ".join(f"({x},{y})" if grid[2] == 1 else f"({x},{y},{z})" for x, y, z in workgroups)
    return f"{len(workgroups)} of {total} workgroups: {shown}"


def gemm_tiles(n: int, grid: tuple[int, int, int], workgroups) -> list[tuple[int, int, int, int]]:
    """The block of C each workgroup computes, (row0, row1, col0, col1): workgroup (x, y) owns rows
    y*N/gy to (y+1)*N/gy and columns x*N/gx to (x+1)*N/gx, the convention of every GEMM launch here
    (one workgroup per tile of C). ValueError when the grid does not tile C."""
    gx, gy, gz = grid
    if gz != 1 or n % gx or n % gy:
        raise ValueError(f"a grid of {gx}x{gy}x{gz} does not cut an {n} x {n} C into one tile per workgroup")
    th, tw = n // gy, n // gx
    return [(y * th, (y + 1) * th, x * tw, (x + 1) * tw) for x, y, _ in workgroups]
