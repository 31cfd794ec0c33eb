# SPDX-License-Identifier: GPL-2.0-only
# Helpers of the trace-cmd plugin's black-box tests (tests/plugins/*.sh):
# a fast marker writer, a headless KernelShark (libkshark) loader and a FIFO
# that serves a different file to its second reader.

TCT_DIR		:= $(O)/tests/plugins
TCT_MARKERS	:= $(TCT_DIR)/tc-markers
TCT_KSHARK	:= $(TCT_DIR)/tc-kshark-count
TCT_CONTRACT	:= $(TCT_DIR)/tc-contract
TCT_CALLS	:= $(TCT_DIR)/tc-calls
TCT_KSLIVE	:= $(TCT_DIR)/ks-live
TCT_FIFO_FEED	:= $(TCT_DIR)/tc-fifo-feed
TCT_HOST	:= $(TCT_DIR)/tc-host
TCT_STANDIN	:= $(TCT_DIR)/libtc-standin-tracefs.so

# libkshark.h includes <json-c/json.h> (libjson-c-dev); -isystem quiets its own warnings
KSHARK_CFLAGS	:= -isystem /usr/include/kernelshark $(TFS_CFLAGS) $(TEP_CFLAGS)

$(TCT_MARKERS): tests/plugins/tc-markers.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $<

$(TCT_FIFO_FEED): tests/plugins/tc-fifo-feed.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $<

$(TCT_KSHARK): tests/plugins/tc-kshark-count.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(KSHARK_CFLAGS) -o $@ $< -lkshark

$(TCT_KSLIVE): tests/plugins/ks-live.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(KSHARK_CFLAGS) -o $@ $< -lkshark

# the libtracefs contract, run with the plugin preloaded (tc-contract.sh)
$(TCT_CONTRACT): tests/plugins/tc-contract.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(TFS_CFLAGS) $(TEP_CFLAGS) -o $@ $< \
		$(TFS_LIBS) $(TEP_LIBS) -lpthread

# each tracefs_cpu_* call, run stock and with the plugin preloaded (tc-calls.sh)
$(TCT_CALLS): tests/plugins/tc-calls.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(TFS_CFLAGS) -o $@ $< $(TFS_LIBS)

# stand-ins for the plugin's host check (tc-host.sh): a libtracefs program that
# reads no ring buffer, and a libtracefs with a function the plugin does not serve
$(TCT_HOST): tests/plugins/tc-host.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(TFS_CFLAGS) -o $@ $< $(TFS_LIBS)

$(TCT_STANDIN): tests/plugins/tc-standin-tracefs.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $<

CHECK_TARGETS	+= $(TCT_MARKERS) $(TCT_CONTRACT) $(TCT_CALLS) $(TCT_FIFO_FEED) $(TCT_HOST) $(TCT_STANDIN)
ifneq ($(wildcard /usr/include/kernelshark/libkshark.h),)
CHECK_TARGETS	+= $(TCT_KSHARK) $(TCT_KSLIVE)
endif
