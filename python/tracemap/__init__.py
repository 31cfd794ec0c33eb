# SPDX-License-Identifier: GPL-2.0-only
"""Live ftrace events in Python, read through the kernel's memory mapping
of the per-CPU ring buffers (Linux >= 6.10), with libtracemap.

bcc's way:

    with tracemap.Stream(events=['sched:sched_switch'], callback=fn) as s:
        while True:
            s.poll(1000)

or pull them:

    for ev in tracemap.Stream(events=['sched:sched_switch'], timeout_ms=1000):
        print(ev.comm, ev.prev_pid, ev.next_pid)

Event and LostEvents come from the C core, tracemap._tracemap, which reads
and decodes; this package holds the policy: Stream checks its arguments
(tracemap/_stream.py) before the core opens anything, open streams are
closed at exit, and exit_on_signals() makes SIGTERM and SIGHUP do the same
when the program asks. See tracemap-python(7).
"""
import atexit
import signal

from ._stream import Stream
from ._tracemap import TOP_LEVEL, Event, LostEvents, __version__, _close_all

__all__ = ["Stream", "Event", "LostEvents", "TOP_LEVEL", "exit_on_signals", "__version__"]

# an interpreter that exits with streams open leaves tracefs as it found it
atexit.register(_close_all)


def _exit_on_signal(sig, frame):
    raise SystemExit(128 + sig)


def exit_on_signals(signals=(signal.SIGTERM, signal.SIGHUP)):
    """Make these signals exit through SystemExit, so that streams still open
    are closed (events, filters and buffer_percent put back, the private
    instance removed) as at a normal exit. Only signals whose action is still
    the default are taken: a handler the program set stays. Call it from the
    main thread. Returns the list of signals taken.
    """
    taken = []
    for sig in signals:
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _exit_on_signal)
            taken.append(sig)
    return taken
