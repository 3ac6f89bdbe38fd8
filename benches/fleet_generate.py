"""A deterministic fleet of session files of mixed sizes, for the fleet scan benchmark.

    python benches/fleet_generate.py OUT_DIR [--sessions 2000] [--total 2GB] [--seed 0]

Sizes follow what a fleet of agents shows: most sessions are short, a few run for hours. Each
session's size is drawn log-uniformly from one of four bands (60% 20-200 KB, 30% 0.3-3 MB, 9%
3-12 MB, 1% 20-60 MB), then all sizes are scaled so the files add up to about ``--total``.
Generating every file with ``benches/generate.py`` would take long, so the sizes are rounded to
48 log-spaced classes, one session is generated per class (every tenth class with damaged
lines, kept in ``OUT_DIR-pool/``), and each file of the fleet is a copy of its class's
session: real, separate files of the intended sizes, spread over ``agent-NN/`` directories.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benches.generate import format_size, generate_session, parse_size

BANDS = [(0.60, 20_000, 200_000), (0.30, 300_000, 3_000_000), (0.09, 3_000_000, 12_000_000)]
HUGE_BAND = (20_000_000, 60_000_000)
CLASSES = 48
SMALLEST = 20_000


@dataclass(frozen=True)
class Fleet:
    paths: list[Path]
    total_bytes: int
    damaged: int


def _drawn_sizes(sessions: int, total: int, rng: random.Random) -> list[float]:
    sizes = []
    for _ in range(sessions):
        roll, low, high = rng.random(), *HUGE_BAND
        acc = 0.0
        for share, band_low, band_high in BANDS:
            acc += share
            if roll < acc:
                low, high = band_low, band_high
                break
        sizes.append(math.exp(rng.uniform(math.log(low), math.log(high))))
    scale = total / sum(sizes)
    return [max(SMALLEST, s * scale) for s in sizes]


def _size_class(size: float, largest: float) -> int:
    ratio = math.log(size / SMALLEST) / math.log(max(largest, SMALLEST * 2) / SMALLEST)
    return min(CLASSES - 1, max(0, round(ratio * (CLASSES - 1))))


def generate_fleet(
    directory: str | Path, sessions: int, total: int | str, *, seed: int = 0
) -> Fleet:
    """Writes ``sessions`` files adding up to about ``total`` bytes under ``directory``."""
    directory = Path(directory)
    total = parse_size(total) if isinstance(total, str) else int(total)
    rng = random.Random(seed)
    sizes = _drawn_sizes(sessions, total, rng)
    largest = max(sizes)
    classes = [_size_class(s, largest) for s in sizes]
    # The pool lives beside the fleet, so listing the fleet's directory finds only its files.
    pool_dir = directory.with_name(directory.name + "-pool")
    pool_dir.mkdir(parents=True, exist_ok=True)
    pool: dict[int, Path] = {}
    for cls in sorted(set(classes)):
        target = int(SMALLEST * (largest / SMALLEST) ** (cls / (CLASSES - 1)))
        path = pool_dir / f"class-{cls:02d}.jsonl"
        if not path.exists():
            generate_session(path, target, seed=seed * 1000 + cls, damage=cls % 10 == 3)
        pool[cls] = path
    paths = []
    for i, cls in enumerate(classes):
        path = directory / f"agent-{i % 40:02d}" / f"session-{i:05d}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        # A fleet generated before with the same arguments is reused as it is.
        if not (path.exists() and path.stat().st_size == pool[cls].stat().st_size):
            shutil.copyfile(pool[cls], path)
        paths.append(path)
    return Fleet(
        paths=paths,
        total_bytes=sum(p.stat().st_size for p in paths),
        damaged=sum(cls % 10 == 3 for cls in classes),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--total", default="2GB")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    fleet = generate_fleet(args.directory, args.sessions, args.total, seed=args.seed)
    print(
        f"{len(fleet.paths)} sessions, {format_size(fleet.total_bytes)} "
        f"({fleet.damaged} damaged) in {args.directory}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
