# SPDX-License-Identifier: GPL-2.0-only
# Documentation: asciidoc man pages in the libtracefs layout.
#
#   libtracemap*.txt    section 3 (the library), one page per function group
#   *.1.txt             section 1 (the commands)
#   *.7.txt             section 7 (the KernelShark plugin, the Python module)
#
# make check-build compiles the EXAMPLE program of every page that has one
# (a [source,c] block) against the static library, libtracefs and
# libtraceevent; make check checks that every public function of
# include/tracemap.h is documented and runs the examples on a private
# instance. make doc renders the man pages (asciidoc + xmlto, or
# asciidoctor); make install installs them under $(MANDIR) when they can be
# rendered.

DOC_DIR		:= $(O)/Documentation
DOC_TXT		:= $(sort $(wildcard Documentation/libtracemap*.txt Documentation/*.1.txt \
			   Documentation/*.7.txt))
DOC_EX_PAGES	:= $(shell sh Documentation/extract-example.sh -l $(DOC_TXT))
DOC_EXAMPLES	:= $(patsubst Documentation/%.txt,$(DOC_DIR)/examples/%,$(DOC_EX_PAGES))
DOC_STAMPS	:= $(patsubst Documentation/%.txt,$(DOC_DIR)/man/%.stamp,$(DOC_TXT))

$(DOC_DIR)/examples/%.c: Documentation/%.txt Documentation/extract-example.sh
	@mkdir -p $(dir $@)
	$(Q)sh Documentation/extract-example.sh $< > $@.tmp && mv $@.tmp $@

$(DOC_DIR)/examples/%: $(DOC_DIR)/examples/%.c $(LIB_A) include/tracemap.h
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(TEP_CFLAGS) $(TFS_CFLAGS) -o $@ $< \
		$(LIB_A) $(TFS_LIBS) $(TEP_LIBS)

# keep the extracted sources: compiler messages point into them
.SECONDARY: $(DOC_EXAMPLES:%=%.c)

CHECK_TARGETS	+= $(DOC_EXAMPLES)
TESTS		+= Documentation/check-api-doc.sh Documentation/test-examples.sh

$(DOC_DIR)/man/%.stamp: Documentation/%.txt Documentation/render-man.sh
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  MAN     $<")
	$(Q)sh Documentation/render-man.sh $< $(DOC_DIR)/man $(VERSION) && touch $@

doc: $(DOC_STAMPS)

# The library installs without its man pages when no renderer is installed.
install-doc:
	@if sh Documentation/render-man.sh --check; then \
		$(MAKE) --no-print-directory doc && \
		install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
			$(DESTDIR)$(MANDIR)/man7 && \
		for f in $(DOC_DIR)/man/*.1 $(DOC_DIR)/man/*.3 $(DOC_DIR)/man/*.7; do \
			[ -e "$$f" ] || continue; \
			sec=$${f##*.}; \
			install -m 644 "$$f" $(DESTDIR)$(MANDIR)/man$$sec/ || exit 1; \
		done; \
	else \
		echo "warning: man pages not installed (see above)" >&2; \
	fi

# the pages the renderer wrote (their names come from the NAME sections)
uninstall-doc:
	@if sh Documentation/render-man.sh --check 2>/dev/null; then \
		$(MAKE) --no-print-directory doc && \
		for f in $(DOC_DIR)/man/*.1 $(DOC_DIR)/man/*.3 $(DOC_DIR)/man/*.7; do \
			[ -e "$$f" ] || continue; \
			rm -f $(DESTDIR)$(MANDIR)/man$${f##*.}/$${f##*/}; \
		done; \
	else \
		echo "warning: man pages not uninstalled: they cannot be rendered to know their names" >&2; \
	fi

INSTALL_TARGETS	+= install-doc
UNINSTALL_TARGETS += uninstall-doc
.PHONY: doc install-doc uninstall-doc
