#!/usr/bin/env bash
# The arm64 lab: pmcsh cross-built for aarch64, run inside QEMU's aarch64
# system emulator with -icount, where a stock Debian arm64 kernel drives an
# emulated Armv8 PMUv3 and instructions retired are exact.  Caches and DRAM
# are not emulated: no time read here means anything.
#
#   spec/lab/lab.sh deps            install the Debian packages it needs
#   spec/lab/lab.sh run CMD ARGS    boot, run CMD from the project root, print
#                                   its output, exit with its status
#
# Downloads (kernel, busybox, arm64 Lua modules) are Debian packages, cached
# in .lab-cache/ (git-ignored) and reused.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="$root/.lab-cache"
triplet=aarch64-linux-gnu
libdir=/usr/lib/$triplet
kernel_pkg=linux-image-cloud-arm64

say() { echo "lab: $*" >&2; }
die() { say "$*"; exit 2; }

# Host packages: the emulator, the cross compiler, and the arm64 libraries
# pmcsh links (multiarch).  lua-term has no multiarch build: it is fetched.
HOST_PKGS="qemu-system-arm gcc-$triplet libc6-dev-arm64-cross cpio"
ARM_PKGS="liblua5.4-dev:arm64 libreadline-dev:arm64 libpfm4-dev:arm64 lua-cjson:arm64 lua-system:arm64 lua-filesystem:arm64"

deps() {
	dpkg --print-foreign-architectures | grep -qx arm64 || { dpkg --add-architecture arm64; apt-get update -qq; }
	local missing=""
	for p in $HOST_PKGS $ARM_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		say "installing:$missing"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
			die "cannot install:$missing (apt-get install$missing)"
	fi
}

# A Debian package unpacked into $cache/pkgs/NAME, downloaded once.
fetch() {
	local name="$1" dir="$cache/pkgs/${1%%:*}"
	[ -d "$dir" ] && return
	mkdir -p "$cache/debs" "$dir"
	(cd "$cache/debs" && apt-get download "$name" >/dev/null 2>&1) || die "cannot download Debian package $name"
	dpkg-deb -x "$cache"/debs/"${1%%:*}"_*.deb "$dir"
}

kernel() {
	# the meta package names the versioned image it depends on
	local image
	image="$(apt-cache depends "$kernel_pkg:arm64" 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[^:]*\).*/\1/p' | head -1)"
	[ -n "$image" ] || die "no $kernel_pkg:arm64 in the package lists (apt-get update?)"
	fetch "$image:arm64"
	ls "$cache/pkgs/$image"/boot/vmlinuz-* | head -1
}

# The shared libraries an arm64 ELF file needs, transitively, from $libdir.
needed() {
	local todo="$*" seen=" "
	while [ -n "$todo" ]; do
		set -- $todo; todo=""
		for f in "$@"; do
			for lib in $($triplet-readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
				case "$seen" in *" $lib "*) continue ;; esac
				seen="$seen$lib "
				echo "$libdir/$lib"
				todo="$todo $(readlink -f "$libdir/$lib")"
			done
		done
	done
}

