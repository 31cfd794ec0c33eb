#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
"""The tracemap Python module on the real kernel, in private instances.

Run through tests/run-tests.sh (exit 0 pass, 1 fail, 77 skip) or pytest.
Markers carry sequence numbers written by a child process (the stream
leaves out its own process's events), so every check counts exactly.
"""
import asyncio
import errno
import os
import re
import signal
import subprocess
import sys
import threading
import time
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))

import pytest  # noqa: E402
import tracemap  # noqa: E402

TRACEFS = "/sys/kernel/tracing"
SEQ = re.compile(r"pyseq=(\d+)")
_n = [0]


def mmap_check():
    """None when the kernel can map the ring buffer here, else why not."""
    try:
        with tracemap.Stream(mode="follow"):
            pass
    except OSError as e:
        if e.errno == errno.EOPNOTSUPP:
            return "the kernel cannot map the ring buffer: " + str(e)
        raise
    return None


def kernel_check():
    """None when the tests can run here (root, tracefs), else the reason to skip."""
    if os.geteuid() != 0:
        return "needs root"
    if not os.path.isdir(os.path.join(TRACEFS, "instances")):
        return "tracefs not mounted at " + TRACEFS
    return None


# the consuming tests run through read() without the mapping (Linux before 6.10)
NO_MMAP = mmap_check() if kernel_check() is None else None
needs_mmap = pytest.mark.skipif(NO_MMAP is not None, reason=str(NO_MMAP))


def write_file(path, val):
    with open(path, "w") as f:
        f.write(val)


def instances():
    return set(os.listdir(os.path.join(TRACEFS, "instances")))


def kill_and_clean(proc):
    """SIGKILL a child that did not end and remove the private instances it left."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for name in instances():
        if name.startswith("tracemap-%d-" % proc.pid):
            path = os.path.join(TRACEFS, "instances", name)
            write_file(os.path.join(path, "events/enable"), "0")
            os.rmdir(path)


def own_private_instances():
    return {i for i in instances() if i.startswith("tracemap-%d-" % os.getpid())}


@pytest.fixture
def instance():
    """A private instance tmtest-py-PID-N, its events off and removed afterwards."""
    _n[0] += 1
    name = "tmtest-py-%d-%d" % (os.getpid(), _n[0])
    path = os.path.join(TRACEFS, "instances", name)
    os.mkdir(path)
    try:
        yield name
    finally:
        try:
            write_file(os.path.join(path, "events/enable"), "0")
        except OSError:
            pass
        deadline = time.monotonic() + 5
        while True:
            try:
                os.rmdir(path)
                break
            except OSError as e:
                if e.errno != errno.EBUSY or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)


def idir(name):
    return os.path.join(TRACEFS, "instances", name)


def write_markers(directory, start, count, cpu=None):
    """A child process writes markers pyseq=start..start+count-1 and exits."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
            fd = os.open(os.path.join(directory, "trace_marker"), os.O_WRONLY)
            for i in range(start, start + count):
                os.write(fd, b"pyseq=%d" % i)
            os.close(fd)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "marker writer failed"


def marker_seq(ev):
    if ev.system != "ftrace" or ev.name != "print":
        return None
    m = SEQ.search(ev.buf)
    return int(m.group(1)) if m else None


def sched_round(stream, directory):
    """A few sleeps, tracing_on 0 in @directory, then every event of @stream, none lost."""
    subprocess.run(["sh", "-c", "for i in 1 2 3 4 5; do sleep 0.01; done"], check=True)
    write_file(os.path.join(directory, "tracing_on"), "0")
    while True:
        ev = stream.read(300)
        if ev is None:
            return
        assert isinstance(ev, tracemap.Event), "events lost in a 16 MiB buffer: %r" % (ev,)
        yield ev


def poll_until(stream, cond, seconds=20):
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        stream.poll(100)
    return cond()


# ------------------------------------------------------------- delivery

def test_callback_exactly_once():
    seqs = []
    n = 5000

    def cb(ev):
        s = marker_seq(ev)
        if s is not None:
            seqs.append(s)

    with tracemap.Stream(callback=cb) as s:
        assert s.instance.startswith("tracemap-%d-" % os.getpid())
        write_markers(s.instance_dir, 0, n)
        assert poll_until(s, lambda: len(seqs) >= n), "got %d of %d" % (len(seqs), n)
        # nothing more may come: no duplicates after the last one
        assert s.poll(200) == 0
        assert s.consume() == 0
        stats = s.stats()
        assert sorted(stats) == s.cpus
        assert sum(c["events"] for c in stats.values()) == n
        assert sum(c["lost"] + c["lost_unknown"] for c in stats.values()) == 0
        assert sum(c["skipped"] for c in stats.values()) == 0
        name = s.instance
    assert sorted(seqs) == list(range(n))
    assert seqs == sorted(seqs), "ordered stream delivered out of time order"
    assert name not in instances(), "private instance left behind"


