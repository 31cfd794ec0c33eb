# Helpers of the trace-cmd plugin's black-box tests (tests/plugins/*.sh):
# a fast marker writer, a headless KernelShark (libkshark) loader and a FIFO
# that serves a different file to its second reader.

TCT_DIR		:= $(O)/tests/plugins
TCT_MARKERS	:= $(TCT_DIR)/tc-markers
TCT_KSHARK	:= $(TCT_DIR)/tc-kshark-count
TCT_CONTRACT	:= $(TCT_DIR)/tc-contract
TCT_KSLIVE	:= $(TCT_DIR)/ks-live
TCT_FIFO_FEED	:= $(TCT_DIR)/tc-fifo-feed

# libkshark.h includes <json-c/json.h> (libjson-c-dev); -isystem quiets its own warnings
KSHARK_CFLAGS	:= -isystem /usr/include/kernelshark $(TFS_CFLAGS) $(TEP_CFLAGS)

$(TCT_MARKERS): tests/plugins/tc-markers.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) -o $@ $<

$(TCT_FIFO_FEED): tests/plugins/tc-fifo-feed.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) -o $@ $<

$(TCT_KSHARK): tests/plugins/tc-kshark-count.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(KSHARK_CFLAGS) -o $@ $< -lkshark

$(TCT_KSLIVE): tests/plugins/ks-live.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(KSHARK_CFLAGS) -o $@ $< -lkshark

# the libtracefs contract, run with the plugin preloaded (tc-contract.sh)
$(TCT_CONTRACT): tests/plugins/tc-contract.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(TFS_CFLAGS) $(TEP_CFLAGS) -o $@ $< \
		$(TFS_LIBS) $(TEP_LIBS) -lpthread

CHECK_TARGETS	+= $(TCT_MARKERS) $(TCT_CONTRACT) $(TCT_FIFO_FEED)
ifneq ($(wildcard /usr/include/kernelshark/libkshark.h),)
CHECK_TARGETS	+= $(TCT_KSHARK) $(TCT_KSLIVE)
endif
