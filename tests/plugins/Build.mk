# Helpers of the trace-cmd plugin's black-box tests (tests/plugins/*.sh):
# a fast marker writer and a headless KernelShark (libkshark) loader.

TCT_DIR		:= $(O)/tests/plugins
TCT_MARKERS	:= $(TCT_DIR)/tc-markers
TCT_KSHARK	:= $(TCT_DIR)/tc-kshark-count

# libkshark.h includes <json-c/json.h> (libjson-c-dev); -isystem quiets its own warnings
KSHARK_CFLAGS	:= -isystem /usr/include/kernelshark $(TFS_CFLAGS) $(TEP_CFLAGS)

$(TCT_MARKERS): tests/plugins/tc-markers.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) -o $@ $<

$(TCT_KSHARK): tests/plugins/tc-kshark-count.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(KSHARK_CFLAGS) -o $@ $< -lkshark

CHECK_TARGETS	+= $(TCT_MARKERS) $(TCT_KSHARK)
