#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# make check-kernels: the kernel-facing tests of this tree on Debian 12's
# kernels, each booted under QEMU, and on the running kernel natively; one
# table kernel x test at the end, with the wall time.
#
# Each guest shares the host's root read-only over 9p under a tmpfs overlay
# (tests/kernels/guest-init.sh), so it runs the binaries of this tree with
# the host's programs; whatever it writes dies with it. The kernel packages
# come from Debian's archive through apt-get download and are kept in
# KM_CACHE (build/kernels: `make clean`, or `rm -rf build/kernels`).
#
#   KM_KERNELS="pkg ..."   Debian packages to boot (default: the newest
#                          linux-image-6.1.0-N-amd64 and linux-image-6.12.N+deb12-amd64);
#                          "6.1", "6.12" the newest of that series; "native"
#                          names the running kernel
#   KM_TESTS="t ..."       tests (default: the kernel-facing ones, see below)
#   KM_SMOKE=1             the guests only, with the smoke subset of .ci/run:
#                          exact counts through both backends, snapshot,
#                          trace-cmd-mmap record, Python, the refusals without
#                          the mapping
#   KM_TIMEOUT_SCALE=N     tests' timeouts times N in a guest (default 4
#                          under TCG, 1 with KVM)
#   KM_ACCEL=tcg           TCG even where /dev/kvm is (a KVM that cannot boot
#                          the guest is found out and left for TCG anyway)
#   KM_KVM_BOOT_S=60       the seconds a KVM guest has to boot before TCG
#   KM_TCG_THREAD=single   QEMU's TCG on one host thread per guest (multi: one
#                          a vCPU, which crashes guests, see tcg_thread below)
#   KM_JOBS=N              guests at once under single-threaded TCG (default:
#                          the host's CPUs; one at a time otherwise)
#   KM_GUEST_TIMEOUT=s     the bound of one guest's whole run (default 5400,
#                          1800 with KM_SMOKE=1)
set -u
cd "$(dirname "$0")/../.." || exit 1
TREE=$(pwd)
CACHE=${KM_CACHE:-$TREE/build/kernels}
start=$(date +%s)

die() {
	echo "check-kernels: $*" >&2
	exit 1
}

# the host's tools, from Debian packages: qemu, a static busybox for /init,
# cpio for the initramfs, modinfo for the modules' dependencies
need=
for t in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static cpio:cpio modinfo:kmod \
	 xz:xz-utils dpkg-deb:dpkg; do
	command -v "${t%%:*}" > /dev/null 2>&1 || need="$need ${t#*:}"
done
if [ -n "$need" ]; then
	echo "check-kernels: installing$need (Debian packages)"
	apt-get install -y -q --no-install-recommends $need > /dev/null ||
		die "could not install$need: run 'apt-get install$need' as root"
fi
file -L "$(command -v busybox)" 2>/dev/null | grep -q 'statically linked' ||
	[ -x /bin/busybox ] || die "busybox must be the static one: apt-get install busybox-static"

mkdir -p "$CACHE" || die "cannot create the cache $CACHE"

# Debian's current 6.1 and 6.12 kernels of bookworm's archive
newest() {
	apt-cache search --names-only "$1" | awk '{print $1}' | grep -E "$1" | sort -V | tail -1
}
if [ -z "${KM_KERNELS:-}" ]; then
	apt-get update -q > "$CACHE/apt-update.log" 2>&1 ||
		echo "check-kernels: apt-get update failed (see $CACHE/apt-update.log): using the lists as they are"
	k61=$(newest '^linux-image-6\.1\.0-[0-9]+-amd64$')
	k612=$(newest '^linux-image-6\.12\.[0-9]+\+deb12-amd64$')
	[ -n "$k61" ] && [ -n "$k612" ] ||
		die "no linux-image-6.1.0-N-amd64 or linux-image-6.12.N+deb12-amd64 in apt's lists: check /etc/apt/sources.list(.d) names bookworm and bookworm-security"
	KM_KERNELS="$k61 $k612 native"
fi
# "6.1" and "6.12" name the newest package of that series; apt-get download
# takes any other name it has no package of for a pattern ("6.12" fetched
# every package whose name holds 6.12): only linux-image-* names go to it
kernels=
for k in $KM_KERNELS; do
	case $k in
	native) ;;
	*[][*?^\$\|]*) die "KM_KERNELS: '$k' is a pattern: name a linux-image-* package, 6.1, 6.12 or native" ;;
	linux-image-*) ;;
	6.1) k=$(newest '^linux-image-6\.1\.0-[0-9]+-amd64$') ;;
	6.12) k=$(newest '^linux-image-6\.12\.[0-9]+\+deb12-amd64$') ;;
	*) die "KM_KERNELS: '$k' is no linux-image-* package, 6.1, 6.12 nor native" ;;
	esac
	[ -n "$k" ] || die "KM_KERNELS: no package of that series in apt's lists (apt-get update)"
	kernels="$kernels $k"
