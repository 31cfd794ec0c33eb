// SPDX-License-Identifier: GPL-2.0-only
/*
 * The text formatter without a kernel: tests/kernel/test-format's
 * comparisons with libtraceevent (synthetic payloads for every field, the
 * API, task names, a foreign plugin handler) over the event formats stored
 * in tests/unit/formats, captured from a 6.18 kernel's
 * events/<system>/<event>/format and parsed with tep_parse_event(). Run
 * from the top of the source tree, as make check does.
 *
 * timeout: 120
 */
#define TM_STORED_FORMATS	"tests/unit/formats"
#include "../kernel/test-format.c"
