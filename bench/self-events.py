#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""How much of what `tracemap stream` shows on an idle system is itself.

    /usr/bin/python3 bench/self-events.py [-d SECONDS] [-t TRACEMAP] [-- EXTRA OPTIONS]

Two runs of `tracemap stream -B <private instance> -e sched:sched_switch
-e sched:sched_wakeup EXTRA`, each SECONDS long, its output on a pseudo
terminal (so that tracemap writes every line at once, as to a user's
terminal):

  quiet    nothing else is done: the share of printed events that are
           tracemap's or its terminal's (this script's reader thread, woken
           by every line): naming either as the task or as prev/next/woken
           task in the fields, but for a switch to the reader from a task
           that blocks (that task's news); and tracemap's CPU time (user+sys from
           /proc/PID/stat) per second;
  latency  once a first marker was printed (the stream runs), a marker
           "tmlat t=<CLOCK_MONOTONIC ns>" is written to the instance's
           trace_marker every 10 ms: write-to-delivery latency
           is the time its line arrived on the terminal minus t (p50, p99,
           max). This includes printing and the terminal, not only the
           library.

Compare with `-- --no-filter` (tracemap's own events kept, the behaviour
before self-filtering). Needs root and tracefs; the instance
tmtest-se-<pid> is removed at exit. Not a test: the figures depend on what
else runs on the machine (the load average is printed with them).
"""
import argparse
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time

TRACEFS = "/sys/kernel/tracing"


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # after the comm: state is field 3, utime 14 and stime 15 (1-based)
    return int(fields[11]) + int(fields[12])


def wait_for(cond, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def read_file(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


class Run:
    """One tracemap stream on a pty; lines stamped with their arrival time."""

    def __init__(self, tool, inst, extra):
        self.master, slave = pty.openpty()
        argv = [tool, "stream", "-B", inst, "-e", "sched:sched_switch",
                "-e", "sched:sched_wakeup"] + extra
        self.proc = subprocess.Popen(argv, stdout=slave, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL)
        os.close(slave)
        self.lines = []
        self.buf = b""
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()
        idir = "%s/instances/%s" % (TRACEFS, inst)
        ok = wait_for(lambda: read_file(idir + "/events/sched/sched_switch/enable") == "1", 10)
        if not ok:
            self.stop()
            sys.exit("tracemap did not enable the events: %s" % self.err)
        self.ready = time.monotonic()
        self.ticks0 = cpu_ticks(self.proc.pid)

    def read(self):
        self.reader_tid = threading.get_native_id()
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            now = time.monotonic_ns()
            self.buf += data
            *done, self.buf = self.buf.split(b"\n")
            for line in done:
                self.lines.append((now, line.decode("utf-8", "replace")))

    def stop(self):
        self.ticks = cpu_ticks(self.proc.pid) if self.proc.poll() is None else None
        self.elapsed = time.monotonic() - self.ready if hasattr(self, "ready") else 0
        self.proc.send_signal(signal.SIGINT)
        self.err = self.proc.communicate(timeout=10)[1].decode()
        self.reader.join(2)
        os.close(self.master)


def own_share(run):
    pids = "%d|%d" % (run.proc.pid, run.reader_tid)
    own = re.compile(r"[-:=](%s)\b" % pids)
    # the terminal's reader taking the CPU from a task that blocks: that task's news
    news = re.compile(r"\] [^R ]\S* ==> \S*:%d \[" % run.reader_tid)
    events = [l for _, l in run.lines if re.search(r"\] +\d+\.\d+: \w+:", l)]
    mine = [l for l in events if own.search(l) and not news.search(l)]
    return len(events), len(mine)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-d", "--duration", type=float, default=3.0)
    ap.add_argument("-t", "--tool", default="build/tracemap")
    ap.add_argument("extra", nargs="*", help="more tracemap stream options (after --)")
    a = ap.parse_args()
    if os.geteuid() != 0 or not os.path.isdir(TRACEFS + "/instances"):
        print("SKIP: needs root and tracefs at %s" % TRACEFS)
        return 77
    inst = "tmtest-se-%d" % os.getpid()
    os.mkdir("%s/instances/%s" % (TRACEFS, inst))
    hz = os.sysconf("SC_CLK_TCK")
    try:
        load = read_file("/proc/loadavg").split()[:3]
        print("# tracemap stream -e sched:sched_switch -e sched:sched_wakeup %s, %.1f s, "
              "load average %s" % (" ".join(a.extra), a.duration, " ".join(load)))

        r = Run(a.tool, inst, a.extra)
        time.sleep(a.duration)
        r.stop()
        total, mine = own_share(r)
        cpu = 100.0 * (r.ticks - r.ticks0) / hz / r.elapsed if r.ticks is not None else -1
        print("quiet:   %d events printed, %d of them tracemap's or its terminal's (%.1f %%), "
              "%.0f own events/s; tracemap CPU %.2f %% of one CPU"
              % (total, mine, 100.0 * mine / total if total else 0.0,
                 mine / r.elapsed, cpu))

        r = Run(a.tool, inst, a.extra)
        marker = open("%s/instances/%s/trace_marker" % (TRACEFS, inst), "w")
        # streaming, not starting: a first marker printed (start-up is not latency)
        marker.write("tmwarm\n")
        marker.flush()
        if not wait_for(lambda: any("tmwarm" in l for _, l in list(r.lines)), 10):
            r.stop()
            print("latency: the first marker did not arrive: %s" % r.err)
            return 1
        end = time.monotonic() + a.duration
        written = 0
        while time.monotonic() < end:
            marker.write("tmlat t=%d\n" % time.monotonic_ns())
            marker.flush()
            written += 1
            time.sleep(0.01)
        marker.close()
        time.sleep(0.3)
        r.stop()
        lat = []
        for now, line in r.lines:
            m = re.search(r"tmlat t=(\d+)", line)
            if m:
                lat.append(now - int(m.group(1)))
        lat.sort()
        if not lat:
            print("latency: no marker arrived: %s" % r.err)
            return 1
        pct = lambda p: lat[min(len(lat) - 1, int(len(lat) * p))] / 1e3
        print("latency: %d of %d markers, write to delivery p50 %.0f us, p99 %.0f us, "
              "max %.0f us" % (len(lat), written, pct(0.5), pct(0.99), lat[-1] / 1e3))
        return 0
    finally:
        for _ in range(50):
            try:
                os.rmdir("%s/instances/%s" % (TRACEFS, inst))
                break
            except OSError:
                time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
