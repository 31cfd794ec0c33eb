/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The kernel's ring-buffer mapping ABI (include/uapi/linux/trace_mmap.h,
 * Linux >= 6.10), carried here because Debian 12's linux-libc-dev has no
 * such header. Field offsets are fixed by the ABI; newer kernels may append
 * fields, which meta_struct_len announces.
 */
#ifndef _TRACEMAP_UAPI_TRACE_MMAP_H
#define _TRACEMAP_UAPI_TRACE_MMAP_H

#include <linux/types.h>
#include <sys/ioctl.h>

struct trace_buffer_meta {
	__u32	meta_page_size;		/* bytes before sub-buffer 0 */
	__u32	meta_struct_len;	/* sizeof this struct in the running kernel */
	__u32	subbuf_size;		/* full sub-buffer size, header included */
	__u32	nr_subbufs;		/* ring sub-buffers + the reader sub-buffer */
	struct {
		__u64	lost_events;
		__u32	id;		/* sub-buffer id of the reader page */
		__u32	read;		/* bytes of it handed out */
	} reader;
	__u64	flags;
	__u64	entries;		/* events written since the last reset */
	__u64	overrun;		/* events overwritten since the last reset */
	__u64	read;			/* events consumed since the last reset */
	__u64	Reserved1;
	__u64	Reserved2;
};

/* Minimum meta_struct_len this library needs: everything up to ->read. */
#define TRACE_BUFFER_META_MIN_LEN	64

#define TRACE_MMAP_IOCTL_GET_READER	_IO('R', 0x20)

#endif /* _TRACEMAP_UAPI_TRACE_MMAP_H */