done
KM_KERNELS=$kernels

# the kernel-facing tests (not the unit tests, fuzzers, sanitizer builds,
# nor the tool's option parsing and the install check, which no kernel changes)
if [ -z "${KM_TESTS:-}" ] && [ "${KM_SMOKE:-0}" = 1 ]; then
	KM_TESTS="build/tests/kernel/test-cpu-consume tests/tools/tool-snapshot.sh tests/tools/tool-nomap.sh
		  tests/plugins/tc-record.sh tests/python/test_stream.py"
	KM_KERNELS=$(echo "$KM_KERNELS" | sed 's/native//')
fi
# a guest's whole run: the smoke's tests take about 4 minutes under TCG
guest_timeout=${KM_GUEST_TIMEOUT:-5400}
[ "${KM_SMOKE:-0}" = 1 ] && guest_timeout=${KM_GUEST_TIMEOUT:-1800}
if [ -z "${KM_TESTS:-}" ]; then
	KM_TESTS=$(ls build/tests/kernel/test-* 2>/dev/null | grep -v -- '-san$')
	for t in tests/tools/*.sh tests/plugins/*.sh tests/python/test_*.py; do
		case $t in
		*/tool-help.sh|*/tool-args.sh|*/test-runner.sh|*/lib-install.sh) ;;
		*) KM_TESTS="$KM_TESTS $t" ;;
		esac
	done
fi
[ -x build/tracemap ] || die "the tree is not built: run 'make all check-build' first"

# KVM when /dev/kvm is there and works: a nested /dev/kvm may refuse the
# guest's CPU model or stop it at its first instruction, which only a boot
# shows (guest() falls back to TCG then, for this kernel and the next ones)
accel=tcg
[ -w /dev/kvm ] && [ "${KM_ACCEL:-}" != tcg ] && accel=kvm
tcg_scale=${KM_TIMEOUT_SCALE:-4}
# single-threaded TCG: with a thread per vCPU, QEMU 7.2 lets a vCPU run
# code another one is patching, and a guest whose tracepoints are switched
# on and off dies of "Oops: int3" (Documentation/design/kernel-facts.md)
tcg_thread=${KM_TCG_THREAD:-single}
scale() { if [ "$accel" = kvm ]; then echo "${KM_TIMEOUT_SCALE:-1}"; else echo "$tcg_scale"; fi; }

# fetch and unpack one kernel package; prints the unpacked directory
fetch() {
	pkg=$1
	dir=$CACHE/$pkg
	[ -f "$dir/.unpacked" ] && { echo "$dir"; return 0; }
	deb=$(ls "$CACHE/${pkg}_"*.deb 2>/dev/null | tail -1)
	if [ -z "$deb" ]; then
		(cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "$pkg") > "$CACHE/$pkg.download.log" 2>&1 ||
			{ echo "check-kernels: apt-get download $pkg failed:" >&2; cat "$CACHE/$pkg.download.log" >&2; return 1; }
		deb=$(ls "$CACHE/${pkg}_"*.deb | tail -1)
	fi
	rm -rf "$dir" && mkdir -p "$dir" && dpkg-deb -x "$deb" "$dir" || return 1
	touch "$dir/.unpacked"
	echo "$dir"
}

# the modules the guest needs, each after the ones it depends on (modinfo
# reads them; none is needed when the kernel has it built in); veth for
# tc-listen-udp.sh's network namespace
MODS="virtio virtio_ring virtio_pci netfs 9pnet 9pnet_virtio 9p overlay veth"
modfile() {
	find "$moddir/kernel" -name "$1.ko" -o -name "$1.ko.xz" -o -name "$1.ko.zst" \
		-o -name "$(echo "$1" | tr _ -).ko*" | head -1
}
add_mod() {
	case " $order " in *" $1 "*) return 0 ;; esac
	[ -n "$(modfile "$1")" ] || return 0
	# sh has no locals: the file is looked up again after the recursion
	for d in $(modinfo -F depends "$(modfile "$1")" | tr , ' '); do
		add_mod "$d"
	done
	f=$(modfile "$1")
	case $f in
	*.xz) xz -dc "$f" > "$initdir/modules/$1.ko" ;;
	*.zst) zstd -qdc "$f" > "$initdir/modules/$1.ko" ;;
	*) cp "$f" "$initdir/modules/$1.ko" ;;
	esac
	order="$order $1"
}