def test_iteration_exactly_once():
    n = 3000
    seqs = []
    with tracemap.Stream(timeout_ms=500) as s:
        write_markers(s.instance_dir, 0, n)
        deadline = time.monotonic() + 30
        for ev in s:
            assert isinstance(ev, tracemap.Event), "unexpected %r" % (ev,)
            seq = marker_seq(ev)
            if seq is not None:
                seqs.append(seq)
            assert time.monotonic() < deadline
        assert s.read(0) is None
    assert seqs == list(range(n))


def test_read_timeout():
    with tracemap.Stream() as s:
        t0 = time.monotonic()
        assert s.read(150) is None
        took = time.monotonic() - t0
        assert 0.14 <= took < 2, took
        write_markers(s.instance_dir, 7, 1)
        ev = s.read(5000)
        assert marker_seq(ev) == 7
        assert ev.comm  # the writer's name, found while it ran or in saved_cmdlines


def test_asyncio_exactly_once():
    n = 2000
    seqs = []

    async def main(s):
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def cb(ev):
            seq = marker_seq(ev)
            if seq is not None:
                seqs.append(seq)
                if len(seqs) >= n:
                    done.set()

        s.open_callback(cb)
        loop.add_reader(s.fileno(), s.consume)
        try:
            writer = loop.run_in_executor(None, write_markers, s.instance_dir, 0, n)
            await asyncio.wait_for(done.wait(), 20)
            await writer
            await asyncio.sleep(0.2)
        finally:
            loop.remove_reader(s.fileno())

    with tracemap.Stream() as s:
        asyncio.run(main(s))
        assert s.consume() == 0
    assert sorted(seqs) == list(range(n))


def test_selectors_and_pids():
    """fileno() with selectors; pids= keeps exactly the given task's events."""
    import selectors
    n = 200
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)       # the stream is open
        for _ in range(n):
            os.getppid()
        os._exit(0)
    os.close(r)
    got = []
    try:
        with tracemap.Stream(events=["syscalls:sys_enter_getppid"], pids=[pid],
                             callback=got.append) as s:
            os.write(w, b"g")
            os.waitpid(pid, 0)
            pid_done = True
            sel = selectors.DefaultSelector()
            sel.register(s.fileno(), selectors.EVENT_READ)
            deadline = time.monotonic() + 20
            while len(got) < n and time.monotonic() < deadline:
                if sel.select(timeout=0.5):
                    s.consume()
            s.poll(200)
            sel.close()
            assert {ev.pid for ev in got} == {pid}
            assert all(ev.name == "sys_enter_getppid" for ev in got)
    finally:
        os.close(w)
        if not locals().get("pid_done"):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert len(got) == n


def test_event_kept_after_callback():
    kept = []
    with tracemap.Stream(callback=kept.append) as s:
        write_markers(s.instance_dir, 0, 300)
        assert poll_until(s, lambda: len(kept) >= 300)
        snapshot = [(ev.buf, ev.raw) for ev in kept]
        write_markers(s.instance_dir, 300, 300)
        assert poll_until(s, lambda: len(kept) >= 600)
        # the first events still read as they did inside the callback
        assert [(ev.buf, ev.raw) for ev in kept[:300]] == snapshot
        assert [marker_seq(ev) for ev in kept] == list(range(600))
    # closed: the payload stays, names and fields need the stream
    assert kept[0].raw == snapshot[0][1] and kept[0].cpu in s.cpus + [kept[0].cpu]
    with pytest.raises(ValueError, match="stream is closed"):
        kept[0].buf


def test_callback_exception_propagates():
    def cb(ev):
        raise RuntimeError("from the callback")

    with tracemap.Stream(callback=cb) as s:
        write_markers(s.instance_dir, 0, 10)
        with pytest.raises(RuntimeError, match="from the callback"):
            poll_until(s, lambda: False, 5)


def test_stats_cleared(instance):
    """A buffer cleared (echo > trace) while read: one LostEvents without a count, cleared 1."""
    d = idir(instance)
    cpu = min(os.sched_getaffinity(0))
    with tracemap.Stream(instance, cpus=[cpu], timeout_ms=300) as s:
        write_markers(d, 0, 400, cpu=cpu)
        for i in range(20):
            assert marker_seq(s.read(5000)) == i
        write_file(os.path.join(d, "trace"), "\n")
        write_markers(d, 100000, 3000, cpu=cpu)
        items = [item if isinstance(item, tracemap.LostEvents) else marker_seq(item)
                 for item in s]
        stats = s.stats()[cpu]
    gaps = [i for i, item in enumerate(items) if isinstance(item, tracemap.LostEvents)]
    assert len(gaps) == 1 and items[gaps[0]].count is None, items[:gaps[0] + 2]
    # what the reader held before the reset, in order, then every marker after it
    before = items[:gaps[0]]
    assert before == list(range(20, 20 + len(before)))
    assert items[gaps[0] + 1:] == list(range(100000, 103000))
    assert (stats["cleared"], stats["lost_unknown"], stats["lost"]) == (1, 1, 0), stats


