# SPDX-License-Identifier: GPL-2.0-only
# Tests: cmocka programs under tests/unit (no root, no kernel) and
# tests/kernel (a private instance of the real tracefs), scripts under
# tests/plugins and tests/tools, sanitizer builds of both C kinds, and
# bounded fuzzing. All run through tests/run-tests.sh.

TEST_CFLAGS	:= -Itests -Ilib $(TEP_CFLAGS) $(TFS_CFLAGS)
# tracefs-instance.[ch] holds the private instances (shared with bench/)
TEST_HARNESS	:= tests/harness.c tests/tracefs-instance.c
TEST_HARNESS_H	:= tests/harness.h tests/tracefs-instance.h

UNIT_TESTS	:= $(patsubst %.c,$(O)/%,$(wildcard tests/unit/*.c))
KERNEL_TESTS	:= $(patsubst %.c,$(O)/%,$(wildcard tests/kernel/*.c))
# Scripts left out of make check while they fail, each with its issue; run
# one alone with: sh tests/run-tests.sh SCRIPT
KNOWN_FAILING	:=
SCRIPT_TESTS	:= $(sort $(filter-out $(KNOWN_FAILING),$(wildcard tests/plugins/*.sh tests/tools/*.sh)))
# every file names its license (COPYING)
TESTS		+= tests/check-spdx.sh tests/check-abi.sh tests/check-version.sh

# The library's sources again, built with ASan+UBSan for the sanitizer runs.
SAN_FLAGS	:= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_TESTS	:= $(addsuffix -san,$(UNIT_TESTS) $(KERNEL_TESTS))

$(O)/tests/%: tests/%.c $(TEST_HARNESS) $(TEST_HARNESS_H) tests/sbuf-encode.[ch] $(LIB_A)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) $(TEST_CFLAGS) -o $@ $< $(TEST_HARNESS) tests/sbuf-encode.c \
		$(LIB_A) $(CMOCKA_LIBS) $(TFS_LIBS) $(TEP_LIBS) -lpthread

# compiled once for all of them: each test used to compile every library source again
SAN_OBJS	:= $(patsubst %.c,$(O)/san/%.o,$(LIB_SRCS) $(TEST_HARNESS) tests/sbuf-encode.c)
# kept after the build: make deletes the objects of a pattern rule chain otherwise
.SECONDARY: $(SAN_OBJS)

$(O)/san/%.o: %.c lib/*.h include/*.h $(TEST_HARNESS_H) tests/sbuf-encode.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) $(TEST_CFLAGS) -c -o $@ $<

$(O)/tests/%-san: tests/%.c $(TEST_HARNESS_H) tests/sbuf-encode.h $(SAN_OBJS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) $(LDFLAGS) $(TEST_CFLAGS) -o $@ $< \
		$(SAN_OBJS) $(CMOCKA_LIBS) $(TFS_LIBS) $(TEP_LIBS) -lpthread

CHECK_TARGETS	+= $(UNIT_TESTS) $(KERNEL_TESTS) $(SAN_TESTS)

# A consumer of libtracemap.so as programs outside the tree are (tool-reset-lib.sh)
LIB_CONSUMER	:= $(O)/tests/tools/lib-consumer
$(LIB_CONSUMER): tests/tools/lib-consumer.c include/tracemap.h $(LIB_SO)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -Iinclude $(call lib_rpath,../..) \
		-o $@ $< $(LIB_LINK)
CHECK_TARGETS	+= $(LIB_CONSUMER)
TESTS		+= $(UNIT_TESTS) $(KERNEL_TESTS) $(SCRIPT_TESTS) $(SAN_TESTS)

# test-format-stored is test-format over stored formats: it includes its source
$(O)/tests/unit/test-format-stored $(O)/tests/unit/test-format-stored-san: tests/kernel/test-format.c