# the initramfs of one run: busybox, /init, the modules and the job
mkinitrd() {
	kdir=$1 out=$2
	initdir=$out.d
	rm -rf "$initdir"
	mkdir -p "$initdir/bin" "$initdir/modules" "$initdir/proc" "$initdir/sys" "$initdir/dev"
	cp "$(command -v busybox)" "$initdir/bin/busybox"
	ln -s busybox "$initdir/bin/sh"
	cp tests/kernels/guest-init.sh "$initdir/init"
	chmod 755 "$initdir/init"
	moddir=$(ls -d "$kdir"/lib/modules/* | head -1)
	order=
	for m in $MODS; do
		add_mod "$m"
	done
	echo "$order" > "$initdir/modules.order"
	cat > "$initdir/job" <<-EOF
	KM_TAG=km-root
	KM_DIR='$TREE'
	KM_TESTS='$(echo $KM_TESTS)'
	KM_TIMEOUT_SCALE=$(scale)
	EOF
	(cd "$initdir" && find . | cpio -o -H newc --quiet) > "$out" || return 1
	rm -rf "$initdir"
}

# results of run-tests.sh's lines, one "test<TAB>status<TAB>reason" per test
parse() {
	sed -n 's/\r$//; s/^PASS  \([^ ]*\) .*/\1	pass	/p
		s/^SKIP  \([^:]*\): *\(.*\)/\1	skip	\2/p
		s/^FAIL  \([^ :]*\)[ :]*\(.*\)/\1	fail	\2/p' "$1"
}

# boots one kernel with the tests' job: its serial lines go to
# $RES/$name.out, qemu's own messages to $RES/$name.qemu, every test's log
# and a failed test's files to $RES/$name.kept (a writable 9p share); under KVM a guest
# that has not booted within KM_KVM_BOOT_S (60 s) is stopped
guest() {
	echo "== $3 (QEMU, $accel$([ "$accel" = tcg ] && echo " $tcg_thread-threaded"), 2 vCPUs)"
	mkinitrd "$1" "$CACHE/$3.initrd" || die "could not build the initramfs of $3"
	rm -rf "$RES/$3.console" "$RES/$3.out" "$RES/$3.kept"
	mkdir -p "$RES/$3.kept"
	cpu=max
	[ "$accel" = kvm ] && cpu=host
	acc=$accel
	[ "$accel" = tcg ] && acc=tcg,thread=$tcg_thread
	timeout -k 10 "$guest_timeout" qemu-system-x86_64 -accel "$acc" -cpu $cpu -smp 2 -m 3072 \
		-nodefaults -display none -no-reboot \
		-kernel "$1/boot/vmlinuz-$2" -initrd "$CACHE/$3.initrd" \
		-append "console=ttyS0 panic=-1 quiet no_timer_check" \
		-serial "file:$RES/$3.console" -serial "file:$RES/$3.out" \
		-virtfs local,path=/,mount_tag=km-root,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$RES/$3.kept",mount_tag=km-kept,security_model=none \
		> "$RES/$3.qemu" 2>&1 &
	qpid=$!
	if [ "$accel" = kvm ]; then
		w=0
		while kill -0 $qpid 2> /dev/null && ! grep -q '^KM-BOOTED' "$RES/$3.out" 2> /dev/null; do
			if [ $w -ge "${KM_KVM_BOOT_S:-60}" ]; then
				kill $qpid
				break
			fi
			sleep 1
			w=$((w + 1))
		done
	fi
	wait $qpid
	q=$?
	rm -f "$CACHE/$3.initrd"
	sed 's/^/   qemu: /' "$RES/$3.qemu" | head -3
	return $q
}

RES=$CACHE/results
rm -rf "$RES"
mkdir -p "$RES"

# one guest kernel (argument 1, a package) as column $2: its progress lines
# on stdout, its column's name in $RES/col.$2; returns 2 when KVM did not
# boot it (the caller runs it again under TCG)
run_guest() {
	kdir=$(fetch "$1") || {
		echo "check-kernels: could not fetch $1 (offline? 'make check CHECK_KERNELS=no' leaves the guests out)"
		return 1
	}
	kver=$(ls "$kdir/lib/modules" | head -1)
	name=$kver
	t0=$(date +%s)
	guest "$kdir" "$kver" "$name"
	qrc=$?
	if [ "$accel" = kvm ] && ! grep -q '^KM-BOOTED' "$RES/$name.out"; then
		echo "   KVM did not boot the guest (qemu exit $qrc: $(grep -m1 -i 'error' "$RES/$name.qemu")): TCG from here on"
		return 2
	fi
	secs=$(( $(date +%s) - t0 ))
	boot=$(sed -n 's/^KM-BOOTED //p' "$RES/$name.out" | tr -d '\r')
	if grep -q '^KM-ERROR' "$RES/$name.out"; then
		echo "   the guest failed: $(grep '^KM-ERROR' "$RES/$name.out")"
	elif ! grep -q '^KM-EXIT' "$RES/$name.out"; then
		echo "   the guest did not finish (qemu exit $qrc after $secs s); its console: $RES/$name.console"
		grep -m1 -A3 'Kernel panic' "$RES/$name.console" | sed 's/^/   | /'
	fi
	echo "   $(grep -E '^[0-9]+ passed' "$RES/$name.out" | tail -1) in $secs s (booted in ${boot:-?} s)"
	[ -n "$(ls "$RES/$name.kept" 2>/dev/null | grep -v '^logs$')" ] &&
		echo "   the failed tests' files (screenshots, traces): $RES/$name.kept"
	parse "$RES/$name.out" > "$RES/$name.tsv"
	echo "$name" > "$RES/col.$2"
}

# the guests first: under KVM one at a time (the first one finds out
# whether KVM boots at all); under single-threaded TCG each guest takes
# one host CPU, so KM_JOBS of them (default: the host's CPUs) run at once,
# their lines printed in order once they are done
i=0
todo=
for k in $KM_KERNELS; do
	i=$((i + 1))
	[ "$k" = native ] || todo="$todo $i:$k"
done
if [ "$accel" = kvm ]; then
	for ik in $todo; do
		run_guest "${ik#*:}" "${ik%%:*}"
		[ $? = 2 ] && { accel=tcg; break; }
		todo=$(echo "$todo" | sed "s| $ik||")
	done
fi
jobs=${KM_JOBS:-1}
[ "$tcg_thread" = single ] && jobs=${KM_JOBS:-$(nproc)}
[ "$accel" = tcg ] || jobs=1
set -- $todo
while [ $# -gt 0 ]; do
	batch=
	while [ $# -gt 0 ] && [ $(echo $batch | wc -w) -lt "$jobs" ]; do
		batch="$batch $1"
		shift
	done
	for ik in $batch; do
		run_guest "${ik#*:}" "${ik%%:*}" > "$RES/run.${ik%%:*}" 2>&1 &
	done
	wait
	for ik in $batch; do
		cat "$RES/run.${ik%%:*}"
	done
done

# then this machine's kernel, with nothing else running
i=0
for k in $KM_KERNELS; do
	i=$((i + 1))
	[ "$k" = native ] || continue
	name=$(uname -r)
	echo "== $name (native)"
	t0=$(date +%s)
	TEST_LOGDIR=$RES/logs-native sh tests/run-tests.sh $KM_TESTS > "$RES/$name.out" 2>&1
	echo "   $(tail -1 "$RES/$name.out") in $(( $(date +%s) - t0 )) s"
	parse "$RES/$name.out" > "$RES/$name.tsv"
	echo "$name" > "$RES/col.$i"
done
cols=
i=0
for k in $KM_KERNELS; do
	i=$((i + 1))
	[ -f "$RES/col.$i" ] || { echo "check-kernels: $k did not run"; bad_run=1; continue; }
	cols="$cols $(cat "$RES/col.$i")"
done

# one row per test, one column per kernel; the reasons of skips and
# failures below the table
echo
printf '| test |'
for c in $cols; do printf ' %s |' "$c"; done
printf '\n|---|'
for c in $cols; do printf -- '---|'; done
echo
for t in $KM_TESTS; do
	printf '| %s |' "$(echo "$t" | sed 's|^build/||')"
	for c in $cols; do
		s=$(awk -F'\t' -v t="$t" '$1 == t { print $2 }' "$RES/$c.tsv")
		printf ' %s |' "${s:-not run}"
	done
	echo
done
echo
bad=${bad_run:-0}
for c in $cols; do
	awk -F'\t' -v c="$c" '$2 != "pass" { printf "%s: %s %s: %s\n", c, $2, $1, $3 }' "$RES/$c.tsv"
	for t in $KM_TESTS; do
		grep -q "^$t	" "$RES/$c.tsv" || { echo "$c: not run $t"; bad=1; }
	done
	grep -q '	fail	' "$RES/$c.tsv" && bad=1
done
echo "wall time: $(( $(date +%s) - start )) s"
cat "$RES"/*.tsv | awk -F'\t' '{ n[$2]++ } END {
	printf "check-kernels: %d passed, %d failed, %d skipped\n", n["pass"], n["fail"], n["skip"] }'
exit $bad