@needs_mmap
def test_stats_helper(instance):
    """sched_waking, on only for the self check, is counted in helper: not delivered, not own."""
    d = idir(instance)
    write_file(os.path.join(d, "buffer_size_kb"), "16384")
    with tracemap.Stream(instance, events=["sched:sched_switch"], mode="follow") as s:
        assert s.events == ["sched:sched_switch", "sched:sched_waking"]
        names = {ev.name for ev in sched_round(s, d)}
        stats = s.stats()
    assert names == {"sched_switch"}
    # the same buffer, unfiltered: every sched_waking the stream left out as its helper
    with tracemap.Stream(instance, mode="snapshot", self_filter=False) as s:
        wakings = sum(1 for ev in s if ev.name == "sched_waking")
    helper = sum(c["helper"] for c in stats.values())
    assert wakings > 0 and helper == wakings, (helper, wakings)


# ---------------------------------------------------------------- modes

@needs_mmap
def test_follow_does_not_consume(instance):
    n = 400
    write_markers(idir(instance), 0, n)
    for _ in range(2):
        with tracemap.Stream(instance, mode="follow", timeout_ms=300) as s:
            assert [marker_seq(ev) for ev in s] == list(range(n))
    with tracemap.Stream(instance, mode="snapshot") as s:
        assert [marker_seq(ev) for ev in s] == list(range(n))
    with tracemap.Stream(instance, timeout_ms=300) as s:
        assert [marker_seq(ev) for ev in s] == list(range(n))
    with tracemap.Stream(instance, mode="snapshot") as s:
        assert list(s) == []


def overflow_one_cpu(instance, n, **stream_args):
    """Write n markers on one CPU into a 64 KiB buffer, then read them (it overflows)."""
    d = idir(instance)
    write_file(os.path.join(d, "buffer_size_kb"), "64")
    cpu = min(os.sched_getaffinity(0))
    s = tracemap.Stream(instance, cpus=[cpu], timeout_ms=300, **stream_args)
    write_markers(d, 0, n, cpu=cpu)
    return s, cpu


def test_losses_counted_exactly(instance):
    """Overflow one CPU's small buffer: received + lost == written, exactly."""
    n = 20000
    got = []
    lost = []
    s, cpu = overflow_one_cpu(instance, n)
    with s:
        for item in s:
            if isinstance(item, tracemap.LostEvents):
                assert item.cpu == cpu
                lost.append(item.count)
            else:
                got.append(marker_seq(item))
        stats = s.stats()[cpu]
    assert lost, "no loss reported for %d markers in a 64 KiB buffer" % n
    assert None not in lost, "a loss without a count: %r" % lost
    assert got == sorted(got) and len(set(got)) == len(got)
    assert len(got) + sum(lost) == n, (len(got), sum(lost))
    assert got[-1] == n - 1
    assert stats["lost"] == sum(lost) and stats["events"] == len(got)


def test_lost_callback(instance):
    n = 20000
    got = []
    lost = []
    s, cpu = overflow_one_cpu(instance, n, callback=lambda ev: got.append(marker_seq(ev)),
                              lost=lambda c, count: lost.append((c, count)))
    with s:
        while s.poll(300):
            pass
    assert lost and all(c == cpu and count for c, count in lost)
    assert len(got) + sum(count for _, count in lost) == n


# --------------------------------------------------------------- fields

def report_int(s):
    """trace-cmd report -R prints numbers in decimal (zero-padded CPUs) or 0x-hex."""
    return int(s, 16) if s.startswith("0x") else int(s)


@needs_mmap
def test_sched_fields_equal_trace_cmd_report(instance, tmp_path):
    """Every sched event's fields as trace-cmd report -R prints them."""
    d = idir(instance)
    # room for everything a busy machine switches while the test reads nothing
    write_file(os.path.join(d, "buffer_size_kb"), "16384")
    events = ["sched:sched_switch", "sched:sched_waking"]
    ours = []
    with tracemap.Stream(instance, events=events, mode="follow", self_filter=False) as s:
        assert s.events == events
        for ev in sched_round(s, d):
            # names and fields are read while the stream is open
            ours.append((ev.cpu, ev.ts, ev.name, ev.pid, ev.as_dict(), str(ev)))
    assert len(ours) > 10
    # trace-cmd extract reads the top level: bind the instance over it in a mount namespace
    dat = str(tmp_path / "sched.dat")
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount --bind "$1" "$2" && exec trace-cmd extract -o "$3"', "sh",
                        d, TRACEFS, dat], capture_output=True, text=True)
    if r.returncode:
        pytest.skip("trace-cmd extract in a private mount namespace failed: " + r.stderr)
    rep = subprocess.run(["trace-cmd", "report", "-R", "-t", dat], capture_output=True,
                         text=True, check=True).stdout
    theirs = {}
    line_re = re.compile(r"\[(\d+)\]\s+(\d+)\.(\d{9}): (\w+):\s+(.*)$")
    for line in rep.splitlines():
        m = line_re.search(line)
        if m and m.group(4) in ("sched_switch", "sched_waking"):
            ts = int(m.group(2)) * 1000000000 + int(m.group(3))
            fields = dict(kv.split("=", 1) for kv in m.group(5).split())
            theirs[(int(m.group(1)), ts, m.group(4))] = fields
    assert len(theirs) == len(ours)
    # str(ev): the line of trace-cmd report, compared from the CPU column on (the
    # comm column comes from saved_cmdlines, which the extracted file lacks)
    rep = subprocess.run(["trace-cmd", "report", dat], capture_output=True, text=True,
                         check=True).stdout
    lines = sorted(l[l.index("["):] for l in rep.splitlines()
                   if re.search(r"\] +\d+\.\d+: sched_(switch|waking):", l))
    assert sorted(o[5][o[5].index("["):] for o in ours) == lines
    for cpu, ts, name, pid, fields, line in ours:
        want = theirs[(cpu, ts, name)]
        got = {k: v for k, v in fields.items() if not k.startswith("common_")}
        assert sorted(got) == sorted(want)
        for k, v in got.items():
            assert str(v) == want[k] or (isinstance(v, int) and report_int(want[k]) == v), \
                "%s.%s: %r, trace-cmd report %r" % (name, k, v, want[k])
        assert pid == fields["common_pid"]


