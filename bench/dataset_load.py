# ruff: noqa: E402
"""Loading a templated prompt over a dataset: rows → prompts, time and memory.

A suite of one template (a text with two placeholders, a per-row probe whose parameter is
rendered from the row, a suite-wide probe) over a CSV file of N rows, loaded with
``load_suite`` (read, validate, render every row, build its prompt and probe, check ids and
keys). Target: **10,000 rows in ≤ 2 s** here, and memory growing linearly (about the same
bytes per row at every size).

| column | meaning |
|---|---|
| wall s | median wall time of ``load_suite`` over the repeats |
| CPU s | median CPU time of this process over the same calls |
| µs/row | wall / N |
| retained MiB | what the loaded suite holds (tracemalloc: allocated, still alive after the load) |
| KiB/row | retained / N: flat across sizes means linear growth |
| peak MiB | tracemalloc's peak during the load |

    .venv/bin/python bench/dataset_load.py [--sizes 1000,2500,5000,10000] [--repeat 3]
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse
import gc
import tempfile
import time
import tracemalloc

from bench._common import machine_note, median, print_table
from promptcanary.core.config.schema import load_suite

SUITE = """\
name: dataset-bench
probes:
  - type: response_length
    max_chars: 400
prompts:
  - id: route
    text: "Ticket {{ case }} from {{ customer }}: {{ body }}"
    dataset: rows.csv
    row_key: case
    probes:
      - type: keyword_presence
        required_keywords: ["{{ customer }}"]
"""


def _write(folder: Path, rows: int) -> Path:
    lines = ["case,customer,body"]
    lines += [f"c{n:06d},Customer {n},My parcel {n} has not arrived yet." for n in range(rows)]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(SUITE, encoding="utf-8")
    return path


def _measure(path: Path, rows: int, repeat: int) -> list[object]:
    walls, cpus = [], []
    for _ in range(repeat):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        suite = load_suite(path)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        assert len(suite.prompts) == rows
        del suite
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    suite = load_suite(path)
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    retained_mib = (retained - before) / 2**20
    del suite
    wall = median(walls)
    return [
        f"{rows:,}",
        f"{wall:.2f}",
        f"{median(cpus):.2f}",
        f"{wall / rows * 1e6:.0f}",
        f"{retained_mib:.1f}",
        f"{retained_mib * 1024 / rows:.2f}",
        f"{peak / 2**20:.1f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2500,5000,10000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(machine_note())
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (int(s) for s in args.sizes.split(",")):
            folder = Path(tmp) / str(rows)
            folder.mkdir()
            table.append(_measure(_write(folder, rows), rows, args.repeat))
    print_table(
        "load_suite over one template and a CSV dataset",
        ["rows", "wall s", "CPU s", "µs/row", "retained MiB", "KiB/row", "peak MiB"],
        table,
    )


if __name__ == "__main__":
    main()
