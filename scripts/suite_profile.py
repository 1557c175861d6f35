"""Where `make test`'s time goes: the suite on two workers, each test's wall time beside its CPU time.

Runs pytest as `make test` does (`-n 2`) with this module as a plugin (`-p suite_profile`), which records for every
test its wall time, the CPU time of the pytest worker (getrusage of itself) and of the processes the test waited for
(getrusage of its children: the commands it ran). A child's CPU counts to the test during which it was reaped, so a
test that reaps what an earlier one started (a Dask cluster) is charged for it; CPU that nothing waited for (the
resident servers, which leave their parent) is in no row. Then prints the whole run's wall and CPU time, and the
files and tests that cost the most CPU, with their running share of the total.
On two cores a run cannot take less than its CPU time over two; `make test`'s target (issue 52: six minutes, install
and lint included) is a budget of CPU seconds.
Usage: python scripts/suite_profile.py [--top 40] [-- PYTEST ARGS]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDS = "SUITE_PROFILE_RECORDS"  # the folder the plugin writes to, one file per pytest worker


def _cpu() -> tuple:
    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, waited.ru_utime + waited.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The plugin: one JSON line per test (setup, call and teardown together)."""
    folder = os.environ.get(RECORDS)
    start, (own, waited) = time.monotonic(), _cpu()
    yield
    if folder:
        now, (own_after, waited_after) = time.monotonic(), _cpu()
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(Path(folder) / f"{worker}.jsonl", "a") as f:
            f.write(json.dumps([item.nodeid, now - start, own_after - own, waited_after - waited]) + "\n")


def report(records: list, wall: float, cpu: float, top: int) -> str:
    """The table: the run, then the files and the tests by CPU (own + waited for), with running shares."""
    tests_wall = sum(r[1] for r in records)
    tests_cpu = sum(r[2] + r[3] for r in records)
    lines = [f"{len(records)} tests; the run: {wall:.0f} s wall, {cpu:.0f} CPU s (on two cores at least "
             f"{cpu / 2:.0f} s wall); inside the tests: {tests_wall:.0f} s wall, {tests_cpu:.0f} CPU s"]
    files: dict = defaultdict(lambda: [0, 0.0, 0.0])
    for nodeid, seconds, own, waited in records:
        entry = files[nodeid.split("::")[0]]
        entry[0] += 1
        entry[1] += seconds
        entry[2] += own + waited
    for title, rows in (("file", [(c, s, n, name) for name, (n, s, c) in files.items()]),
                        ("test", [(own + waited, s, 1, nodeid) for nodeid, s, own, waited in records])):
        lines.append(f"\n{'CPU s':>7} {'share':>6} {'wall s':>7} {'tests':>5}  {title} (by CPU)")
        share = 0.0
        for cpu_s, seconds, n, name in sorted(rows, reverse=True)[:top]:
            share += cpu_s / tests_cpu if tests_cpu else 0.0
            lines.append(f"{cpu_s:7.1f} {share:6.0%} {seconds:7.1f} {n:5d}  {name}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=40, help="rows of each table")
    parser.add_argument("pytest_args", nargs="*", help="more arguments for pytest (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="suiteprofile") as folder:
        env = {**os.environ, RECORDS: folder,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "scripts"), os.environ.get("PYTHONPATH")]))}
        start = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "suite_profile",
                              "-n", "2", *args.pytest_args], cwd=ROOT, env=env)
        wall = time.monotonic() - start
        waited = resource.getrusage(resource.RUSAGE_CHILDREN)
        records = [json.loads(line) for path in Path(folder).glob("*.jsonl") for line in path.read_text().splitlines()]
    print()
    print(report(records, wall, waited.ru_utime + waited.ru_stime, args.top))
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
