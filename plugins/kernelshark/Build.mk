# SPDX-License-Identifier: GPL-2.0-only
# KernelShark plugin: plugin-tracemap.so, the input part (C, claims tracefs
# instance directories and .tracemap descriptors) and the menu part
# (C++/Qt5: Tools -> tracemap: refresh now / follow / stop following). It
# carries libtracemap (PIC archive) inside. Built when KernelShark's headers
# (libkshark-dev) and Qt5 (qtbase5-dev) are installed; installed where
# `kernelshark -p tracemap` looks for it.

KS_HEADER	:= /usr/include/kernelshark/libkshark.h
QT5_OK		:= $(shell $(PKG_CONFIG) --exists Qt5Widgets 2>/dev/null && echo y)

ifneq ($(and $(wildcard $(KS_HEADER)),$(QT5_OK)),)

CXX		?= g++
KSP_DIR		:= $(O)/plugins/kernelshark
KSP_SO		:= $(KSP_DIR)/plugin-tracemap.so
KSP_C_OBJ	:= $(O)/pic/plugins/kernelshark/tracemap-input.o
KSP_CXX_OBJ	:= $(O)/pic/plugins/kernelshark/tracemap-menu.o
KSP_INSTALL_DIR	?= $(shell $(PKG_CONFIG) --variable=libdir libkshark 2>/dev/null || echo /usr/lib/x86_64-linux-gnu)/kernelshark/plugins
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
	$(Q)$(CXX) $(CPPFLAGS) -std=gnu++17 -Wall -Wextra -Wno-unused-parameter $(WERROR) $(CFLAGS) \
		$(KSP_CFLAGS) $(QT5_CFLAGS) -MMD -MP -c -o $@ $<

$(KSP_SO): $(KSP_C_OBJ) $(KSP_CXX_OBJ) $(LIB_A) plugins/kernelshark/plugin-tracemap.map
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CXX) -shared -Wl,--version-script=plugins/kernelshark/plugin-tracemap.map -Wl,-z,defs \
		-Wl,--as-needed -o $@ $(KSP_C_OBJ) $(KSP_CXX_OBJ) $(LIB_A) \
		-lkshark -lkshark-gui $(QT5_LIBS) $(TFS_LIBS) $(TEP_LIBS)

ALL_TARGETS	+= $(KSP_SO)

install-kernelshark-plugin: $(KSP_SO)
	install -d $(DESTDIR)$(KSP_INSTALL_DIR)
	install -m 755 $(KSP_SO) $(DESTDIR)$(KSP_INSTALL_DIR)/

INSTALL_TARGETS	+= install-kernelshark-plugin
.PHONY: install-kernelshark-plugin

endif
