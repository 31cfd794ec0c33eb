# SPDX-License-Identifier: GPL-2.0-only
# trace-cmd plugin: libtracemap-tracecmd.so (the tracefs_cpu_* calls of
# trace-cmd's recorder, served from the mapping) and the trace-cmd-mmap
# launcher (TRACECMD=auto|yes|no, auto: when trace-cmd is installed).
#
# The plugin carries libtracemap (PIC archive) inside instead of linking
# libtracemap.so, and does not link libtracefs: it is preloaded into the
# host, where its dlsym(RTLD_NEXT) must find the host's own libtracefs (or
# the stand-in of tc-host.sh); libtracemap.so needs libtracefs.so and would
# load a second one into the host.

TCM_FOUND	:= $(shell command -v trace-cmd >/dev/null 2>&1 && echo y)
ifeq ($(call optional,TRACECMD,trace-cmd-plugin,$(TCM_FOUND),trace-cmd not installed),y)

TCM_DIR		:= $(O)/plugins/trace-cmd
TCM_SO		:= $(TCM_DIR)/libtracemap-tracecmd.so
TCM_OBJ		:= $(O)/pic/plugins/trace-cmd/tracefs-mmap.o
TCM_LAUNCHER	:= $(TCM_DIR)/trace-cmd-mmap
TCM_LIBDIR	:= $(LIBDIR)/tracemap

$(TCM_OBJ): plugins/trace-cmd/tracefs-mmap.c include/tracemap.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden $(TFS_CFLAGS) \
		$(TEP_CFLAGS) -MMD -MP -c -o $@ $<

$(TCM_SO): $(TCM_OBJ) $(LIB_A) plugins/trace-cmd/tracefs-mmap.map
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,--version-script=plugins/trace-cmd/tracefs-mmap.map -Wl,-z,defs \
		-Wl,--as-needed -o $@ $(TCM_OBJ) $(LIB_A) $(TEP_LIBS) -ldl

# The build-tree launcher finds the plugin next to itself.
$(TCM_LAUNCHER): plugins/trace-cmd/trace-cmd-mmap Makefile
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@VERSION@|$(VERSION)|' $< > $@.tmp && chmod 755 $@.tmp && mv $@.tmp $@

ALL_TARGETS	+= $(TCM_SO) $(TCM_LAUNCHER)

install-trace-cmd-plugin: $(TCM_SO) $(TCM_LAUNCHER)
	install -d $(DESTDIR)$(TCM_LIBDIR) $(DESTDIR)$(BINDIR)
	install -m 644 $(TCM_SO) $(DESTDIR)$(TCM_LIBDIR)/
	sed -e 's|@VERSION@|$(VERSION)|; s|@PLUGIN_LIBDIR@|$(TCM_LIBDIR)|' \
		-e 's|@PLUGIN_RELDIR@|$(patsubst $(PREFIX)/%,%,$(TCM_LIBDIR))|' \
		plugins/trace-cmd/trace-cmd-mmap > $(DESTDIR)$(BINDIR)/trace-cmd-mmap
	chmod 755 $(DESTDIR)$(BINDIR)/trace-cmd-mmap

uninstall-trace-cmd-plugin:
	rm -f $(DESTDIR)$(TCM_LIBDIR)/libtracemap-tracecmd.so $(DESTDIR)$(BINDIR)/trace-cmd-mmap
	-rmdir $(DESTDIR)$(TCM_LIBDIR) 2>/dev/null

INSTALL_TARGETS	+= install-trace-cmd-plugin
UNINSTALL_TARGETS += uninstall-trace-cmd-plugin
.PHONY: install-trace-cmd-plugin uninstall-trace-cmd-plugin

endif
