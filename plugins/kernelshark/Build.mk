# SPDX-License-Identifier: GPL-2.0-only
# KernelShark plugin: plugin-tracemap.so, the input part (C, claims tracefs
# instance directories and .tracemap descriptors) and the menu part
# (C++/Qt5: Tools -> tracemap: refresh now / follow / stop following). It
# links libtracemap.so. KERNELSHARK=auto|yes|no (auto: when KernelShark's
# headers, libkshark-dev, and Qt5, qtbase5-dev, are installed). Installed
# into KSP_INSTALL_DIR, by default LIBDIR/kernelshark/plugins: KernelShark's
# own directory for PREFIX=/usr on Debian, where `kernelshark -p tracemap`
# looks.

KS_HEADER	:= /usr/include/kernelshark/libkshark.h
QT5_OK		:= $(shell $(PKG_CONFIG) --exists Qt5Widgets 2>/dev/null && echo y)
KS_FOUND	:= $(and $(wildcard $(KS_HEADER)),$(QT5_OK))

ifeq ($(call optional,KERNELSHARK,kernelshark-plugin,$(KS_FOUND),libkshark-dev or qtbase5-dev not installed),y)

CXX		?= g++
KSP_DIR		:= $(O)/plugins/kernelshark
KSP_SO		:= $(KSP_DIR)/plugin-tracemap.so
KSP_C_OBJ	:= $(O)/pic/plugins/kernelshark/tracemap-input.o
KSP_CXX_OBJ	:= $(O)/pic/plugins/kernelshark/tracemap-menu.o
KSP_INSTALL_DIR	?= $(LIBDIR)/kernelshark/plugins
QT5_CFLAGS	:= $(shell $(PKG_CONFIG) --cflags Qt5Widgets)
QT5_LIBS	:= $(shell $(PKG_CONFIG) --libs Qt5Widgets)
# libkshark.h's own headers: -isystem keeps their warnings out of ours
KSP_CFLAGS	:= -isystem /usr/include/kernelshark -fPIC

$(KSP_C_OBJ): plugins/kernelshark/tracemap-input.c plugins/kernelshark/tracemap-ks.h include/tracemap.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(KSP_CFLAGS) $(TEP_CFLAGS) -MMD -MP -c -o $@ $<

$(KSP_CXX_OBJ): plugins/kernelshark/tracemap-menu.cpp plugins/kernelshark/tracemap-ks.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CXX     $<")
	$(Q)$(CXX) $(CPPFLAGS) -std=gnu++17 -Wall -Wextra -Wno-unused-parameter $(WERROR) $(CXXFLAGS) \
		$(KSP_CFLAGS) $(QT5_CFLAGS) -MMD -MP -c -o $@ $<

# $(call ksp_link,rpath flags)
ksp_link = $(CXX) $(CXXFLAGS) $(LDFLAGS) $(1) -shared \
	-Wl,--version-script=plugins/kernelshark/plugin-tracemap.map -Wl,-z,defs -Wl,--as-needed \
	-o $@ $(KSP_C_OBJ) $(KSP_CXX_OBJ) -lkshark $(QT5_LIBS) $(LIB_LINK)

$(KSP_SO): $(KSP_C_OBJ) $(KSP_CXX_OBJ) $(LIB_SO) plugins/kernelshark/plugin-tracemap.map
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(call ksp_link,$(call lib_rpath,../..))

$(O)/inst/plugin-tracemap.so: $(KSP_C_OBJ) $(KSP_CXX_OBJ) $(LIB_SO) plugins/kernelshark/plugin-tracemap.map
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(call ksp_link)

ALL_TARGETS	+= $(KSP_SO)

install-kernelshark-plugin: $(O)/inst/plugin-tracemap.so
	install -d $(DESTDIR)$(KSP_INSTALL_DIR)
	install -m 644 $(O)/inst/plugin-tracemap.so $(DESTDIR)$(KSP_INSTALL_DIR)/

uninstall-kernelshark-plugin:
	rm -f $(DESTDIR)$(KSP_INSTALL_DIR)/plugin-tracemap.so

INSTALL_TARGETS	+= install-kernelshark-plugin
UNINSTALL_TARGETS += uninstall-kernelshark-plugin
.PHONY: install-kernelshark-plugin uninstall-kernelshark-plugin

endif
