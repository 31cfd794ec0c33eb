/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared helpers of the C tests: private tracefs instances that are removed
 * even when a test fails or is killed (tracefs-instance.h), marker writers and a writer thread,
 * CPU pinning, collecting and checking the markers a reader delivers, and
 * the fixture of the kernel tests that ties these together.
 */
#ifndef _TRACEMAP_TEST_HARNESS_H
#define _TRACEMAP_TEST_HARNESS_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tracemap.h"
#include "tracefs-instance.h"

#define TEST_SKIP	77

/* tracefs mount point, or NULL (then kernel tests skip) */
static inline const char *th_tracefs(void)
{
	return ti_tracefs();
}

/*
 * Exit 77 with the reason unless this kernel can map trace_pipe_raw in a
 * fresh instance. Call first in every kernel test program.
 */
void th_require_mmap(void);

/*
 * For a program whose read() cases run without the mapping: exit 77 only
 * without tracefs; th_fixture_open() then skips the cases that need the
 * mapping and th_fixture_new() those of sub-buffers over 4 KiB where the
 * kernel cannot size them. th_have_mmap() tells the others.
 */
void th_require_tracefs(void);
bool th_have_mmap(void);

/* ------------------------------------------------ backends of a case */

/*
 * A consuming case that means the same through the mapping and through
 * read() is listed twice (TH_BOTH()), with its backend as cmocka's initial
 * state, and starts with th_backend_case(). Through read() a stream or
 * reader opened with th_cpu_flags(): where the kernel cannot map, no flag
 * (the library must fall back by itself), elsewhere TRACEMAP_CPU_FORCE_READ.
 * A case about the mapping calls th_mapping_case() instead: it skips, with
 * the reason, on a kernel without the mapping. The backend holds until the
 * next case says its own, or th_fixture_teardown() ends it.
 */
enum th_backend {
	TH_NATIVE,			/* what the kernel gives (a NULL state) */
	TH_MMAP,
	TH_READ,
};

