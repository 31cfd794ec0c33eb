# SPDX-License-Identifier: GPL-2.0-only
# make check-kernels: the kernel-facing tests on Debian 12's 6.1 and 6.12
# kernels under QEMU and on the running kernel (tests/kernels/check-kernels.sh).
# The kernel packages are kept in build/kernels, which make clean removes.

check-kernels: deps
	$(Q)$(MAKE) --no-print-directory WERROR=-Werror all check-build
	$(Q)sh scripts/mount-tracefs.sh
	$(Q)sh tests/kernels/check-kernels.sh

.PHONY: check-kernels