# The root file system: busybox, pmcsh and the project tree, the libraries
# and Lua modules it loads (busted's included), an /init that runs /cmd.
image() {
	make -C "$root" -s CROSS=$triplet- "build-$triplet/pmcsh" marker >/dev/null
	fetch busybox-static:arm64
	fetch lua-term:arm64
	local fs="$cache/rootfs"
	rm -rf "$fs"
	mkdir -p "$fs"/{bin,dev,proc,sys,tmp,lib,root,usr/share/lua,"$libdir"/lua} "$fs/p"
	cp "$cache/pkgs/busybox-static/bin/busybox" "$fs/bin/"
	cp "$root/build-$triplet/pmcsh" "$fs/p/pmcsh"
	cp -r "$root"/lua "$root"/scripts "$root"/events "$root"/spec "$fs/p/"
	# the dynamic loader and every library pmcsh and the Lua C modules need
	cp -L "$libdir/ld-linux-aarch64.so.1" "$fs/lib/"
	local mods="$libdir/lua/5.4/cjson.so $libdir/lua/5.4/lfs.so $libdir/lua/5.4/system/core.so"
	mods="$mods $cache/pkgs/lua-term/$libdir/liblua5.4-term.so.0"
	for lib in $(needed "$fs/p/pmcsh" $mods); do cp -L "$lib" "$fs/$libdir/"; done
	cp -rL "$libdir/lua/5.4" "$fs/$libdir/lua/"
	mkdir -p "$fs/$libdir/lua/5.4/term"
	cp -L "$cache/pkgs/lua-term/$libdir/liblua5.4-term.so.0" "$fs/$libdir/lua/5.4/term/core.so"
	cp -rL /usr/share/lua/5.4 "$fs/usr/share/lua/"
	# the STREAM loops' instructions per element, read off the arm64 binary on
	# this side (no objdump in the guest), beside it for stream.disasm there
	LAB_EXE="$root/build-$triplet/pmcsh" LAB_OBJDUMP="$triplet-objdump" "$root/pmcsh" -e '
		io.write("return {\n")
		for _, k in ipairs(stream.kernels()) do
			for _, isa in ipairs{"generic"} do
				local r = stream.disasm(k.name, {exe = os.getenv("LAB_EXE"), objdump = os.getenv("LAB_OBJDUMP"),
					isa = isa, quiet = true})
				if r then
					io.write(string.format("  [%q] = {instructions = %d, elements = %g, per_element = %.17g},\n",
						r.symbol, r.instructions, r.elements, r.per_element))
				end
			end
		end
		io.write("}\n")' >"$fs/p/pmcsh.loops" ||
		die "cannot disassemble the arm64 STREAM loops"
	grep -q '"stream_copy' "$fs/p/pmcsh.loops" || die "no STREAM loop found in the arm64 binary"
	# the user's loops of spec/lab/loops, cross-built, each with its
	# disassembly beside it (SO.loops: instructions and doubles a trip)
	for src in "$root"/spec/lab/loops/*.c; do
		local so="$fs/p/spec/lab/loops/$(basename "${src%.c}").so"
		$triplet-gcc -O2 -fno-tree-vectorize -shared -fPIC -I"$root/include" -o "$so" "$src" ||
			die "cannot cross-build $src"
		LAB_SO="$so" LAB_OBJDUMP="$triplet-objdump" LAB_SYMS="$($triplet-nm --defined-only "$so" |
			awk '$2 ~ /^[tT]$/ { print $3 }')" "$root/pmcsh" -e '
			io.write("return {\n")
			for sym in os.getenv("LAB_SYMS"):gmatch("%S+") do
				local r = stream.disasm({symbol = sym, exe = os.getenv("LAB_SO")}, {objdump = os.getenv("LAB_OBJDUMP")})
				if r then
					io.write(string.format("  [%q] = {instructions = %d, stored = %g, loaded = %g},\n",
						sym, r.instructions, r.stored, r.loaded))
				end
			end
			io.write("}\n")' >"$so.loops" || die "cannot disassemble $so"
	done
	# region programs linked with the cross-built marker library
	mkdir -p "$fs/p/spec/lab/regions"
	for src in "$root"/spec/lab/regions/*.c; do
		$triplet-gcc -O2 -I"$root/include" -o "$fs/p/spec/lab/regions/$(basename "${src%.c}")" "$src" \
			"$root/build-$triplet/libpmcsh-marker.a" -pthread || die "cannot cross-build $src"
	done
	cat >"$fs/init" <<-'EOF'
	#!/bin/busybox sh
	/bin/busybox --install -s /bin
	mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	[ -e /proc/sys/kernel/perf_user_access ] && echo 1 >/proc/sys/kernel/perf_user_access
	export HOME=/root PATH=/bin PMCSH_EMULATED="QEMU TCG, -icount shift=0, Cortex-A57"
	cd /p
	# the console is a terminal in here, the host's file is not: the
	# command's output goes through a file, so nothing draws a progress meter
	sh /cmd </dev/null >/tmp/lab.out 2>&1
	st=$?
	cat /tmp/lab.out
	echo "@@lab-exit $st@@"
	poweroff -f
	EOF
	chmod 755 "$fs/init"
	(cd "$fs" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$cache/initrd.gz"
}

# Boots the image with CMD as /cmd (a second cpio after the first); prints
# the guest's output and exits with the command's status.
run() {
	[ $# -gt 0 ] || die "usage: spec/lab/run COMMAND [ARGS...]"
	local vmlinuz cmd out
	vmlinuz="$(kernel)"
	[ -s "$cache/initrd.gz" ] && [ -z "$(find "$root"/lua "$root"/scripts "$root"/events "$root"/spec "$root"/core \
		"$root"/kernels "$root"/include "$root"/marker -newer "$cache/initrd.gz" -print -quit)" ] || image
	cmd="$(mktemp -d)"
	printf '%q ' "$@" >"$cmd/cmd"
	(cd "$cmd" && echo cmd | cpio -o -H newc 2>/dev/null | gzip -1) | cat "$cache/initrd.gz" - >"$cmd/initrd.gz"
	out="$cmd/console"
	# One vCPU: QEMU's instructions-retired event reads its global icount, so
	# a second vCPU's instructions leak into this one's counters (seen: 4.47
	# instructions per 2-instruction iteration with a busy loop on cpu 1).
	qemu-system-aarch64 -M virt -cpu cortex-a57 -m 1024 -smp 1 -nographic -icount shift=0 -no-reboot -nic none \
		-kernel "$vmlinuz" -initrd "$cmd/initrd.gz" \
		-append "console=ttyAMA0 quiet loglevel=0 panic=-1 rdinit=/init" </dev/null | tr -d '\r' >"$out" || true
	local status
	status="$(sed -n 's/^@@lab-exit \([0-9]*\)@@$/\1/p' "$out" | tail -1)"
	sed '/^@@lab-exit /d' "$out"
	rm -rf "$cmd"
	[ -n "$status" ] || die "the guest did not finish (no exit status on its console)"
	exit "$status"
}

case "${1:-}" in
deps) deps ;;
image) image ;;
run) shift; run "$@" ;;
*) die "usage: $0 deps | image | run COMMAND [ARGS...]" ;;
esac