extern const enum th_backend th_backends[3];
#define TH_ON(b)	((void *)&th_backends[b])
#define TH_BOTH(fn, setup, teardown) \
	{ #fn " mmap", fn, setup, teardown, TH_ON(TH_MMAP) }, \
	{ #fn " read", fn, setup, teardown, TH_ON(TH_READ) }

/*
 * Start a case on the backend of @state (NULL: TH_NATIVE): a mapping case
 * skips where the kernel cannot map. Prints the backend. Returns it.
 */
enum th_backend th_backend_case(void **state);
/* A case about the mapping (@what): skips with the reason where the kernel cannot map */
void th_mapping_case(const char *what);
/* The running case reads through read() (asked for, or the kernel's only way) */
bool th_on_read(void);
/* tracemap_cpu_opts.flags, tracemap_stream_opts.cpu_flags of the running case */
unsigned int th_cpu_flags(void);
/* Every reader of @s is on the running case's backend: no silent fallback */
void th_assert_stream_backend(const struct tracemap_stream *s);

/*
 * ti_instance_create() (instance "tmtest-<tag>-<pid>-<n>"), which also
 * removes it when the test crashes or times out: on SIGSEGV, SIGABRT,
 * SIGBUS and SIGALRM besides exit, SIGINT, SIGTERM and SIGHUP.
 */
const char *th_instance_create(const char *tag, int buffer_kb, int subbuf_kb);

static inline void th_instance_remove(const char *name)
{
	ti_instance_remove(name);
}

/* Write @val to <instance>/<file>; returns 0 or -errno. */
static inline int th_instance_write(const char *name, const char *file, const char *val)
{
	return ti_instance_write(name, file, val);
}

/* Read <instance>/<file> into a malloc'ed string; NULL on error. */
static inline char *th_instance_read(const char *name, const char *file)
{
	return ti_instance_read(name, file);
}

/*
 * The value after @stat (e.g. "overrun:") in <instance>/per_cpu/cpu<cpu>/stats;
 * asserts that the file has it.
 */
unsigned long th_cpu_stat(const char *name, int cpu, const char *stat);

/* Pin the calling thread to @cpu. */
void th_pin(int cpu);
/* Remember the calling thread's CPU affinity; th_restore_affinity() sets it again. */
void th_save_affinity(void);
void th_restore_affinity(void);

/* CLOCK_MONOTONIC in nanoseconds */
uint64_t th_now_ns(void);

/* ------------------------------------------------------------- markers */

/*
 * The tests' markers are "seq=%08u cpu=%d": the sequence number proves
 * exactly-once delivery, the CPU where the writer ran its placement, and
 * the fixed width keeps every record the same size, so that the events per
 * sub-buffer follow from one measured record.
 */

/* Open <instance>/trace_marker (or trace_marker_raw when raw) for writing. */
int th_marker_open(const char *name, int raw);
/*
 * Write marker @seq, stamped with the calling thread's CPU; returns 0 or
 * -errno (-EIO for a short write).
 */
int th_write_marker(int fd, unsigned int seq);
/* The same marker padded with 'x' to @size bytes (at most 4000; shorter: not padded) */
int th_write_marker_sized(int fd, unsigned int seq, unsigned int size);
/* Write markers first..first+count-1; returns 0 or -errno. */
int th_write_markers(int fd, unsigned int first, unsigned int count);

/* Parse "seq=N" from a decoded ftrace:print payload; -1 if none. */
long th_marker_seq(const void *payload, unsigned int size);
/* Parse "cpu=N" from a decoded ftrace:print payload; -1 if none. */
int th_marker_cpu(const void *payload, unsigned int size);

/*
 * Bytes of one marker record in the ring buffer, measured in a fresh
 * instance (tag @tag) on CPU 0, where it pins the caller; 0 if it could not
 * be measured. Kept for th_markers_per_subbuf().
 */
unsigned int th_measure_marker_record(const char *tag);
/* Markers that fill one sub-buffer of @subbuf_kb (after th_measure_marker_record()) */
unsigned int th_markers_per_subbuf(int subbuf_kb);

/* --------------------------------------------------- collected markers */

struct th_event {
	uint64_t ts;
	long seq;
	long long missed;
	int cpu;			/* CPU the reader reported with the event */
	int wcpu;			/* CPU the writer ran on, from the payload */
};

/* Markers in the order they arrived; all zero is empty */
struct th_events {
	struct th_event *ev;
	unsigned int n;
	unsigned int cap;
};

/*
 * Append @ev, which must be one of our markers: only they are written to
 * the private instances, so anything else is a decoding error. Returns the
 * new entry.
 */
struct th_event *th_events_add(struct th_events *g, const struct tracemap_event *ev);
/* Free and empty @g */
void th_events_free(struct th_events *g);

/* Bounds every loop that reads a reader dry */
#define TH_DRAIN_LIMIT	(1u << 22)

/*
 * Read @c dry through tracemap_cpu_next_event() into @g; each event must
 * come with the reader's CPU. Returns the number of events.
 */
unsigned int th_drain_events(struct tracemap_cpu *c, struct th_events *g);

/*
 * Append the markers of <instance>/<file>, a text file of the kernel's own
 * iterator (trace, per_cpu/cpuN/trace), in its order: only seq is known.
 */
void th_trace_markers(const char *name, const char *file, struct th_events *g);

/*
 * Exactly @count events from index @from on, the last one at the end of @g:
 * seq @first, @first + 1, ..., none with a loss reported.
 */
void th_assert_seq_run(const struct th_events *g, unsigned int from, long first,
		       unsigned int count);

/* -------------------------------------------------------- writer thread */

/* A thread writing markers 0..count-1 from @cpu, paced by spinning on the clock */
struct th_writer {
	pthread_t thread;
	bool started;
	int fd;
	int cpu;
	unsigned int count;		/* atomic: th_writer_cancel() lowers it */
	unsigned int rate;		/* events per second, 0: as fast as possible */
	unsigned int size;		/* bytes per marker (padded after the fields), 0: no padding */
	unsigned int written;		/* atomic: events written so far */
	int error;			/* atomic: -errno of a failed write */
};

/* Start writing @count markers at @rate per second to <instance>/trace_marker */
void th_writer_start(struct th_writer *w, const char *name, int cpu, unsigned int count,
		     unsigned int rate);
/* As th_writer_start(), with each marker padded to @size bytes (at most 4000) */
void th_writer_start_sized(struct th_writer *w, const char *name, int cpu, unsigned int count,
			   unsigned int rate, unsigned int size);
/* Let the writer end after the marker it is writing */
void th_writer_cancel(struct th_writer *w);
/* Wait until the writer ended (its loop is bounded by its count); no-op if not started */
void th_writer_join(struct th_writer *w);
unsigned int th_writer_written(const struct th_writer *w);
/* All written, or a write failed */
bool th_writer_done(const struct th_writer *w);
/*
 * Wait until @n markers are written, the writer is done or th_now_ns()
 * reaches @deadline_ns; returns the number written.
 */
unsigned int th_writer_wait(const struct th_writer *w, unsigned int n, uint64_t deadline_ns);

/* ------------------------------------------------------------- fixture */

#define TH_MAX_READERS	4
#define TH_FIXTURE_GOT	3

/*
 * What a kernel test holds: its private instance, a trace_marker fd, the
 * per-CPU readers open on it, a writer thread and what it collected. Call
 * th_fixture_drop() from the teardown: it runs after a failed assertion too.
 */
struct th_fixture {
	const char *tag;		/* of the instance names */
	const char *inst;
	int marker;			/* trace_marker of inst, or -1 */
	struct tracemap_cpu *rd[TH_MAX_READERS];
	struct th_writer w;
	struct th_events got[TH_FIXTURE_GOT];
};

#define TH_FIXTURE(t)	{ .tag = (t), .marker = -1 }

/* Drop what @f holds, then a new instance (see th_instance_create()) and its trace_marker */
void th_fixture_new(struct th_fixture *f, int buffer_kb, int subbuf_kb);
/* Join the writer, close the readers and the marker, remove the instance, empty got[] */
void th_fixture_drop(struct th_fixture *f);
/* Empty every got[] */
void th_fixture_clear_got(struct th_fixture *f);
/*
 * Open a reader of @cpu, closed by th_fixture_drop() unless closed before.
 * Asserts the mode and the backend: read() with TRACEMAP_CPU_FORCE_READ or
 * in a read() case (TH_BOTH()), else the mapping (skips without it): a
 * silent fallback to read() would test the wrong one.
 */
struct tracemap_cpu *th_fixture_open(struct th_fixture *f, int cpu, enum tracemap_mode mode,
				     unsigned int flags);
void th_fixture_close(struct th_fixture *f, struct tracemap_cpu *c);
/* Write markers first..first+count-1 from the calling thread's CPU */
void th_fixture_write_markers(struct th_fixture *f, unsigned int first, unsigned int count);
/*
 * A consuming reader of CPU 0 (@flags) in a new instance of @buffer_kb KiB,
 * the thread pinned to CPU 0, markers 0..@count-1 written and the first
 * @taken of them read, each checked.
 */
struct tracemap_cpu *th_fixture_consume_markers(struct th_fixture *f, int buffer_kb,
						unsigned int flags, unsigned int count,
						unsigned int taken);

/*
 * The main() of a kernel test over the fixture @f: exit 77 without tracefs
 * (the cases of the mapping skip one by one), the thread's CPU affinity
 * saved, and after every test (give each th_fixture_teardown) and the group
 * @f dropped and the affinity restored. Returns the exit status.
 */
int th_fixture_run(const char *name, const struct CMUnitTest *tests, size_t n,
		   struct th_fixture *f);
#define th_fixture_run_tests(tests, f) \
	th_fixture_run(#tests, tests, sizeof(tests) / sizeof((tests)[0]), f)
int th_fixture_teardown(void **state);

#endif
