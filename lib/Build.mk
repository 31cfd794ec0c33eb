# SPDX-License-Identifier: LGPL-2.1-only
# libtracemap: shared and static library, version script, pkg-config file.

LIB_SRCS	:= $(wildcard lib/*.c)
LIB_OBJS	:= $(LIB_SRCS:%.c=$(O)/pic/%.o)
LIB_SO		:= $(O)/libtracemap.so
LIB_SONAME	:= libtracemap.so.$(VERSION_MAJOR)
LIB_A		:= $(O)/libtracemap.a
LIB_PC		:= $(O)/libtracemap.pc

LIB_CFLAGS	:= -fPIC -fvisibility=hidden -Ilib $(TEP_CFLAGS) $(TFS_CFLAGS)

# The front-ends link the shared library. From the tree they find it through
# an rpath relative to $ORIGIN (the argument: the way from the program's
# directory back to build/); make install links them again without one.
LIB_LINK	:= -Wl,--as-needed -L$(O) -ltracemap $(TFS_LIBS) $(TEP_LIBS)
lib_rpath	= -Wl,-rpath,'$$ORIGIN$(if $(1),/$(1))'

$(O)/pic/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LIB_CFLAGS) -MMD -MP -c -o $@ $<

$(O)/$(LIB_SONAME).$(VERSION_MINOR).$(VERSION_PATCH): $(LIB_OBJS) lib/libtracemap.map
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=lib/libtracemap.map -Wl,-z,defs -Wl,--as-needed \
		-o $@ $(LIB_OBJS) $(TFS_LIBS) $(TEP_LIBS)

$(LIB_SO): $(O)/$(LIB_SONAME).$(VERSION_MINOR).$(VERSION_PATCH)
	$(Q)ln -sf $(notdir $<) $(O)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $@

$(LIB_A): $(LIB_OBJS)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The .pc names the directories of this make's PREFIX/LIBDIR/INCLUDEDIR:
# make install writes it again, so that "make; make install PREFIX=/p"
# installs one that points to /p.
PC_SED		= sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' lib/libtracemap.pc.in

$(LIB_PC): lib/libtracemap.pc.in Makefile
	$(Q)$(PC_SED) > $@

ALL_TARGETS	+= $(LIB_SO) $(LIB_A) $(LIB_PC)

install-lib: $(LIB_SO) $(LIB_A) $(LIB_PC)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(O)/$(LIB_SONAME).$(VERSION_MINOR).$(VERSION_PATCH) $(DESTDIR)$(LIBDIR)/
	ln -sf $(LIB_SONAME).$(VERSION_MINOR).$(VERSION_PATCH) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libtracemap.so
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 644 include/tracemap.h $(DESTDIR)$(INCLUDEDIR)/
	$(PC_SED) > $(DESTDIR)$(PKGCONFIGDIR)/libtracemap.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/libtracemap.pc

uninstall-lib:
	rm -f $(DESTDIR)$(LIBDIR)/$(LIB_SONAME).$(VERSION_MINOR).$(VERSION_PATCH) \
		$(DESTDIR)$(LIBDIR)/$(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libtracemap.so \
		$(DESTDIR)$(LIBDIR)/libtracemap.a $(DESTDIR)$(INCLUDEDIR)/tracemap.h \
		$(DESTDIR)$(PKGCONFIGDIR)/libtracemap.pc

INSTALL_TARGETS	+= install-lib
UNINSTALL_TARGETS += uninstall-lib
.PHONY: install-lib uninstall-lib
