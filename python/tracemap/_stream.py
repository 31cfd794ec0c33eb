# SPDX-License-Identifier: GPL-2.0-only
"""tracemap.Stream: the arguments a program gives, checked and put in the
plain form the C core (_tracemap.Stream) opens libtracemap's stream with.
Nothing in tracefs changes before every argument passed."""
import os

from . import _tracemap

_MODES = {
    "consume": _tracemap.MODE_CONSUME,
    "follow": _tracemap.MODE_FOLLOW,
    "snapshot": _tracemap.MODE_SNAPSHOT,
}
# the largest NR_CPUS the kernel can be built with
_CPU_LIMIT = 8192
_INT_MAX = 2**31 - 1


def _type_name(v):
    return type(v).__name__


def _int(name, v, lo, hi, meaning):
    """@v as an int from @lo to @hi, else TypeError/ValueError saying @meaning."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("%s: give an int (%s), not %s" % (name, meaning, _type_name(v)))
    if not lo <= v <= hi:
        raise ValueError("%s: %d is out of range: give %s" % (name, v, meaning))
    return v


def _flag(name, v):
    """A yes/no argument: a bool (or 0/1), not a string that reads as one."""
    if not isinstance(v, int) or v not in (0, 1):
        raise TypeError("%s: give True or False, not %r" % (name, v))
    return bool(v)


def _callable(name, fn, signature):
    if fn is not None and not callable(fn):
        raise TypeError("%s: give a function %s or None, not %s" %
                        (name, signature, _type_name(fn)))
    return fn


def _instance(instance):
    """None (a private instance), TOP_LEVEL or "" (the top level), or a name in instances/."""
    if instance is None:
        return None
    how = ('give the name of a directory in instances/, None for a private instance '
           'or tracemap.TOP_LEVEL ("%s", or "") for the top-level buffer' % _tracemap.TOP_LEVEL)
    if not isinstance(instance, str):
        raise TypeError("instance: %s, not %s" % (how, _type_name(instance)))
    if instance in ("", _tracemap.TOP_LEVEL):
        return _tracemap.TOP_LEVEL
    if "/" in instance or "\0" in instance or instance in (".", ".."):
        raise ValueError("invalid instance name %r: %s" % (instance, how))
    return instance


def _names(events):
    """events= as a list: one spec (str) or an iterable of them."""
    if events is None:
        return []
    if isinstance(events, str):
        return [events]
    try:
        return list(events)
    except TypeError:
        raise TypeError("events: give an event spec such as 'sched:sched_switch', a list "
                        "of them or a dict {spec: filter}, not %s" % _type_name(events)) from None


def _event_specs(events, filters):
    """events= and filters= as ((spec, filter or None), ...), as trace-cmd's -e and -f."""
    if isinstance(events, dict):
        if filters is not None:
            raise ValueError("filters: events is a dict {spec: filter}: give the filters "
                             "there, not also in filters=")
        pairs = list(events.items())
    else:
        names = _names(events)
        if filters is not None and not names:
            raise ValueError("filters without events: name the events to filter")
        if filters is None or isinstance(filters, str):
            pairs = [(n, filters) for n in names]
        elif isinstance(filters, dict):
            for key in filters:
                if key not in names:
                    raise ValueError("filters: %r is not one of the events %r" % (key, names))
            pairs = [(n, filters.get(n)) for n in names]
        else:
            raise TypeError("filters: give one filter string for every event, or a dict "
                            "{event spec: filter}, not %s" % _type_name(filters))
    for name, flt in pairs:
        if not isinstance(name, str):
            raise TypeError("events: give str specs such as 'sched:sched_switch', not %s" %
                            _type_name(name))
        if not name.strip() or "\0" in name:
            raise ValueError("events: %r is not an event spec: give 'system:event', 'system' "
                             "or 'event' (globs allowed)" % name)
        if flt is not None and not isinstance(flt, str):
            raise TypeError("filters: the filter of %r is a str such as 'prev_pid != 0', "
                            "not %s" % (name, _type_name(flt)))
        if flt is not None and "\0" in flt:
            raise ValueError("filters: the filter of %r holds a NUL character" % name)
    return tuple(pairs)


def _cpumask(cpus):
    """cpus= as the hex mask tracing_cpumask takes (the library checks a str given as one)."""
    if cpus is None or isinstance(cpus, str):
        return cpus
    how = "a CPU number, a list of them or a hex mask string"
    if isinstance(cpus, int):
        cpus = [cpus]
    try:
        cpus = list(cpus)
    except TypeError:
        raise TypeError("cpus: give %s, not %s" % (how, _type_name(cpus))) from None
    if not cpus:
        raise ValueError("cpus: the list is empty: give at least one CPU, or None for the "
                         "online CPUs")
    mask = 0
    for cpu in cpus:
        mask |= 1 << _int("cpus", cpu, 0, _CPU_LIMIT - 1,
                          "CPU numbers from 0 to %d" % (_CPU_LIMIT - 1))
    return "%x" % mask


def _pids(pids, follow_forks):
    if pids is None:
        if follow_forks:
            raise ValueError("follow_forks: give the tasks to follow in pids=")
        return ()
    if isinstance(pids, int) and not isinstance(pids, bool):
        pids = [pids]
    try:
        pids = tuple(pids)
    except TypeError:
        raise TypeError("pids: give a pid or a list of pids, not %s" %
                        _type_name(pids)) from None
    if not pids:
        raise ValueError("pids: the list is empty: give the tasks to trace, or None for all")
    for pid in pids:
        _int("pids", pid, 1, _INT_MAX, "process ids (> 0)")
    return pids


