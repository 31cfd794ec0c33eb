# SPDX-License-Identifier: GPL-2.0-only
# The tracemap command: one program, a file per subcommand. It links the
# static library (runs from the build tree), libtracefs and libtraceevent.

TOOL_SRCS	:= $(wildcard tools/*.c)
TOOL_OBJS	:= $(TOOL_SRCS:%.c=$(O)/%.o)
TOOL		:= $(O)/tracemap

EXTRA_CFLAGS_tools/ := $(TEP_CFLAGS) $(TFS_CFLAGS) -DTRACEMAP_VERSION='"$(VERSION)"'

$(TOOL_OBJS): tools/tracemap-tool.h tools/cmd-stream.h include/tracemap.h

$(TOOL): $(TOOL_OBJS) $(LIB_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $(TOOL_OBJS) $(LIB_A) $(TFS_LIBS) $(TEP_LIBS)

ALL_TARGETS	+= $(TOOL)

install-tool: $(TOOL)
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(TOOL) $(DESTDIR)$(BINDIR)/

INSTALL_TARGETS	+= install-tool
.PHONY: install-tool