def test_strings_and_arrays():
    """Strings (fixed char arrays and __data_loc), integer arrays, raw bytes."""
    with tracemap.Stream(events=["sched:sched_process_exec", "raw_syscalls:sys_enter"],
                         filters={"raw_syscalls:sys_enter": "id == 1"}) as s:
        child = subprocess.run(["/bin/sh", "-c",
                                "echo $$; exec /usr/bin/head -c 12345 /dev/zero >/dev/null"],
                               capture_output=True, text=True, check=True)
        pid = int(child.stdout)
        execs, writes = [], []
        # other tasks write too: read until the child's events are in
        deadline = time.monotonic() + 20
        while not (execs and writes) and time.monotonic() < deadline:
            ev = s.read(300)
            # a busy machine may overflow the buffer: LostEvents between them
            if not isinstance(ev, tracemap.Event) or ev.pid != pid:
                continue
            if ev.name == "sched_process_exec" and ev.filename == "/usr/bin/head":
                execs.append(ev)
            elif ev.name == "sys_enter" and ev.args[0] == 1 and execs:
                writes.append(ev)
        assert execs and writes, (execs, writes)
        ev = execs[0]
        assert ev.filename == "/usr/bin/head" and ev["filename"] == ev.filename
        assert ev.comm == "head" and ev.old_pid == pid
        assert re.search(r"sched_process_exec: +filename=/usr/bin/head pid=%d old_pid=%d" %
                         (pid, pid), str(ev))
        args = writes[0].args
        assert isinstance(args, list) and len(args) == 6 and all(isinstance(a, int) for a in args)
        assert args[0] == 1 and 0 < args[2] <= 12345
        assert writes[0]["id"] == 1 and writes[0].id == writes[0].common_type
        raw = ev.raw
        assert isinstance(raw, bytes) and raw[4:8] == pid.to_bytes(4, sys.byteorder, signed=True)
        assert b"/usr/bin/head" in raw
        with pytest.raises(AttributeError, match="no field 'nope'"):
            ev.nope
        with pytest.raises(KeyError):
            ev["nope"]
    with tracemap.Stream(callback=lambda e: None) as s:
        d = s.instance_dir
        pid = os.fork()
        if pid == 0:
            fd = os.open(os.path.join(d, "trace_marker_raw"), os.O_WRONLY)
            os.write(fd, (4242).to_bytes(4, sys.byteorder) + b"raw\x00bytes")
            os._exit(0)
        os.waitpid(pid, 0)
        ev = s.read(2000)
        assert ev.name == "raw_data" and ev["id"] == 4242 and ev.buf == "raw"


# --------------------------------------------------------------- errors

def test_errors_leave_nothing_behind():
    with pytest.raises(FileNotFoundError, match="no instance 'tmtest-py-none-"):
        tracemap.Stream("tmtest-py-none-%d" % os.getpid())
    with pytest.raises(FileNotFoundError, match="'sched:no_such_event': no such event"):
        tracemap.Stream(events=["sched:no_such_event"])
    with pytest.raises(FileNotFoundError, match="ftrace events cannot be enabled"):
        tracemap.Stream(events=["ftrace:print"])
    with pytest.raises(OSError) as e:
        tracemap.Stream(cpus=[1000])
    assert e.value.errno == errno.ENXIO and "CPU 1000" in str(e.value)
    with pytest.raises(OSError) as e:
        tracemap.Stream(events=["sched:sched_switch"], filters="prev_pid >< 3")
    assert e.value.errno == errno.EINVAL and "'prev_pid >< 3'" in str(e.value)
    assert "is not valid" in str(e.value)
    with pytest.raises(ValueError, match="mode 'fast'"):
        tracemap.Stream(mode="fast")
    with pytest.raises(ValueError, match="invalid instance name"):
        tracemap.Stream("../x")
    assert not own_private_instances()
    s = tracemap.Stream()
    s.close()
    s.close()
    with pytest.raises(ValueError, match="closed"):
        s.poll(0)
    with pytest.raises(ValueError, match="no callback"):
        with tracemap.Stream() as s2:
            s2.poll(0)
    assert not own_private_instances()


