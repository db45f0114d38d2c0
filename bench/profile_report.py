"""Top cumulative-time entries of a cProfile dump that live in the exporter package.

python -m cProfile -o bench/results/bert.prof bench/run.py --worker bert ours --reps 0 --ort-runs 1
python bench/profile_report.py bench/results/bert.prof [--top 10] [--all]
"""

from __future__ import annotations

import argparse
import os
import pstats


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("prof")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--all", action="store_true", help="do not restrict to the exporter package")
    opts = p.parse_args()
    stats = pstats.Stats(opts.prof)
    rows = []
    for (filename, line, func), (cc, nc, tt, ct, _callers) in stats.stats.items():
        norm = filename.replace(os.sep, "/")
        if not opts.all and "/exporter/" not in norm:
            continue
        if "/bench/" in norm:
            continue
        short = norm.split("/exporter/", 1)[-1] if "/exporter/" in norm else norm
        rows.append(
            (ct, tt, nc, f"exporter/{short}:{line}({func})" if "/exporter/" in norm else f"{norm}:{line}({func})")
        )
    rows.sort(reverse=True)
    print(f"{'cumulative s':>12} {'own s':>8} {'calls':>9}  function")
    for ct, tt, nc, name in rows[: opts.top]:
        print(f"{ct:12.3f} {tt:8.3f} {nc:9d}  {name}")


if __name__ == "__main__":
    main()