def _tracefs(tracefs):
    if tracefs is None:
        return None
    try:
        path = os.fspath(tracefs)
    except TypeError:
        raise TypeError("tracefs: give the path of the tracefs mount, or None to find it, "
                        "not %s" % _type_name(tracefs)) from None
    if not isinstance(path, str):
        raise TypeError("tracefs: give the path as a str, not %s" % _type_name(path))
    return path


class Stream(_tracemap.Stream):
    """Live events of one ftrace instance, read through the kernel's mapping
    of the per-CPU ring buffers.

    instance    name of an instance in instances/; None: a private one,
                created now and removed by close() ('tracemap-PID-N');
                tracemap.TOP_LEVEL or '': the top-level buffer (shared:
                prefer an instance)
    events      'system:event', 'system' or 'event' (globs allowed), as
                trace-cmd's -e: one, a list of them, or a dict
                {spec: filter or None}; enabled now, restored by close()
    filters     a filter for every event of events, or a dict
                {event spec: filter}, as trace-cmd's -f
    cpus        a CPU, a list of CPUs or a hex mask string; None: the
                online CPUs
    mode        'consume' (each event once, removed, as trace_pipe),
                'follow' (what is there, then new events, nothing removed),
                'snapshot' (what is there now, once, nothing removed)
    ordered     merge the CPUs by time stamp (False: each CPU in bursts)
    callback    fn(event) for poll()/consume(); lost: fn(cpu, count)
    timeout_ms  how long iteration waits for the next event (-1: forever);
                the iteration ends when it passes
    pids        only these tasks (set_event_pid), as trace-cmd's -P: a pid
                or a list; follow_forks: their children too
    self_filter leave out the events of this process's threads and the
                sched events that name them
    low_latency wake for every event (sub-millisecond, more CPU)
    watermark   buffer_percent while the stream is open (consume mode), 1
                to 100; 0: the library's default, -1 leaves it
    latency_ms  the longest delay (> 0) of events below the watermark
    buffer_kb   per-CPU buffer size of the private instance
    tracefs     the tracefs mount (None: found)

    A context manager; close() restores everything it changed. Bad
    arguments raise TypeError or ValueError before tracefs is touched; the
    library's errors are OSError subclasses with its message:
    FileNotFoundError for an unknown instance or event, PermissionError
    without root.
    """

    __slots__ = ()

    def __init__(self, instance=None, events=None, filters=None, cpus=None, mode="consume",
                 ordered=True, callback=None, lost=None, timeout_ms=-1, pids=None,
                 follow_forks=False, self_filter=True, low_latency=False, watermark=0,
                 latency_ms=100, buffer_kb=0, tracefs=None):
        instance = _instance(instance)
        specs = _event_specs(events, filters)
        mask = _cpumask(cpus)
        if not isinstance(mode, str):
            raise TypeError("mode: give 'consume', 'follow' or 'snapshot', not %s" %
                            _type_name(mode))
        if mode not in _MODES:
            raise ValueError("mode '%s': give 'consume', 'follow' or 'snapshot'" % mode)
        flags = 0
        if not _flag("ordered", ordered):
            flags |= _tracemap.STREAM_UNORDERED
        if _flag("self_filter", self_filter):
            flags |= _tracemap.STREAM_NO_SELF
        if _flag("low_latency", low_latency):
            flags |= _tracemap.STREAM_LOW_LATENCY
        if _flag("follow_forks", follow_forks):
            flags |= _tracemap.STREAM_PID_FORKS
        pids = _pids(pids, follow_forks)
        _callable("callback", callback, "fn(event)")
        _callable("lost", lost, "fn(cpu, count)")
        _int("timeout_ms", timeout_ms, -1, _INT_MAX, "milliseconds, or -1 to wait forever")
        _int("watermark", watermark, -1, 100, "a buffer_percent from 1 to 100, 0 for the "
             "library's default, or -1 to leave it as it is")
        _int("latency_ms", latency_ms, 1, _INT_MAX, "the longest delay in milliseconds "
             "(> 0) of events below the watermark; low_latency=True delivers each at once")
        _int("buffer_kb", buffer_kb, 0, _INT_MAX, "a size in KiB")
        if buffer_kb and instance is not None:
            raise ValueError("buffer_kb: a size in KiB for the private instance "
                             "(instance=None) only")
        super().__init__(instance, specs, mask, _MODES[mode], flags, pids, watermark,
                         latency_ms, buffer_kb, _tracefs(tracefs), timeout_ms, callback, lost)

    def open_callback(self, callback, lost=None):
        """Set the function poll() and consume() call with each Event, and
        optionally lost(cpu, count) for events the kernel dropped (count is
        None when unknown). An exception in a callback stops the delivery
        and propagates out of poll()/consume().
        """
        if callback is None:
            raise TypeError("open_callback: give a function fn(event), not None")
        self._set_callbacks(_callable("callback", callback, "fn(event)"),
                            _callable("lost", lost, "fn(cpu, count)"))

    def __enter__(self):
        if self.closed:
            raise ValueError("the stream is closed")
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "<tracemap.Stream instance=%r cpus=%r%s>" % (
            self.instance, self.cpus, " closed" if self.closed else "")


Stream.__module__ = "tracemap"