# each bad argument: its exception and message, before anything in tracefs changes
BAD_ARGUMENTS = [
    (dict(instance=3), TypeError, "instance: give the name of a directory in instances/"),
    (dict(instance="a\0b"), ValueError, "invalid instance name"),
    (dict(events=3), TypeError, "events: give an event spec such as 'sched:sched_switch', a list"),
    (dict(events=[b"sched"]), TypeError, "events: give str specs .* not bytes"),
    (dict(events=" "), ValueError, "events: ' ' is not an event spec"),
    (dict(events={"sched:sched_switch": None}, filters="prev_pid != 0"), ValueError,
     "give the filters there, not also in filters="),
    (dict(events=["sched:sched_switch"], filters=["prev_pid != 0"]), TypeError,
     "filters: give one filter string for every event, or a dict .* not list"),
    (dict(events={"sched:sched_switch": 3}), TypeError,
     "filters: the filter of 'sched:sched_switch' is a str"),
    (dict(events=["sched:sched_switch"], filters={"sched:sched_waking": "pid != 0"}),
     ValueError, "filters: 'sched:sched_waking' is not one of the events"),
    (dict(filters="prev_pid != 0"), ValueError, "filters without events"),
    (dict(cpus=[]), ValueError, "cpus: the list is empty"),
    (dict(cpus=-1), ValueError, "cpus: -1 is out of range: give CPU numbers from 0 to 8191"),
    (dict(cpus=[0, 1.0]), TypeError, "cpus: give an int .* not float"),
    (dict(cpus=1.5), TypeError, "cpus: give a CPU number, a list of them or a hex mask"),
    (dict(mode=1), TypeError, "mode: give 'consume', 'follow' or 'snapshot', not int"),
    (dict(ordered="no"), TypeError, "ordered: give True or False, not 'no'"),
    (dict(self_filter=None), TypeError, "self_filter: give True or False, not None"),
    (dict(callback="print"), TypeError, r"callback: give a function fn\(event\) or None"),
    (dict(lost=3), TypeError, r"lost: give a function fn\(cpu, count\) or None"),
    (dict(timeout_ms=0.5), TypeError, "timeout_ms: give an int .* not float"),
    (dict(timeout_ms=-2), ValueError, "timeout_ms: -2 is out of range: .* -1 to wait forever"),
    (dict(timeout_ms=2**31), ValueError, "timeout_ms: 2147483648 is out of range"),
    (dict(pids=[]), ValueError, "pids: the list is empty"),
    (dict(pids=[os.getpid(), 0]), ValueError, r"pids: 0 is out of range: give process ids \(> 0\)"),
    (dict(pids="1"), TypeError, "pids: give an int"),
    (dict(follow_forks=True), ValueError, "follow_forks: give the tasks to follow in pids="),
    (dict(watermark=101), ValueError, "watermark: 101 is out of range: give a buffer_percent"),
    (dict(watermark=True), TypeError, "watermark: give an int .* not bool"),
    (dict(latency_ms=0), ValueError, r"latency_ms: 0 is out of range: .*\(> 0\)"),
    (dict(buffer_kb=-1), ValueError, "buffer_kb: -1 is out of range"),
    (dict(instance="x", buffer_kb=64), ValueError, r"buffer_kb: .*\(instance=None\) only"),
    (dict(tracefs=3), TypeError, "tracefs: give the path of the tracefs mount"),
]


@pytest.mark.parametrize("kwargs,exc,msg", BAD_ARGUMENTS)
def test_bad_argument_message(kwargs, exc, msg):
    """A bad argument raises what it is, saying what to give, and changes nothing."""
    before = own_private_instances()
    with pytest.raises(exc, match=msg):
        tracemap.Stream(**kwargs)
    assert own_private_instances() == before


