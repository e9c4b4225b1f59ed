#!/usr/bin/env python3
"""Whole-process timing: each command run N times, interleaved with /bin/true.

  bench/startup.py [-n RUNS] [--warmup K] [--label NAME=CMD]... [CMD]...

Every round runs /bin/true and then each command once, in order, so a change of
machine load touches them alike. A run is timed from just before posix_spawn to
the child's exit (os.wait4), its output sent to /dev/null; the report gives each
command's median, the median of its excess over /bin/true in the same round,
the child's user + system CPU time and its peak resident set (rusage, MiB; it
is at least this harness's own, about 15 MiB: posix_spawn runs the child in the
parent's memory until it execs, and Linux keeps the larger figure). A CMD is one shell-quoted string,
split with shlex (no shell runs it). A command that exits non-zero stops the
harness with its exit status.
"""

import argparse
import os
import shlex
import statistics
import sys
import time


def run_once(argv, devnull):
    start = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                       (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter_ns() - start) / 1e6
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"startup.py: {shlex.join(argv)} exited with {code}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1e3, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=101)
    parser.add_argument("--warmup", type=int, default=5, help="untimed rounds first")
    parser.add_argument("--label", action="append", default=[], metavar="NAME=CMD")
    parser.add_argument("commands", nargs="*", metavar="CMD")
    args = parser.parse_args()

    commands = [("/bin/true", ["/bin/true"])]
    for item in args.label:
        name, _, cmd = item.partition("=")
        commands.append((name, shlex.split(cmd)))
    commands += [(cmd, shlex.split(cmd)) for cmd in args.commands]
    for _, argv in commands:
        if os.sep not in argv[0]:
            sys.exit(f"startup.py: give a path, not a bare name: {argv[0]}")

    devnull = os.open(os.devnull, os.O_WRONLY)
    wall = {name: [] for name, _ in commands}
    cpu = {name: [] for name, _ in commands}
    excess = {name: [] for name, _ in commands}
    rss = {name: [] for name, _ in commands}
    for round_ in range(args.warmup + args.runs):
        base = None
        for name, argv in commands:
            w, c, r = run_once(argv, devnull)
            if round_ < args.warmup:
                continue
            if base is None:
                base = w
            wall[name].append(w)
            cpu[name].append(c)
            rss[name].append(r)
            excess[name].append(w - base)

    load = open("/proc/loadavg").read().split()[:3]
    print(f"{args.runs} rounds (after {args.warmup} untimed), {os.cpu_count()} CPUs, "
          f"load {' '.join(load)}; medians in ms")
    width = max(len(name) for name, _ in commands)
    print(f"{'command':<{width}}  {'wall':>7}  {'over true':>9}  {'cpu':>7}  {'min':>7}  "
          f"{'rss MiB':>7}")
    for name, _ in commands:
        print(f"{name:<{width}}  {statistics.median(wall[name]):7.2f}  "
              f"{statistics.median(excess[name]):9.2f}  {statistics.median(cpu[name]):7.2f}  "
              f"{min(wall[name]):7.2f}  {statistics.median(rss[name]):7.1f}")


if __name__ == "__main__":
    main()
