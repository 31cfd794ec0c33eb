# SPDX-License-Identifier: GPL-2.0-only
#
# tracemap top-level build. Each area adds its objects, programs and tests
# in its own Build.mk; this file holds the rules they share.
#
#   make                 library, tools and plugins
#   make check           install missing packages, build with -Werror, run every test
#   make bench           benchmarks (not tests)
#   make run             the README's main job: tracemap stream on a private instance
#   make doc             man pages (asciidoc + xmlto or asciidoctor)
#   make install         PREFIX=/usr/local DESTDIR=
#   make clean
#   V=1                  show the commands

VERSION_MAJOR	:= 0
VERSION_MINOR	:= 1
VERSION_PATCH	:= 0
VERSION		:= $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX		?= /usr/local
LIBDIR		?= $(PREFIX)/lib
BINDIR		?= $(PREFIX)/bin
INCLUDEDIR	?= $(PREFIX)/include
MANDIR		?= $(PREFIX)/share/man
PKGCONFIGDIR	?= $(LIBDIR)/pkgconfig
DESTDIR		?=

O		:= build
CC		?= cc
CLANG		?= clang
PKG_CONFIG	?= pkg-config

ifeq ($(V),1)
Q :=
else
Q := @
endif

WERROR		?=
CFLAGS		?= -O2 -g
BASE_CFLAGS	:= -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow \
		   -Wmissing-prototypes -Wstrict-prototypes -Wno-format-truncation $(WERROR)
CPPFLAGS	+= -D_GNU_SOURCE -Iinclude

# Dependencies, each checked through pkg-config with the Debian package named.
define pkg_flags
$(shell $(PKG_CONFIG) --$(2) $(1) 2>/dev/null)
endef
TEP_CFLAGS	:= $(call pkg_flags,libtraceevent,cflags)
TEP_LIBS	:= $(call pkg_flags,libtraceevent,libs)
TFS_CFLAGS	:= $(call pkg_flags,libtracefs,cflags)
TFS_LIBS	:= $(call pkg_flags,libtracefs,libs)
CMOCKA_LIBS	:= $(call pkg_flags,cmocka,libs)

DEP_PKGS	:= libtraceevent:libtraceevent-dev libtracefs:libtracefs-dev cmocka:libcmocka-dev

all:

depcheck:
	@for p in $(DEP_PKGS); do \
		mod=$${p%%:*}; deb=$${p#*:}; \
		$(PKG_CONFIG) --exists $$mod || { \
			echo "error: $$mod not found: install the Debian package $$deb (or run 'make deps')" >&2; \
			exit 1; }; \
	done

deps:
	$(Q)sh scripts/install-deps.sh

# $(call compile,flags) for $(O)/%.o from %.c
$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS_$(dir $<)) -MMD -MP -c -o $@ $<

PROGRAMS	:=
TESTS		:=
BENCH_DEPS	:=
INSTALL_TARGETS	:=
CLEAN_FILES	:=

# the library first: every other area links it
include lib/Build.mk
include $(filter-out lib/Build.mk,$(sort $(wildcard */Build.mk */*/Build.mk)))

all: depcheck $(ALL_TARGETS)

check: deps
	$(Q)$(MAKE) --no-print-directory WERROR=-Werror all check-build
	$(Q)sh scripts/mount-tracefs.sh
	$(Q)sh tests/run-tests.sh $(TESTS)

check-build: $(CHECK_TARGETS)

# the bench's own packages (gnuplot-nox draws the figures) besides the build's
bench: deps
	$(Q)sh scripts/install-deps.sh --bench
	$(Q)$(MAKE) --no-print-directory all $(BENCH_DEPS)
	$(Q)sh scripts/mount-tracefs.sh
	$(Q)sh bench/run-bench.sh
	$(Q)BENCH_FLIGHT_APPEND=$(O)/bench/results.md sh bench/run-flight.sh
	$(Q)BENCH_KS_APPEND=$(O)/bench/results.md sh bench/run-kernelshark.sh
	$(Q)for r in 1000000 0; do \
		BENCH_BREAKDOWN_APPEND=$(O)/bench/results.md sh bench/record-breakdown.sh $$r 2000; \
	done

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh scripts/mount-tracefs.sh
	$(Q)sh scripts/run-demo.sh

install: all $(INSTALL_TARGETS)

clean:
	rm -rf $(O) $(CLEAN_FILES)

.PHONY: all depcheck deps check check-build bench run install clean

-include $(shell find $(O) -name '*.d' 2>/dev/null)
