// SPDX-License-Identifier: GPL-2.0-only
/*
 * tc-fifo-feed: serve one file per reader through a FIFO. The reader that
 * opens the FIFO first reads FILE1 to its end of file; each later reader
 * reads FILE2. The next file is offered only once no process holds the
 * FIFO open any more, so two readers one after the other never share a
 * stream. (A reader blocked in open() has no descriptor yet.)
 *
 *   tc-fifo-feed FIFO FILE1 FILE2
 *
 * Runs until killed; exits 1 on an error or when a reader keeps the FIFO
 * open for 30 s after its end of file.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* Some process has a descriptor on the file @fifo is. */
static bool held_open(const struct stat *fifo)
{
	struct dirent *p, *f;
	bool found = false;
	DIR *proc, *fds;
	char path[600];
	struct stat st;

	proc = opendir("/proc");
	if (!proc)
		return true;
	while (!found && (p = readdir(proc))) {
		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!found && (f = readdir(fds))) {
			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name, f->d_name);
			found = !stat(path, &st) && st.st_dev == fifo->st_dev &&
				st.st_ino == fifo->st_ino;
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

static int serve(const char *fifo, const struct stat *fst, const char *file)
{
	char buf[4096];
	int in, out, i;
	ssize_t n;

	in = open(file, O_RDONLY);
	if (in < 0) {
		perror(file);
		return -1;
	}
	/* blocks until a reader opens the FIFO */
	out = open(fifo, O_WRONLY);
	if (out < 0) {
		perror(fifo);
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	close(out);
	close(in);
	if (n) {
		perror(n < 0 ? file : fifo);
		return -1;
	}
	/* end of file for the reader; the next file only after it closed */
	for (i = 0; i < 6000; i++) {
		if (!held_open(fst))
			return 0;
		usleep(5000);
	}
	fprintf(stderr, "tc-fifo-feed: %s was still open 30 s after its end of file\n", fifo);
	return -1;
}

int main(int argc, char **argv)
{
	struct stat fst;

	if (argc != 4) {
		fprintf(stderr, "usage: tc-fifo-feed FIFO FILE1 FILE2\n");
		return 2;
	}
	if (stat(argv[1], &fst) || !S_ISFIFO(fst.st_mode)) {
		fprintf(stderr, "tc-fifo-feed: %s is not a FIFO\n", argv[1]);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if (serve(argv[1], &fst, argv[2]))
		return 1;
	for (;;)
		if (serve(argv[1], &fst, argv[3]))
			return 1;
}
