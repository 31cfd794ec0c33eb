#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""opensnoop: print every openat() as it happens, like bcc's opensnoop.

    sudo PYTHONPATH=build/python python3 python/examples/opensnoop.py [-p PID] [-n NAME]

Reads syscalls:sys_enter_openat through a private tracefs instance; Ctrl-C
stops and leaves tracefs as it was. Kernels that record only the user
pointer of the file name (before 6.19) get the name from the process's
memory while it runs: a task gone by then shows the address.
"""
import argparse
import os
import sys
import time

import tracemap


def user_string(pid, addr):
    """The NUL-terminated string at @addr in process @pid, or None."""
    out = b""
    try:
        with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
            while len(out) < 4096:
                mem.seek(addr + len(out))
                # stay inside the page: the next one may not be mapped
                chunk = mem.read(4096 - (addr + len(out)) % 4096)
                if not chunk:
                    return None
                out += chunk
                if b"\0" in chunk:
                    break
    except (OSError, OverflowError, ValueError):
        return None
    return out.split(b"\0", 1)[0].decode(errors="backslashreplace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-p", "--pid", type=int, help="only this process")
    ap.add_argument("-n", "--name", help="only commands whose name contains NAME")
    ap.add_argument("-d", "--duration", type=float, help="stop after this many seconds")
    args = ap.parse_args()

    # the kernel filters by pid, so other tasks' opens never reach Python
    filters = "common_pid == %d" % args.pid if args.pid else None

    def show(ev):
        comm = ev.comm
        if args.name and args.name not in comm:
            return
        name = ev.filename
        if isinstance(name, int):
            name = user_string(ev.pid, name) or "<0x%x>" % name
        print("%-7d %-16s %7o %s" % (ev.pid, comm, ev.flags, name))

    # kill (SIGTERM) or a closed terminal (SIGHUP) restores tracefs too
    tracemap.exit_on_signals()
    with tracemap.Stream(events=["syscalls:sys_enter_openat"], filters=filters,
                         callback=show) as stream:
        print("%-7s %-16s %7s %s" % ("PID", "COMM", "FLAGS", "PATH"), flush=True)
        try:
            if args.duration is None:
                while True:
                    stream.poll(-1)
            else:
                end = time.monotonic() + args.duration
                while time.monotonic() < end:
                    stream.poll(int((end - time.monotonic()) * 1000) + 1)
        except KeyboardInterrupt:
            pass
        except BrokenPipeError:
            # the reader of our output is gone (| head): nothing more to print
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        # no new events, then what is already in the buffers, for at most a second
        stream.restore_events()
        end = time.monotonic() + 1
        while stream.consume() and time.monotonic() < end:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
