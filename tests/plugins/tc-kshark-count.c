// SPDX-License-Identifier: GPL-2.0-only
/*
 * tc-kshark-count: open a trace.dat with KernelShark's library (headless, as
 * the GUI does: every buffer of the file) and print what it loaded:
 *
 *   streams S entries N markers M overflow O
 *
 * markers counts ftrace/print entries whose info holds "seq="; overflow
 * counts the entries libkshark makes for dropped events. Exit 0 when the
 * file loaded, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libkshark.h>
#include <libkshark-tepdata.h>

int main(int argc, char **argv)
{
	struct kshark_context *ctx = NULL;
	struct kshark_entry **data = NULL;
	long markers = 0, overflow = 0;
	ssize_t n, i;
	int sd, extra;

	if (argc != 2) {
		fprintf(stderr, "usage: tc-kshark-count FILE.dat\n");
		return 2;
	}
	if (!kshark_instance(&ctx)) {
		fprintf(stderr, "tc-kshark-count: kshark_instance failed\n");
		return 1;
	}
	sd = kshark_open(ctx, argv[1]);
	if (sd < 0) {
		fprintf(stderr, "tc-kshark-count: kshark_open(%s) failed: %d\n", argv[1], sd);
		kshark_free(ctx);
		return 1;
	}
	extra = kshark_tep_init_all_buffers(ctx, sd);
	if (extra < 0) {
		fprintf(stderr, "tc-kshark-count: cannot open the buffers of %s\n", argv[1]);
		return 1;
	}
	n = kshark_load_all_entries(ctx, &data);
	if (n < 0) {
		fprintf(stderr, "tc-kshark-count: loading %s failed\n", argv[1]);
		return 1;
	}
	for (i = 0; i < n; i++) {
		char *name, *info;

		if (data[i]->event_id == KS_EVENT_OVERFLOW) {
			overflow++;
		} else {
			name = kshark_get_event_name(data[i]);
			if (name && !strcmp(name, "ftrace/print")) {
				info = kshark_get_info(data[i]);
				if (info && strstr(info, "seq="))
					markers++;
				free(info);
			}
			free(name);
		}
		free(data[i]);
	}
	free(data);
	printf("streams %d entries %zd markers %ld overflow %ld\n", extra + 1, n, markers,
	       overflow);
	kshark_close_all(ctx);
	kshark_free(ctx);
	return 0;
}
