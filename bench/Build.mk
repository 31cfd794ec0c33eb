# SPDX-License-Identifier: GPL-2.0-only
# Benchmarks (make bench; not part of make check): the load generator, the
# in-process consumers and the driver that measures one point. The runner
# bench/run-bench.sh loops over consumers, rates and repetitions.

BENCH_O		:= $(O)/bench
# The private instances come from tests/tracefs-instance.c (cmocka-free).
BENCH_COMMON	:= bench/common.c bench/bench.h tests/tracefs-instance.c tests/tracefs-instance.h
BENCH_COMMON_C	:= bench/common.c tests/tracefs-instance.c
TRACECMD_CFLAGS	:= $(call pkg_flags,libtracecmd,cflags)
TRACECMD_LIBS	:= $(call pkg_flags,libtracecmd,libs)

# The stream consumer is built once lib/stream.c exists (issue 3).
BENCH_CFLAGS	:= -Ibench -Itests -Ilib $(TEP_CFLAGS) $(TFS_CFLAGS) \
		   $(if $(wildcard lib/stream.c),-DBN_HAVE_STREAM)

$(BENCH_O)/tm-load: bench/tm-load.c $(BENCH_COMMON)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(BENCH_CFLAGS) -o $@ $< $(BENCH_COMMON_C)

$(BENCH_O)/tm-consume: bench/tm-consume.c $(BENCH_COMMON) $(LIB_A)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(BENCH_CFLAGS) -o $@ $< $(BENCH_COMMON_C) \
		$(LIB_A) $(TFS_LIBS) $(TEP_LIBS)

$(BENCH_O)/tm-bench: bench/tm-bench.c $(BENCH_COMMON)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(BENCH_CFLAGS) $(TRACECMD_CFLAGS) -o $@ $< \
		$(BENCH_COMMON_C) $(TRACECMD_LIBS) $(TFS_LIBS) $(TEP_LIBS)

BENCH_DEPS	+= $(BENCH_O)/tm-load $(BENCH_O)/tm-consume $(BENCH_O)/tm-bench

# One refresh of the KernelShark view (bench/run-kernelshark.sh), when
# KernelShark's headers are installed.
ifneq ($(wildcard /usr/include/kernelshark/libkshark.h),)
$(BENCH_O)/ks-refresh: bench/ks-refresh.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -isystem /usr/include/kernelshark $(TEP_CFLAGS) \
		-o $@ $< $(LIB_A) -lkshark $(TFS_LIBS) $(TEP_LIBS)

BENCH_DEPS	+= $(BENCH_O)/ks-refresh
endif
$(BENCH_O)/tm-format: bench/tm-format.c $(LIB_A) include/tracemap.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(BENCH_CFLAGS) -o $@ $< \
		$(LIB_A) $(TFS_LIBS) $(TEP_LIBS)

BENCH_DEPS	+= $(BENCH_O)/tm-format

# The merge over synthetic rings in memory, for instruction counts
# (bench/merge-callgrind.sh); no kernel needed.
$(BENCH_O)/tm-merge: bench/tm-merge.c tests/sbuf-encode.c tests/sbuf-encode.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(BENCH_CFLAGS) -o $@ $< tests/sbuf-encode.c \
		$(LIB_A) $(TFS_LIBS) $(TEP_LIBS)

BENCH_DEPS	+= $(BENCH_O)/tm-merge
