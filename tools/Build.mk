# SPDX-License-Identifier: GPL-2.0-only
# The tracemap command: one program, a file per subcommand. It links
# libtracemap.so (from the tree through its rpath), libtracefs and
# libtraceevent; the installed copy is linked without the rpath.

TOOL_SRCS	:= $(wildcard tools/*.c)
TOOL_OBJS	:= $(TOOL_SRCS:%.c=$(O)/%.o)
TOOL		:= $(O)/tracemap

EXTRA_CFLAGS_tools/ := $(TEP_CFLAGS) $(TFS_CFLAGS) -DTRACEMAP_VERSION='"$(VERSION)"'

$(TOOL_OBJS): tools/tracemap-tool.h tools/cmd-stream.h include/tracemap.h
# tracemap --version: the release version lives in the Makefile
$(O)/tools/tracemap.o: Makefile

$(TOOL): $(TOOL_OBJS) $(LIB_SO)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(call lib_rpath) -o $@ $(TOOL_OBJS) $(LIB_LINK)

$(O)/inst/tracemap: $(TOOL_OBJS) $(LIB_SO)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(TOOL_OBJS) $(LIB_LINK)

ALL_TARGETS	+= $(TOOL)

install-tool: $(O)/inst/tracemap
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(O)/inst/tracemap $(DESTDIR)$(BINDIR)/

uninstall-tool:
	rm -f $(DESTDIR)$(BINDIR)/tracemap

INSTALL_TARGETS	+= install-tool
UNINSTALL_TARGETS += uninstall-tool
.PHONY: install-tool uninstall-tool
