// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap view: KernelShark on the live ring buffer of an instance, through
 * tracemap's KernelShark plugin (plugins/kernelshark/), nothing consumed.
 *
 * Without -B a private instance tracemap-view-<pid> is created with the -e
 * events and the -b buffer size, and removed when KernelShark exits, is
 * killed, or this command gets SIGINT/SIGTERM/SIGHUP (which it passes on to
 * KernelShark first). With -B the events it enabled and the buffer size it
 * changed are put back. Signals are held from the start and read through a
 * signalfd, so setup and restore are never cut short.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

#define STOP_WAIT_MS	10000	/* KernelShark's time to exit after SIGTERM */
#define PLUGIN_NAME	"plugin-tracemap.so"

struct view_opts {
	struct tool_buffer buf;	/* -B, -e, -b */
	int follow_ms;		/* --follow, 0: off */
	const char *kernelshark;
};

enum { OPT_FOLLOW = 256, OPT_KERNELSHARK };

static int parse_args(int argc, char **argv, struct view_opts *o)
{
	static const struct option longopts[] = {
		{ "follow", required_argument, NULL, OPT_FOLLOW },
		{ "kernelshark", required_argument, NULL, OPT_KERNELSHARK },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct tool_int_opt ints[] = {
		{ OPT_FOLLOW, "--follow", 1, 3600000, &o->follow_ms },
		{ 0 },
	};
	int c;

	o->buf.ints = ints;
	opterr = 0;
	while ((c = tool_getopt(argc, argv, "+B:e:b:h", longopts, &o->buf)) != -1) {
		switch (c) {
		case '!':
			return -1;
		case OPT_KERNELSHARK:
			o->kernelshark = optarg;
			break;
		case 'h':
			tool_usage(stdout);
			exit(0);
		default:
			return tool_opt_error(argv, "Beb", OPT_FOLLOW, OPT_KERNELSHARK);
		}
	}
	/* on this function's stack */
	o->buf.ints = NULL;
	return tool_end_args(argc, argv, o->buf.instance, false);
}

/*
 * The plugin next to this program in the build tree, else the name that
 * KernelShark resolves in its own plugin directory (make install puts it there).
 */
static void plugin_path(char *buf, size_t size)
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buf, size, "%s/plugins/kernelshark/" PLUGIN_NAME, self);
			if (!access(buf, R_OK))
				return;
		}
	}
	snprintf(buf, size, "tracemap");
}

static pid_t start_kernelshark(const struct view_opts *o, const char *dir, const sigset_t *held)
{
	char plugin[PATH_MAX], follow[16];
	const char *ks = o->kernelshark ? o->kernelshark : "kernelshark";
	pid_t pid;

	plugin_path(plugin, sizeof(plugin));
	pid = fork();
	if (pid < 0) {
		tool_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid)
		return pid;

	/* KernelShark ends with us if we are killed outright */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	sigprocmask(SIG_UNBLOCK, held, NULL);
	if (o->follow_ms) {
		snprintf(follow, sizeof(follow), "%d", o->follow_ms);
		setenv("TRACEMAP_FOLLOW_MS", follow, 1);
	}
	execlp(ks, ks, "-p", plugin, dir, (char *)NULL);
	tool_err("cannot run %s: %s (install the Debian package kernelshark, or give"
		 " --kernelshark PATH)", ks, strerror(errno));
	_exit(127);
}

/* Wait for KernelShark; on a stop signal pass SIGTERM on, then SIGKILL after STOP_WAIT_MS. */
static int wait_kernelshark(pid_t pid, int sfd)
{
	struct signalfd_siginfo si;
	bool stopping = false;
	struct pollfd pfd = { .fd = sfd, .events = POLLIN };
	int status;

	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			tool_err("waitpid: %s", strerror(errno));
			return 1;
		}
		if (poll(&pfd, 1, stopping ? STOP_WAIT_MS : -1) == 0) {
			tool_err("KernelShark did not exit within %d ms of SIGTERM: killing it",
				 STOP_WAIT_MS);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo != SIGCHLD && !stopping) {
				stopping = true;
				kill(pid, SIGTERM);
			}
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return 1;
	if (stopping && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
		return 0;
	if (WIFSIGNALED(status))
		tool_err("KernelShark was killed by signal %d", WTERMSIG(status));
	else
		tool_err("KernelShark exited with status %d", WEXITSTATUS(status));
	return 1;
}

int cmd_view(int argc, char **argv)
{
	struct tracemap_instance *inst = NULL;
	struct view_opts o = { 0 };
	struct tracemap_events *events = NULL;
	char dir[PATH_MAX];
	bool private = false;
	int sfd = -1, ret = 1;
	const char *tfs, *iname;
	sigset_t sigs;
	pid_t pid;

	tool_hold_signals(&sigs, false);

	o.buf.specs = calloc(argc, sizeof(*o.buf.specs));
	if (!o.buf.specs || parse_args(argc, argv, &o))
		goto out;
	if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
		tool_err("no display (DISPLAY is not set): run tracemap view in a graphical"
			 " session, or with ssh -X");
		goto out;
	}
	tfs = tool_tracefs();
	if (!tfs)
		goto out;
	if (tool_instance_dir(o.buf.instance, dir, sizeof(dir))) {
		if (o.buf.instance && *o.buf.instance)
			tool_err("(without -B, tracemap view shows a private instance)");
		goto out;
	}
	sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		tool_err("signalfd: %s", strerror(errno));
		goto out;
	}

	/* the library makes the private instance and sets -b, each change in its crash record */
	inst = tool_instance_open(tfs, o.buf.instance, "tracemap-view", o.buf.buffer_kb, NULL,
				  &iname, &private);
	if (!inst)
		goto out;
	/* the plugin reads through the mapping: refuse here, not in its window */
	if (tool_check_mappable(iname))
		goto out;
	tool_warn_tracing_off(tfs, iname);
	/* a failure is explained by the library (libtracemap-print(3)) */
	events = tracemap_events_enable(iname, o.buf.specs, o.buf.nr_specs, tfs);
	if (!events)
		goto out;

	snprintf(dir, sizeof(dir), "%s/instances/%s", tfs, iname);
	pid = start_kernelshark(&o, dir, &sigs);
	if (pid < 0)
		goto out;
	fprintf(stderr, "tracemap: KernelShark shows the live buffer of %s%s (Tools -> tracemap:"
		" refresh now, follow, tail mode, stop following)%s\n", private ? "the private instance " :
		"instance ", iname, private ? "; it is removed when KernelShark exits" : "");
	ret = wait_kernelshark(pid, sfd);
out:
	tracemap_events_restore(events);
	/* the size put back, a private instance removed (the library says why it could not) */
	if (tracemap_instance_close(inst))
		ret = 1;
	free(o.buf.specs);
	if (sfd >= 0)
		close(sfd);
	return ret;
}