def test_argument_forms(instance):
    """One event as a str, events with their filters as a dict, one CPU and one pid as int."""
    d = idir(instance)
    cpu = min(os.sched_getaffinity(0))
    with tracemap.Stream(instance, events="sched:sched_switch", cpus=cpu, pids=os.getpid(),
                         self_filter=False) as s:
        assert s.events == ["sched:sched_switch"] and s.cpus == [cpu]
        assert open(os.path.join(d, "set_event_pid")).read().split() == [str(os.getpid())]
    # follow leaves the buffer alone; without the mapping only consume exists
    with tracemap.Stream(instance, events={"sched:sched_switch": "prev_pid != 0",
                                           "sched:sched_waking": None},
                         mode="consume" if NO_MMAP else "follow") as s:
        assert s.events == ["sched:sched_switch", "sched:sched_waking"]
        assert open(os.path.join(d, "events/sched/sched_switch/filter")).read().startswith(
            "(prev_pid != 0)")
        assert open(os.path.join(d, "events/sched/sched_waking/filter")).read() != "none\n"
    assert open(os.path.join(d, "events/sched/sched_switch/filter")).read() == "none\n"
    with pytest.raises(TypeError, match=r"open_callback: give a function fn\(event\)"):
        s.open_callback(None)
    with pytest.raises(TypeError, match=r"lost: give a function fn\(cpu, count\)"):
        s.open_callback(print, 3)
    assert repr(s) == "<tracemap.Stream instance=%r cpus=[] closed>" % instance
    assert isinstance(s, tracemap.Stream) and type(s).__module__ == "tracemap"


TOP_LEVEL_SCRIPT = """
import tracemap
for top in (tracemap.TOP_LEVEL, ""):
    with tracemap.Stream(top, mode="snapshot", self_filter=False, watermark=-1) as s:
        print(s.instance, s.instance_dir, [ev.buf.strip() for ev in s if ev.name == "print"])
"""


def test_top_level_only_by_name(instance, tmp_path):
    """None is a private instance the library makes; the top level only as TOP_LEVEL or ""."""
    with tracemap.Stream() as s:
        private = s.instance
        assert private.startswith("tracemap-%d-" % os.getpid())
        assert s.instance_dir == idir(private) and os.path.isdir(s.instance_dir)
    assert private not in instances()
    with pytest.raises(ValueError, match="invalid instance name '/x'.*tracemap.TOP_LEVEL"):
        tracemap.Stream("/x")
    if NO_MMAP:
        pytest.skip("the top level is read by a snapshot, which needs the mapping: " + NO_MMAP)
    # the top level of a mount namespace where the instance is bound over tracefs, with
    # a state directory of its own: the machine's top level stays untouched
    d = idir(instance)
    write_markers(d, 5, 1)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"),
               TRACEMAP_STATE_DIR=str(tmp_path))
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount --bind "$1" "$2" && exec "$3" -c "$4"', "sh", d, TRACEFS,
                        sys.executable, TOP_LEVEL_SCRIPT], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("None %s ['pyseq=5']\n" % TRACEFS) * 2, r.stdout + r.stderr


def test_errors_do_not_leak():
    """Each raised OSError frees its arguments (the module kept one reference)."""
    name = "tmtest-py-none-%d" % os.getpid()

    def fail_many(n):
        for _ in range(n):
            try:
                tracemap.Stream(name)
            except FileNotFoundError:
                pass
    fail_many(50)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fail_many(2000)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # a leaked (errno, message) tuple is about 200 bytes: 2000 of them 400 KB
    assert grown < 40000, grown


def test_poll_from_another_thread(instance):
    """A second thread's poll() while one thread delivers says what happened."""
    started = threading.Event()
    errors = []
    with tracemap.Stream(instance, events=["sched:sched_switch"],
                         callback=lambda ev: started.set()) as s:
        def poller():
            try:
                deadline = time.monotonic() + 20
                while not stop.is_set() and time.monotonic() < deadline:
                    s.poll(100)
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        stop = threading.Event()
        t = threading.Thread(target=poller)
        t.start()
        try:
            assert started.wait(20), "no sched_switch delivered"
            msg = None
            deadline = time.monotonic() + 20
            while msg is None and time.monotonic() < deadline:
                try:
                    s.poll(0)
                except RuntimeError as e:
                    msg = str(e)
            with pytest.raises(RuntimeError, match="while thread .* delivers"):
                while time.monotonic() < deadline:
                    s.close()
                    break
        finally:
            stop.set()
            t.join()
    assert msg is not None, "poll() from a second thread was never refused"
    assert "delivering in thread %d" % t.ident in msg, msg
    assert "one thread at a time" in msg and "callback" not in msg, msg
    assert not errors, errors


FORK_CHILD_SCRIPT = """
import os, sys, tracemap
s = tracemap.Stream(events=['sched:sched_switch'], timeout_ms=100, callback=lambda e: None)
pid = os.fork()
if pid == 0:
    code = 0
    for call in (lambda: s.poll(0), lambda: s.read(0), lambda: next(iter(s)), s.consume,
                 s.stats, s.fileno, s.restore_events):
        try:
            call()
            code = 3
        except RuntimeError as e:
            if "opened by process %d" % os.getppid() not in str(e) or \
               "open a new Stream in the child" not in str(e):
                print(e)
                code = 4
    # the child's close() and exit leave the parent's stream alone
    s.close()
    os._exit(code)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
print(s.instance)
s.poll(0)
s.close()
"""


