# SPDX-License-Identifier: GPL-2.0-only
#
# tracemap top-level build. Each area adds its objects, programs and tests
# in its own Build.mk; this file holds the rules they share.
#
#   make                 library, tool and the optional parts found (see below)
#   make test            build with the tests and run them: installs nothing
#   make check           install missing packages, mount tracefs, make test with -Werror,
#                        then the smoke subset of make check-kernels (CHECK_KERNELS=no: not)
#   make check-kernels   the kernel tests on Debian 12's 6.1 and 6.12 (QEMU) and this kernel
#   make bench           benchmarks (not tests)
#   make run             the README's main job: tracemap stream on a private instance
#   make doc             man pages (asciidoc + xmlto or asciidoctor)
#   make install         PREFIX=/usr/local DESTDIR= LIBDIR=PREFIX/lib/<multiarch>
#   make uninstall       removes what make install installed (same variables)
#   make deb             the Debian packages (dpkg-buildpackage -us -uc -b) in build/deb
#   make check-deb       build them, install them, run their autopkgtests, purge them
#   make version         print the release version
#   make clean
#   V=1                  show the commands
#
# Optional parts, each auto (built when its dependencies are found), yes
# (missing dependencies are an error) or no:
#   TRACECMD=auto        the trace-cmd plugin and trace-cmd-mmap (found: trace-cmd)
#   KERNELSHARK=auto     the KernelShark plugin (found: libkshark-dev, qtbase5-dev)
#   PYTHON_MODULE=auto   the Python module (found: python3-dev for PYTHON=/usr/bin/python3)
#
# CPPFLAGS, CFLAGS and LDFLAGS are honoured as given (dpkg-buildflags).

VERSION_MAJOR	:= 0
VERSION_MINOR	:= 2
VERSION_PATCH	:= 0
VERSION		:= $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
# The one place of the release version: tracemap --version, the soname, the
# .pc file, the man pages, and debian/changelog (checked by debian/rules and
# tests/check-version.sh) take it from here.

PREFIX		?= /usr/local
# Debian's multiarch directory (lib/x86_64-linux-gnu) where dpkg-architecture exists
MULTIARCH	:= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
LIBDIR		?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
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
CXXFLAGS	?= $(CFLAGS)
LDFLAGS		?=
BASE_CFLAGS	:= -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow \
		   -Wmissing-prototypes -Wstrict-prototypes -Wno-format-truncation $(WERROR)
CPPFLAGS	+= -D_GNU_SOURCE -Iinclude

# Dependencies, each checked through pkg-config with the Debian package named.
define pkg_flags
$(shell $(PKG_CONFIG) --$(2) $(1) 2>/dev/null)
endef
# the formatter's compiler checks the version against those it was verified with (lib/format-compile.c)
TEP_VERSION	:= $(call pkg_flags,libtraceevent,modversion)
TEP_CFLAGS	:= $(call pkg_flags,libtraceevent,cflags) -DTM_TEP_BUILD_VERSION='"$(TEP_VERSION)"'
TEP_LIBS	:= $(call pkg_flags,libtraceevent,libs)
TFS_CFLAGS	:= $(call pkg_flags,libtracefs,cflags)
TFS_LIBS	:= $(call pkg_flags,libtracefs,libs)
CMOCKA_LIBS	:= $(call pkg_flags,cmocka,libs)

# make needs only the library's dependencies; the tests add theirs
DEP_PKGS	:= libtraceevent:libtraceevent-dev libtracefs:libtracefs-dev
TEST_DEP_PKGS	:= cmocka:libcmocka-dev

TRACECMD	?= auto
KERNELSHARK	?= auto
PYTHON_MODULE	?= auto

# $(call optional,SWITCH,part,found (y or empty),what is missing, no commas):
# y when the part is built; the reason goes into the build's summary line.
define optional
$(strip $(if $(filter no,$($(1))),$(eval PARTS_OFF += $(2) ($(1)=no);),
$(if $(3),y$(eval PARTS_ON += $(2)),
$(if $(filter yes,$($(1))),$(error $(1)=yes but $(4)),
$(eval PARTS_OFF += $(2) ($(1)=$($(1)): $(4));)))))
endef
PARTS_ON	:= library tool
PARTS_OFF	:=

all:

# $(call check_pkgs,module:debian-package ...)
define check_pkgs
@for p in $(1); do \
		mod=$${p%%:*}; deb=$${p#*:}; \
		$(PKG_CONFIG) --exists $$mod || { \
			echo "error: $$mod not found: install the Debian package $$deb (or run 'make deps')" >&2; \
			exit 1; }; \
	done
endef

depcheck:
	$(call check_pkgs,$(DEP_PKGS))

test-depcheck:
	$(call check_pkgs,$(TEST_DEP_PKGS))

# one line that says what this build makes and why a part is left out
parts:
	@echo "tracemap $(VERSION): building $(strip $(PARTS_ON))$(if $(strip $(PARTS_OFF)),; not building $(strip $(PARTS_OFF)))" | sed 's/;$$//'

version:
	@echo $(VERSION)

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
UNINSTALL_TARGETS :=
CLEAN_FILES	:=

# the library first: every other area links it
include lib/Build.mk
include $(filter-out lib/Build.mk,$(sort $(wildcard */Build.mk */*/Build.mk)))

all: parts depcheck $(ALL_TARGETS)

# The tests from the tree: installs nothing, mounts nothing (a test that
# needs root or tracefs says so and skips).
test: all check-build
	$(Q)sh tests/run-tests.sh $(TESTS)

# A new machine: the packages, tracefs, the tests with -Werror, then the
# smoke subset of the kernel matrix: Debian 12's 6.1 and 6.12 booted under
# QEMU (tests/kernels/check-kernels.sh, KM_SMOKE=1; about 4 minutes a
# kernel under TCG). CHECK_KERNELS=no leaves the guests out (no network
# for apt-get download, or no time).
CHECK_KERNELS	?= smoke
ifneq ($(filter-out smoke no,$(CHECK_KERNELS)),)
$(error CHECK_KERNELS=$(CHECK_KERNELS): say smoke (the default) or no)
endif
check: deps
	$(Q)sh scripts/mount-tracefs.sh
	$(Q)$(MAKE) --no-print-directory WERROR=-Werror test
ifeq ($(CHECK_KERNELS),smoke)
	$(Q)KM_SMOKE=1 sh tests/kernels/check-kernels.sh
else
	@echo "make check: the kernel matrix's smoke subset left out (CHECK_KERNELS=no)"
endif

check-build: test-depcheck $(CHECK_TARGETS)

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

uninstall: $(UNINSTALL_TARGETS)

# The Debian packages, built by dpkg-buildpackage from a copy of the tracked
# files in $(O)/deb (it cleans its tree and writes next to it).
deb:
	$(Q)rm -rf $(O)/deb && mkdir -p $(O)/deb/tracemap-$(VERSION)
	$(Q)git ls-files -z | xargs -0 cp --parents -t $(O)/deb/tracemap-$(VERSION)
	$(Q)cd $(O)/deb/tracemap-$(VERSION) && dpkg-buildpackage -us -uc -b
	$(Q)ls -l $(O)/deb/*.deb

# build, install, autopkgtest and purge the packages (root; about N minutes)
check-deb:
	$(Q)sh tests/check-deb.sh

clean:
	rm -rf $(O) $(CLEAN_FILES)

.PHONY: all parts version depcheck test-depcheck deps test check check-build bench run install \
	uninstall deb check-deb clean

-include $(shell find $(O) -name '*.d' 2>/dev/null)
