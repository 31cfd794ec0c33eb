#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# /init of the guests of tests/kernels/check-kernels.sh (busybox, static):
# loads the modules the kernel package builds for 9p and overlayfs, mounts
# the host's root (9p, read-only) under a tmpfs overlay, and runs
# guest-run.sh in it. Results go to the second serial port; the guest
# powers off whatever happens.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# the results port, open before /dev moves into the new root
exec 3> /dev/ttyS1

fail() {
	echo "KM-ERROR $*" >&3
	poweroff -f
}

for m in $(cat /modules.order); do
	insmod "/modules/$m.ko" || fail "insmod $m failed"
done

# KM_TAG (the 9p mount tag), KM_DIR (the tree), KM_TESTS, KM_TIMEOUT_SCALE
. /job
mkdir -p /lower /rw /root
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose "$KM_TAG" /lower ||
	fail "mounting the host's root over 9p ($KM_TAG) failed"
mount -t tmpfs -o size=75% rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /root ||
	fail "the overlay over the host's root failed"
mount --move /dev /root/dev
mount -t proc proc /root/proc
mount -t sysfs sys /root/sys
mount -t tmpfs tmp /root/tmp
mount -t tmpfs run /root/run
mkdir -p /root/dev/pts /root/dev/shm
mount -t devpts -o ptmxmode=666 devpts /root/dev/pts
mount -t tmpfs shm /root/dev/shm
mount -t tracefs nodev /root/sys/kernel/tracing
mount -t debugfs nodev /root/sys/kernel/debug 2>/dev/null
# the host's directory for the tests' logs and a failed test's files
mkdir -p /root/km-kept
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 km-kept /root/km-kept ||
	echo "KM-NOTE no share for the failed tests' files (km-kept)" >&3
hostname km-guest
# the loopback interface, which tests send to (test-format's UDP to itself)
ip link set lo up || fail "cannot bring up the loopback interface"
cp /job /root/tmp/km-job
chroot /root /bin/sh "$KM_DIR/tests/kernels/guest-run.sh" /tmp/km-job >&3 2>&1
echo "KM-EXIT $?" >&3
sync
poweroff -f
