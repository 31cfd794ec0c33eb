/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KernelShark plugin of tracemap: what the input part (tracemap-input.c, C)
 * tells the menu part (tracemap-menu.cpp, C++/Qt5). Both live in one
 * plugin-tracemap.so; nothing here is exported from it.
 */
#ifndef _TRACEMAP_KS_H
#define _TRACEMAP_KS_H

#ifdef __cplusplus
extern "C" {
#endif

#define TMKS_HIDDEN __attribute__((visibility("hidden")))

#define TMKS_FOLLOW_MS_MAX	3600000	/* as tracemap view --follow */

/*
 * The path (instance directory, tracefs mount or descriptor file) of the
 * live buffer opened last, or NULL when none was: what a refresh reopens.
 */
TMKS_HIDDEN const char *tmks_live_source(void);

/* The number of events in the copy opened last. */
TMKS_HIDDEN unsigned long long tmks_live_events(void);

/*
 * The follow period in ms asked for by the descriptor file opened last or,
 * failing that, by TRACEMAP_FOLLOW_MS in the environment (an invalid value
 * is said once and ignored); 0 when neither.
 */
TMKS_HIDDEN int tmks_follow_ms(void);

/*
 * The input part opened a live buffer (from any thread: KernelShark loads in
 * a worker): the menu part, when loaded, starts following if asked to.
 */
TMKS_HIDDEN void tmks_opened(void);

#ifdef __cplusplus
}
#endif

#endif /* _TRACEMAP_KS_H */
