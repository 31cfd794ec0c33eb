// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a dump goes (tracemap snapshot -o, tracemap flight -o): nothing the
 * tool did not create in this run is ever removed or replaced.
 *
 * A regular file or a name that does not exist is written as a new
 * temporary file in the same directory and renamed onto the name only once
 * the write succeeded (a name that does not exist must still not exist
 * then). A FIFO, a terminal and "-" (standard output) are written
 * directly, and a failed write to them removes nothing. Anything else (a
 * symbolic link, a device node, a socket, a directory) is refused with a
 * message: the tool never writes through a link or into a device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tracemap-tool.h"

/*
 * Whether the character device @dev is a terminal, from the kernel's list of
 * tty drivers (/proc/tty/drivers), without opening it: opening an unknown
 * device can have effects of its own (a watchdog starts counting). A pty
 * master and /dev/ptmx are not terminals one writes a file to.
 */
static bool tty_device(dev_t dev)
{
	unsigned int maj, lo, hi;
	char line[256], type[64];
	bool tty = false;
	FILE *f;
	int n;

	f = fopen("/proc/tty/drivers", "re");
	if (!f)
		return false;
	while (!tty && fgets(line, sizeof(line), f)) {
		/* "pty_slave  /dev/pts  136 0-1048575 pty:slave" */
		n = sscanf(line, "%*s %*s %u %u-%u %63s", &maj, &lo, &hi, type);
		if (n == 2) {
			/* a single minor: "/dev/tty  /dev/tty  5  0 system:/dev/tty" */
			hi = lo;
			n = 3 + sscanf(line, "%*s %*s %*u %*u %63s", type);
		}
		if (n != 4 || maj != major(dev) || minor(dev) < lo || minor(dev) > hi)
			continue;
		tty = strcmp(type, "pty:master") && !(maj == 5 && lo == 2);
	}
	fclose(f);
	return tty;
}

int tool_out_kind(const char *path, const char *opt, bool dir_ok)
{
	struct stat st;

	if (!strcmp(path, "-"))
		return TOOL_OUT_DIRECT;
	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return TOOL_OUT_NEW;
		tool_err("%s %s: %s: give another file name", opt, path, strerror(errno));
		return -1;
	}
	if (S_ISREG(st.st_mode))
		return TOOL_OUT_REGULAR;
	if (S_ISFIFO(st.st_mode) || (S_ISCHR(st.st_mode) && tty_device(st.st_rdev)))
		return TOOL_OUT_DIRECT;
	if (S_ISDIR(st.st_mode) && dir_ok)
		return TOOL_OUT_DIR;
	if (S_ISLNK(st.st_mode))
		tool_err("%s %s is a symbolic link: tracemap does not write through links; give "
			 "the file it points to, or '-' for standard output", opt, path);
	else if (S_ISDIR(st.st_mode))
		tool_err("%s %s is a directory: give a file name in it", opt, path);
	else
		tool_err("%s %s is a %s: tracemap writes only to a regular file, a FIFO or a "
			 "terminal; give a file name, or '-' and redirect standard output", opt,
			 path, S_ISCHR(st.st_mode) ? "device node" : S_ISBLK(st.st_mode) ?
			 "block device" : S_ISSOCK(st.st_mode) ? "socket" : "special file");
	return -1;
}

/* A new file beside @path, made by us: ".NAME.tracemap-PID-N" */
static int open_temp(struct tool_out *f)
{
	const char *slash = strrchr(f->path, '/');
	int dirlen = slash ? (int)(slash - f->path + 1) : 0;
	int n;

	for (n = 0; n < 1000; n++) {
		free(f->tmp);
		f->tmp = NULL;
		if (asprintf(&f->tmp, "%.*s.%s.tracemap-%d-%d", dirlen, f->path,
			     f->path + dirlen, (int)getpid(), n) < 0) {
			f->tmp = NULL;
			errno = ENOMEM;
			return -1;
		}
		f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (f->fd >= 0 || errno != EEXIST)
			break;
	}
	if (f->fd < 0) {
		free(f->tmp);
		f->tmp = NULL;
	}
	return f->fd < 0 ? -1 : 0;
}

int tool_out_open(struct tool_out *f, const char *path, const char *opt)
{
	struct stat st;
	int kind;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->path = path;
	kind = tool_out_kind(path, opt, false);
	if (kind < 0)
		return -1;
	f->kind = kind;
	if (!strcmp(path, "-")) {
		f->fd = STDOUT_FILENO;
		return 0;
	}
	if (kind == TOOL_OUT_DIRECT) {
		/* no O_CREAT: if it is gone or was swapped for a link, nothing is made */
		f->fd = open(path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
		if (f->fd >= 0 && !fstat(f->fd, &st) && !S_ISFIFO(st.st_mode) && !isatty(f->fd)) {
			close(f->fd);
			f->fd = -1;
			tool_err("%s %s changed while it was opened: give it again", opt, path);
			return -1;
		}
		if (f->fd < 0) {
			tool_err("cannot open %s: %s: give a writable %s path", path, strerror(errno),
				 opt);
			return -1;
		}
		return 0;
	}
	if (open_temp(f)) {
		tool_err("cannot create a file beside %s: %s: give a writable %s path", path,
			 strerror(errno), opt);
		return -1;
	}
	/* a file that is replaced keeps its permissions */
	if (kind == TOOL_OUT_REGULAR && !stat(path, &st))
		fchmod(f->fd, st.st_mode & 07777);
	return 0;
}

/* Put the finished temporary file on f->path; the caller explains a failure. */
static int place(struct tool_out *f)
{
	struct stat st;

	if (f->kind == TOOL_OUT_NEW) {
		/* the name must still be free: whatever appeared there meanwhile stays */
		if (!renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path, RENAME_NOREPLACE))
			return 0;
		if (errno != EINVAL && errno != ENOSYS)
			return -1;
		if (!link(f->tmp, f->path)) {
			unlink(f->tmp);
			return 0;
		}
		if (errno == EEXIST)
			return -1;
	}
	/* a regular file (or a file system without the above): only over a regular file */
	if (!lstat(f->path, &st) && !S_ISREG(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	return rename(f->tmp, f->path);
}

int tool_out_commit(struct tool_out *f)
{
	int ret = 0;

	if (f->fd < 0)
		return -1;
	if (f->fd != STDOUT_FILENO && close(f->fd))
		ret = -1;
	f->fd = -1;
	if (ret) {
		tool_err("cannot write %s: %s", f->path, strerror(errno));
		tool_out_abort(f);
		return -1;
	}
	if (!f->tmp)
		return 0;
	if (place(f)) {
		tool_err("cannot put the dump on %s: %s%s; it is kept as %s", f->path,
			 strerror(errno), errno == EEXIST ?
			 " (something else took the name while the dump was written)" : "",
			 f->tmp);
		free(f->tmp);
		f->tmp = NULL;
		return -1;
	}
	free(f->tmp);
	f->tmp = NULL;
	return 0;
}

void tool_out_abort(struct tool_out *f)
{
	if (f->fd >= 0 && f->fd != STDOUT_FILENO)
		close(f->fd);
	f->fd = -1;
	/* only the file this run made; a FIFO, a terminal or stdout keep what they got */
	if (f->tmp)
		unlink(f->tmp);
	free(f->tmp);
	f->tmp = NULL;
}