def test_fork_child_refused():
    """A fork child gets a RuntimeError from its parent's Stream, not a crash."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    r = subprocess.run([sys.executable, "-c", FORK_CHILD_SCRIPT], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    code, private = r.stdout.split()
    assert code == "0", r.stdout + r.stderr
    assert private not in instances()


SUBINTERPRETER_SCRIPT = """
import _xxsubinterpreters as si
import tracemap
s = tracemap.Stream(events=['sched:sched_switch'], callback=lambda e: None)
i = si.create()
si.run_string(i, "import tracemap; t = tracemap.Stream(mode='%s'); print(t.instance)")
# its exit closes its own stream (atexit), not this interpreter's
si.destroy(i)
print(s.closed, s.instance, flush=True)
s.poll(0)
"""


def test_subinterpreter_closes_its_own():
    """A subinterpreter that ends closes the streams it opened, and only those."""
    pytest.importorskip("_xxsubinterpreters")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    # the subinterpreter's stream follows; without the mapping it consumes
    script = SUBINTERPRETER_SCRIPT % ("consume" if NO_MMAP else "follow")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    sub, closed, main = r.stdout.split()
    assert closed == "False", "the subinterpreter's exit closed the main one's stream"
    assert sub.startswith("tracemap-") and main.startswith("tracemap-") and sub != main
    assert not {sub, main} & instances()


SIGNALS_SCRIPT = """
import os, signal, sys, tracemap
s = tracemap.Stream(events=['sched:sched_switch'])
# no handler of ours unless asked
assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
signal.signal(signal.SIGHUP, signal.SIG_IGN)
assert tracemap.exit_on_signals() == [signal.SIGTERM]
assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
print(s.instance, flush=True)
os.kill(os.getpid(), signal.SIGTERM)
signal.pause()
"""


def test_exit_on_signals_opt_in():
    """SIGTERM closes the streams only after exit_on_signals(); it keeps a program's handler."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    r = subprocess.run([sys.executable, "-c", SIGNALS_SCRIPT], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 128 + signal.SIGTERM, r.stdout + r.stderr
    private = r.stdout.strip()
    assert private.startswith("tracemap-"), r.stdout + r.stderr
    assert private not in instances()


def test_events_restored(instance):
    d = idir(instance)
    write_file(os.path.join(d, "events/sched/sched_waking/enable"), "1")
    write_file(os.path.join(d, "events/sched/sched_switch/filter"), "prev_pid != 1")
    with tracemap.Stream(instance, events=["sched:sched_switch", "sched:sched_waking"],
                         filters={"sched:sched_switch": "prev_pid != 0"}) as s:
        assert s.events == ["sched:sched_switch", "sched:sched_waking"]
        assert open(os.path.join(d, "events/sched/sched_switch/enable")).read() == "1\n"
        # the stream adds the terms that leave out its own events
        assert open(os.path.join(d, "events/sched/sched_switch/filter")).read().startswith(
            "(prev_pid != 0)")
        # restore_events() puts them back and the stream stays readable
        s.restore_events()
        assert open(os.path.join(d, "events/sched/sched_switch/enable")).read() == "0\n"
        s.read(0)
    assert open(os.path.join(d, "events/sched/sched_switch/enable")).read() == "0\n"
    assert open(os.path.join(d, "events/sched/sched_waking/enable")).read() == "1\n"
    assert open(os.path.join(d, "events/sched/sched_switch/filter")).read() == "prev_pid != 1\n"


CTRL_C_SCRIPT = r"""
import sys, tracemap
s = tracemap.Stream(sys.argv[1], events=["sched:sched_process_free"], callback=lambda ev: None)
p = tracemap.Stream(callback=lambda ev: None)
print(p.instance, flush=True)
while True:
    p.poll(-1)
"""


def test_ctrl_c_during_poll(instance):
    d = idir(instance)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C_SCRIPT, instance],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        private = proc.stdout.readline().strip()
        assert private.startswith("tracemap-"), proc.stderr.read()
        assert open(os.path.join(d, "events/sched/sched_process_free/enable")).read() == "1\n"
        time.sleep(0.3)   # let it block in poll(-1); nothing can tell from outside
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=5)[1]
        took = time.monotonic() - t0
    finally:
        kill_and_clean(proc)
    assert "KeyboardInterrupt" in err, err
    assert took < 1.0, took
    assert private not in instances()
    assert open(os.path.join(d, "events/sched/sched_process_free/enable")).read() == "0\n"


# ------------------------------------------------------------- examples

def run_example(name, args, seconds, workload):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "python", "examples", name)] +
                            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # the example prints its header once it streams
        header = proc.stdout.readline()
        workload()
        time.sleep(seconds)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        kill_and_clean(proc)
    assert proc.returncode == 0, err
    return header + out


def test_example_opensnoop(tmp_path):
    path = str(tmp_path / "opensnoop-sees-this")

    def work():
        # alive for a moment after the open, the name in memory that stays: a
        # kernel that records only the name's address (before 6.19) lets the
        # example read it from the process
        subprocess.run([sys.executable, "-c", "import os, time\np = %r\n"
                        "os.close(os.open(p, os.O_WRONLY | os.O_CREAT))\n"
                        "time.sleep(2)" % path.encode()], check=True)

    out = run_example("opensnoop.py", ["-n", "python"], 0.5, work)
    assert out.startswith("PID")
    assert re.search(r"^\d+\s+python[\d.]*\s+\d+ %s$" % re.escape(path), out, re.M), out


