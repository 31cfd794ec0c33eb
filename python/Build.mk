# SPDX-License-Identifier: GPL-2.0-only
# The Python package tracemap: python/tracemap/*.py and its C core, the
# extension tracemap._tracemap over libtracemap.so, built for
# Debian's python3 (PYTHON=...) into build/python/tracemap, so that
# PYTHONPATH=build/python imports it from the tree (PYTHON_MODULE=auto|yes|no,
# auto: when that python's Python.h, python3-dev, is installed). Installed into that
# python's module directory under PREFIX: PREFIX=/usr gives Debian's
# /usr/lib/python3/dist-packages, any other PREFIX <prefix>/lib/python3.X/dist-packages.

PYTHON		?= /usr/bin/python3
PY_INCLUDE	:= $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_EXT_SUFFIX	:= $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PY_VERSION	:= $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PY_SITEDIR	?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PY_VERSION)/dist-packages)
PY_FOUND	:= $(if $(PY_INCLUDE),$(wildcard $(PY_INCLUDE)/Python.h))

ifeq ($(call optional,PYTHON_MODULE,python-module,$(PY_FOUND),Python.h of $(PYTHON) not found: install python3-dev),y)

PY_SRCS		:= $(wildcard python/*.c)
PY_OBJS		:= $(PY_SRCS:%.c=$(O)/pic/%.o)
PY_MODULE	:= $(O)/python/tracemap/_tracemap$(PY_EXT_SUFFIX)
PY_PKG_SRCS	:= $(wildcard python/tracemap/*.py)
PY_PKG		:= $(PY_PKG_SRCS:python/%=$(O)/python/%)

$(O)/pic/python/%.o: python/%.c include/tracemap.h
	@test -f "$(PY_INCLUDE)/Python.h" || { echo "error: Python.h not found for $(PYTHON): install the Debian package python3-dev (or run 'make deps')" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) -Wno-missing-field-initializers -Wno-cast-function-type \
		$(CFLAGS) -fPIC -fvisibility=hidden -I$(PY_INCLUDE) -Ipython $(TEP_CFLAGS) $(TFS_CFLAGS) \
		-DTRACEMAP_PY_VERSION='"$(VERSION)"' -MMD -MP -c -o $@ $<

$(PY_MODULE): $(PY_OBJS) $(LIB_SO)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(call lib_rpath,../..) -shared -o $@ $(PY_OBJS) $(LIB_LINK)

$(O)/inst/$(notdir $(PY_MODULE)): $(PY_OBJS) $(LIB_SO)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $(PY_OBJS) $(LIB_LINK)

$(O)/python/tracemap/%.py: python/tracemap/%.py
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

ALL_TARGETS	+= $(PY_MODULE) $(PY_PKG)

install-python: $(O)/inst/$(notdir $(PY_MODULE)) $(PY_PKG)
	install -d $(DESTDIR)$(PY_SITEDIR)/tracemap
	install -m 644 $^ $(DESTDIR)$(PY_SITEDIR)/tracemap/

uninstall-python:
	rm -f $(DESTDIR)$(PY_SITEDIR)/tracemap/$(notdir $(PY_MODULE)) \
		$(patsubst python/tracemap/%,$(DESTDIR)$(PY_SITEDIR)/tracemap/%,$(PY_PKG_SRCS))
	rm -rf $(DESTDIR)$(PY_SITEDIR)/tracemap/__pycache__
	-rmdir $(DESTDIR)$(PY_SITEDIR)/tracemap

INSTALL_TARGETS	+= install-python
UNINSTALL_TARGETS += uninstall-python
.PHONY: install-python uninstall-python

# pytest on the real kernel (tests/python/test_*.py run as programs)
TESTS		+= $(sort $(wildcard tests/python/test_*.py))

endif
