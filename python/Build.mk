# SPDX-License-Identifier: GPL-2.0-only
# The Python module: a CPython C extension over the static libtracemap,
# built for Debian's python3 (PYTHON=...) into build/python, so that
# PYTHONPATH=build/python imports it from the tree. Installed into that
# python's module directory under PREFIX: PREFIX=/usr gives Debian's
# /usr/lib/python3/dist-packages, any other PREFIX <prefix>/lib/python3.X/dist-packages.

PYTHON		?= /usr/bin/python3
PY_INCLUDE	:= $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_EXT_SUFFIX	:= $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PY_VERSION	:= $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PY_SITEDIR	?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PY_VERSION)/dist-packages)

PY_SRCS		:= $(wildcard python/*.c)
PY_OBJS		:= $(PY_SRCS:%.c=$(O)/pic/%.o)
PY_MODULE	:= $(O)/python/tracemap$(PY_EXT_SUFFIX)

$(O)/pic/python/%.o: python/%.c include/tracemap.h
	@test -f "$(PY_INCLUDE)/Python.h" || { echo "error: Python.h not found for $(PYTHON): install the Debian package python3-dev (or run 'make deps')" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) -Wno-missing-field-initializers -Wno-cast-function-type \
		$(CFLAGS) -fPIC -fvisibility=hidden -I$(PY_INCLUDE) -Ipython $(TEP_CFLAGS) $(TFS_CFLAGS) \
		-DTRACEMAP_PY_VERSION='"$(VERSION)"' -MMD -MP -c -o $@ $<

# the static archive's objects are PIC: the module needs no libtracemap.so at run time
$(PY_MODULE): $(PY_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared $(CFLAGS) -o $@ $(PY_OBJS) $(LIB_A) $(TFS_LIBS) $(TEP_LIBS)

ALL_TARGETS	+= $(PY_MODULE)

install-python: $(PY_MODULE)
	install -d $(DESTDIR)$(PY_SITEDIR)
	install -m 644 $(PY_MODULE) $(DESTDIR)$(PY_SITEDIR)/

INSTALL_TARGETS	+= install-python
.PHONY: install-python

# pytest on the real kernel (tests/python/test_*.py run as programs)
TESTS		+= $(sort $(wildcard tests/python/test_*.py))