@pytest.mark.parametrize("name,args", [("opensnoop.py", ["-d", "60"]),
                                       ("wakeup-latency.py", ["-i", "0.2"])])
def test_example_reader_gone(tmp_path, name, args):
    """example | head: once its reader is gone it ends quietly and leaves nothing behind."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "python", "examples", name)] +
                            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout.readline()       # the header: it streams
        proc.stdout.close()
        # opens until its buffered output meets the closed pipe
        path = str(tmp_path / "opened")
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            for _ in range(100):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT))
            time.sleep(0.01)
        err = proc.communicate(timeout=10)[1]
    finally:
        kill_and_clean(proc)
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert not [i for i in instances() if i.startswith("tracemap-%d-" % proc.pid)]


def test_example_wakeup_latency():
    def work():
        subprocess.run(["sh", "-c", "for i in $(seq 50); do sleep 0.005; done"], check=True)

    out = run_example("wakeup-latency.py", ["-c", "sleep"], 0.2, work)
    assert "wake-up latency" in out
    # the last report: "sleep: N wake-ups", then its buckets, which add up to N
    reports = re.findall(r"^sleep: (\d+) wake-ups\n((?:\s+\d+ -> \d+\s+us : +\d+ .*\n)+)",
                         out, re.M)
    assert reports, out
    n, buckets = reports[-1]
    counts = [int(c) for c in re.findall(r"us : +(\d+)", buckets)]
    assert int(n) > 0 and sum(counts) == int(n), out


def test_man_page_example(tmp_path):
    """The EXAMPLE of Documentation/tracemap-python.7.txt runs and prints what it says."""
    page = open(os.path.join(ROOT, "Documentation", "tracemap-python.7.txt")).read()
    m = re.search(r"\[source,python\]\n--\n(.*?)\n--\n", page, re.S)
    assert m, "no [source,python] EXAMPLE in the page"
    prog = tmp_path / "example.py"
    prog.write_text(m.group(1) + "\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    work = subprocess.Popen(["sh", "-c", "for i in $(seq 40); do sleep 0.01; done"])
    try:
        r = subprocess.run([sys.executable, str(prog), "1"], capture_output=True, text=True,
                           env=env, timeout=30)
    finally:
        work.wait()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert 2 <= len(lines) <= 6 and re.fullmatch(r"lost: \d+", lines[-1]), r.stdout
    counts = [int(line.split()[0]) for line in lines[:-1]]
    assert all(re.fullmatch(r" *\d+ \S.*", line) for line in lines[:-1]), r.stdout
    assert counts == sorted(counts, reverse=True) and counts[0] > 0


@pytest.mark.parametrize("prefix,sitedir", [
    ("/usr", "usr/lib/python3/dist-packages"),
    ("/usr/local", "usr/local/lib/python%d.%d/dist-packages" % sys.version_info[:2]),
])
def test_make_install(tmp_path, prefix, sitedir):
    """make install puts the module where Debian's python3 finds it under PREFIX."""
    r = subprocess.run(["make", "-s", "-C", ROOT, "install-python", "PREFIX=" + prefix,
                        "DESTDIR=" + str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    d = tmp_path / sitedir
    mods = [p.name for p in d.iterdir()]
    assert mods == ["tracemap"], mods
    files = sorted(p.name for p in (d / "tracemap").iterdir())
    assert len(files) == 3 and files[:2] == ["__init__.py", "_stream.py"], files
    assert files[2].startswith("_tracemap.cpython-"), files
    # without DESTDIR, Debian's python3 searches that directory by itself
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", "import sys; print('\\n'.join(sys.path))"],
                       capture_output=True, text=True, env=env, check=True)
    assert "/" + sitedir in r.stdout.splitlines(), r.stdout
    # the installed module, not the tree's, works
    code = ("import sys, tracemap\n"
            "assert tracemap.__file__.startswith(%r), tracemap.__file__\n"
            "with tracemap.Stream(events=['sched:sched_switch'], timeout_ms=2000) as s:\n"
            "    print(next(iter(s)).name)\n" % str(d))
    env["PYTHONPATH"] = str(d)
    # the module links libtracemap.so.0: the tree's, as libtracemap0 would install it
    env["LD_LIBRARY_PATH"] = os.path.join(ROOT, "build")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=30, cwd=str(tmp_path))
    assert r.returncode == 0 and r.stdout == "sched_switch\n", r.stdout + r.stderr


# ----------------------------------------------------------------- main

if __name__ == "__main__":
    reason = kernel_check()
    if reason:
        print("SKIP: " + reason)
        sys.exit(77)
    sys.exit(pytest.main([__file__, "-v", "-p", "no:cacheprovider"] + sys.argv[1:]))
