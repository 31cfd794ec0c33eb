#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""py-consume: the Python consumers of the benchmark, counted like tm-consume.

    py-consume.py -m tm|pipe|tc -B instance -t tag [-R ready_fd]

  tm    tracemap.Stream with a callback that reads two fields of each event
        (the sequence number, field id of ftrace:raw_data, and common_pid)
  pipe  what a Python user does without tracemap: read the instance's
        trace_pipe text and parse each line with re
  tc    trace-cmd stream piped into a Python parser (re on each line)

Writes "R" to ready_fd once it reads the instance; on SIGINT (what tm-bench
sends) it drains what is left and prints the key=value counts tm-bench reads
("self" kind): delivered, dups, late, other, lost, lost_unknown, and
self_cpu_ns, the CPU of this process and its children (trace-cmd) from ready
to exit.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "build", "python"))

TRACEFS = "/sys/kernel/tracing"
# trace_pipe prints a raw_data event as "# <hex id> buf: ..."; trace-cmd as "raw_data: # <hex>"
PIPE_RE = re.compile(rb"# ([0-9a-f]+) buf:")
TC_RE = re.compile(rb"raw_data: +# ([0-9a-f]+)")


class Counts:
    """Markers seen, one byte per sequence number: the consumers only add 1."""

    def __init__(self):
        self.seen = bytearray(1 << 24)
        self.other = self.lost = self.lost_unknown = 0

    def print(self):
        cpu = cpu_ns() - CPU_AT_READY[0]
        seen = self.seen
        delivered = sum(seen)
        distinct = len(seen) - seen.count(0)
        print("delivered=%d dups=%d late=0 other=%d noseq=0 lost=%d lost_unknown=%d "
              "self_cpu_ns=%d" % (delivered, delivered - distinct, self.other, self.lost,
                                  self.lost_unknown, cpu), flush=True)


def cpu_ns():
    """CPU of this process, its reaped children and its live process group."""
    t = os.times()
    ns = int((t.user + t.system + t.children_user + t.children_system) * 1e9)
    pgid = os.getpgid(0)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if os.getpgid(int(pid)) != pgid:
                continue
            for tid in os.listdir("/proc/%s/task" % pid):
                with open("/proc/%s/task/%s/schedstat" % (pid, tid)) as f:
                    ns += int(f.read().split()[0])
        except (OSError, ValueError):
            continue
    return ns


CPU_AT_READY = [0]


def ready(fd):
    CPU_AT_READY[0] = cpu_ns()
    if fd is not None:
        os.write(fd, b"R")
        os.close(fd)


def run_tm(args, c):
    import tracemap

    seen = c.seen

    def on_event(ev):
        # the two fields a user reads
        seen[ev["id"]] += 1
        ev.common_pid

    def on_lost(cpu, count):
        if count is None:
            c.lost_unknown += 1
        else:
            c.lost += count

    with tracemap.Stream(args.instance, callback=on_event, lost=on_lost) as s:
        ready(args.ready)
        try:
            while True:
                s.poll(-1)
        except KeyboardInterrupt:
            pass
        end = time.monotonic() + 1
        while s.consume() and time.monotonic() < end:
            pass


def run_pipe(args, c):
    path = os.path.join(TRACEFS, "instances", args.instance, "trace_pipe")
    fd = os.open(path, os.O_RDONLY)
    ready(args.ready)
    seen = c.seen
    rest = b""
    try:
        while True:
            buf = os.read(fd, 1 << 16)
            lines = (rest + buf).split(b"\n")
            rest = lines.pop()
            for line in lines:
                m = PIPE_RE.search(line)
                if m:
                    seen[int(m.group(1), 16)] += 1
                else:
                    c.other += 1
    except KeyboardInterrupt:
        pass
    # what is left, without blocking
    os.set_blocking(fd, False)
    try:
        while True:
            buf = os.read(fd, 1 << 16)
            if not buf:
                break
            for line in (rest + buf).split(b"\n"):
                m = PIPE_RE.search(line)
                if m:
                    seen[int(m.group(1), 16)] += 1
            rest = b""
    except OSError:
        pass
    os.close(fd)


def group_reads_instance(instance, ncpu):
    """Every per_cpu trace_pipe_raw of the instance is open in our process group."""
    want = os.path.join(TRACEFS, "instances", instance, "per_cpu")
    pgid = os.getpgid(0)
    cpus = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.getpgid(int(pid)) != pgid:
                continue
            for fd in os.listdir("/proc/%s/fd" % pid):
                t = os.readlink("/proc/%s/fd/%s" % (pid, fd))
                if t.startswith(want) and t.endswith("trace_pipe_raw"):
                    cpus.add(t)
        except OSError:
            continue
    return len(cpus) >= ncpu


def run_tc(args, c):
    tc = subprocess.Popen(["trace-cmd", "stream", "-d", "--no-filter", "-B", args.instance,
                           "-e", "syscalls:sys_enter_reboot"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, bufsize=1 << 16)
    # the SIGINT is for trace-cmd: it ends its output, the parser reads to the end
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ncpu = len(os.listdir(os.path.join(TRACEFS, "instances", args.instance, "per_cpu")))
    deadline = time.monotonic() + 10
    while not group_reads_instance(args.instance, ncpu) and time.monotonic() < deadline:
        time.sleep(0.05)
    # trace-cmd clears the buffer after it opened it: let it settle
    time.sleep(0.3)
    ready(args.ready)
    seen = c.seen
    out = tc.stdout
    for line in out:
        m = TC_RE.search(line)
        if m:
            seen[int(m.group(1), 16)] += 1
        elif line.startswith(b"CPU:"):
            c.lost_unknown += 1
    tc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-m", "--mode", choices=["tm", "pipe", "tc"], required=True)
    ap.add_argument("-B", "--instance", required=True)
    ap.add_argument("-t", "--tag", type=int, help="the writer's tag (not checked)")
    ap.add_argument("-R", "--ready", type=int)
    args = ap.parse_args()
    c = Counts()
    {"tm": run_tm, "pipe": run_pipe, "tc": run_tc}[args.mode](args, c)
    c.print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
