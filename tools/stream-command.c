// SPDX-License-Identifier: LGPL-2.1
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

static int go_fd = -1;
static pid_t child = -1;

int command_fork(char **argv)
{
	sigset_t none;
	int p[2];
	char c;

	if (pipe2(p, O_CLOEXEC)) {
		tool_err("pipe: %s", strerror(errno));
		return -1;
	}
	child = fork();
	if (child < 0) {
		tool_err("cannot fork for '%s': %s", argv[0], strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!child) {
		/* what tracemap holds back is not the command's business */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);	/* tracemap gave up before starting it */
		execvp(argv[0], argv);
		fprintf(stderr, "tracemap: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	go_fd = p[1];
	return child;
}

void command_start(void)
{
	if (go_fd < 0)
		return;
	if (write(go_fd, "g", 1) != 1)
		tool_err("cannot start the command: %s", strerror(errno));
	close(go_fd);
	go_fd = -1;
}

void command_abort(void)
{
	int status;

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

bool command_ended(int *status)
{
	if (child <= 0)
		return true;
	if (waitpid(child, status, WNOHANG) != child)
		return false;
	child = -1;
	return true;
}
