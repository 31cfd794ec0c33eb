// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap stream CMD...: the command it traces, as trace-cmd record runs
 * one. The child is forked before the stream is opened and waits on a pipe
 * until the events are enabled, so that -F can give its pid to
 * set_event_pid and nothing it does is missed; the stream ends when it
 * exits (SIGCHLD on the stream's signalfd).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracemap-tool.h"
#include "cmd-stream.h"

static int go_fd = -1;		/* a byte lets the child exec */
static int err_fd = -1;		/* the child's errno when exec failed; EOF when it ran */
static pid_t child = -1;

int command_fork(char **argv)
{
	int go[2], err[2], e;
	sigset_t none;
	char c;

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		tool_err("pipe: %s", strerror(errno));
		return -1;
	}
	child = fork();
	if (child < 0) {
		tool_err("cannot fork for '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	if (!child) {
		/* what tracemap holds back is not the command's business */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		close(go[1]);
		close(err[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* tracemap gave up before starting it */
		/*
		 * Woken by tracemap, the child counts as caused by it until it
		 * blocks (libtracemap-stream(3), TRACEMAP_STREAM_NO_SELF): a
		 * short sleep, woken by a timer, makes the command the system's.
		 */
		usleep(1000);
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) != sizeof(e))
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	go_fd = go[1];
	err_fd = err[0];
	return child;
}

int command_start(const char *name)
{
	ssize_t n;
	int e = 0;

	if (go_fd < 0)
		return 0;
	if (write(go_fd, "g", 1) != 1)
		e = errno;
	close(go_fd);
	go_fd = -1;
	/* the exec closes the pipe (EOF); a failed one sends its errno */
	do {
		n = read(err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(err_fd);
	err_fd = -1;
	if (n > 0 || e) {
		tool_err("cannot run '%s': %s", name, strerror(e));
		return -1;
	}
	return 0;
}

void command_abort(void)
{
	int status;

	if (err_fd >= 0) {
		close(err_fd);
		err_fd = -1;
	}
	/* a command that runs is left to run: a signal to tracemap is not meant for it */
	if (child <= 0 || go_fd < 0)
		return;
	/* EOF: it exits without running anything */
	close(go_fd);
	go_fd = -1;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	child = -1;
}

bool command_exited(void)
{
	siginfo_t si;

	/* children the stream did not start (inherited through an exec): reaped, not ours to stop for */
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) || !si.si_pid)
			return false;
		if (si.si_pid == child)
			return true;
		waitpid(si.si_pid, NULL, WNOHANG);
	}
}

bool command_ended(int *status)
{
	if (child <= 0)
		return true;
	if (waitpid(child, status, WNOHANG) != child)
		return false;
	child = -1;
	return true;
}
