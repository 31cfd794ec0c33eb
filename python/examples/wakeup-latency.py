#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""wakeup-latency: live per-task histograms of wake-up latency.

    sudo PYTHONPATH=build/python python3 python/examples/wakeup-latency.py [-i SECS] [-c COMM]

The time from sched_waking (the task is made runnable) to the sched_switch
that puts it on a CPU, per command name, in power-of-two microsecond
buckets as bcc's runqlat prints them. Printed every -i seconds and at
Ctrl-C.
"""
import argparse
import os
import sys
import time

import tracemap


def log2_hist(counts, out):
    top = max(counts) if counts else 0
    for b in range(len(counts)):
        # bucket b holds us.bit_length() == b: 0, 1, 2-3, 4-7, ...
        lo, hi = (1 << b) >> 1, (1 << b) - 1
        bar = "*" * (counts[b] * 40 // top) if top else ""
        out.write("%10d -> %-10d us : %-8d |%-40s|\n" % (lo, hi, counts[b], bar))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-i", "--interval", type=float, default=5, help="seconds between reports")
    ap.add_argument("-c", "--comm", help="only tasks with this command name")
    args = ap.parse_args()

    waking = {}     # pid -> time stamp of its sched_waking
    hists = {}      # comm -> [count per log2(us) bucket]

    def on_event(ev):
        if ev.name == "sched_waking":
            waking[ev["pid"]] = ev.ts
            return
        t = waking.pop(ev.next_pid, None)
        if t is None:
            return
        comm = ev.next_comm
        if args.comm and comm != args.comm:
            return
        us = (ev.ts - t) // 1000
        b = us.bit_length()
        h = hists.setdefault(comm, [])
        if len(h) <= b:
            h.extend([0] * (b + 1 - len(h)))
        h[b] += 1

    def report():
        out = sys.stdout
        out.write("wake-up latency, %s\n" % time.strftime("%H:%M:%S"))
        for comm, h in sorted(hists.items(), key=lambda kv: -sum(kv[1])):
            out.write("%s: %d wake-ups\n" % (comm, sum(h)))
            log2_hist(h, out)
        out.flush()

    # kill (SIGTERM) or a closed terminal (SIGHUP) restores tracefs too
    tracemap.exit_on_signals()
    with tracemap.Stream(events=["sched:sched_waking", "sched:sched_switch"],
                         callback=on_event) as stream:
        print("tracing wake-ups of %s; Ctrl-C ends" % (args.comm or "every task"), flush=True)
        next_report = time.monotonic() + args.interval
        try:
            while True:
                stream.poll(max(1, int((next_report - time.monotonic()) * 1000)))
                if time.monotonic() >= next_report:
                    report()
                    next_report += args.interval
        except KeyboardInterrupt:
            # no new events, then what is already in the buffers, for at most a second
            stream.restore_events()
            end = time.monotonic() + 1
            while stream.consume() and time.monotonic() < end:
                pass
        except BrokenPipeError:
            # the reader of our output is gone (| head): nothing more to print
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
