#!/bin/bash
# Installs what the Linux cross builds (mk/cross.mk) need on a Debian machine, when it
# is missing. Each argument names a part:
#   aarch64       gcc-aarch64-linux-gnu with its glibc, and qemu-user to run what it
#                 builds; Rust's aarch64-unknown-linux-gnu target
#   zig           zig and cargo-zigbuild, pinned, from PyPI into a venv in $MCPC_CROSS_DIR:
#                 they link against an old glibc (2.17, manylinux2014) or musl
#   musl          Rust's x86_64-unknown-linux-musl target, and Debian's musl (its
#                 loader runs the musl library here)
#   arm64-python  Debian's aarch64 Python 3.11, unpacked into $MCPC_CROSS_DIR/arm64-python
#                 (no package is installed for arm64: qemu-aarch64 -L runs it from there)
# Tools and the sysroot are kept in $MCPC_CROSS_DIR (default ~/.cache/mcpc-cross), reused
# while their pins are unchanged.
set -euo pipefail

ZIG_PIN=ziglang==0.17.1
ZIGBUILD_PIN=cargo-zigbuild==0.24.1
# The arm64 packages the interpreter, its standard library and ctypes need; the C
# libraries of the extension modules the tests import (ssl, lzma, bz2, ...).
ARM64_PYTHON_PKGS=(python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libc6 libffi8 zlib1g
    libexpat1 libssl3 libbz2-1.0 liblzma5 libuuid1 libcrypt1 libsqlite3-0 libtirpc3 libnsl2
    libgcc-s1 libncursesw6 libtinfo6 libreadline8 libdb5.3 libgssapi-krb5-2 libkrb5-3 libk5crypto3
    libkrb5support0 libcom-err2 libkeyutils1)
DIR=${MCPC_CROSS_DIR:-$HOME/.cache/mcpc-cross}

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
rust_target() {
    rustup target list --installed 2>/dev/null | grep -qx "$1" || rustup target add "$1"
}

for part in "$@"; do
    case $part in
    aarch64)
        # binfmt_misc is often not mounted (containers): nothing may rely on running an
        # aarch64 program directly, so qemu-user-binfmt is not wanted.
        command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null &&
            [ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] ||
            apt_install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
        rust_target aarch64-unknown-linux-gnu
        ;;
    zig)
        # cargo-zigbuild runs `python3 -m ziglang` when no zig is on PATH: the venv's
        # bin goes first on PATH where it runs (mk/cross.mk).
        if [ "$(cat "$DIR/venv/.pins" 2>/dev/null)" != "$ZIG_PIN $ZIGBUILD_PIN" ]; then
            rm -rf "$DIR/venv"
            python3 -m venv "$DIR/venv"
            "$DIR/venv/bin/pip" install -q --disable-pip-version-check "$ZIG_PIN" "$ZIGBUILD_PIN"
            echo "$ZIG_PIN $ZIGBUILD_PIN" >"$DIR/venv/.pins"
        fi
        ;;
    musl)
        rust_target x86_64-unknown-linux-musl
        [ -e /lib/ld-musl-x86_64.so.1 ] || apt_install musl
        ;;
    arm64-python)
        root=$DIR/arm64-python
        if [ "$(cat "$root/.pins" 2>/dev/null)" != "${ARM64_PYTHON_PKGS[*]}" ]; then
            dpkg --print-foreign-architectures | grep -qx arm64 || as_root dpkg --add-architecture arm64
            as_root apt-get update -qq
            rm -rf "$root" "$DIR/arm64-debs" && mkdir -p "$root" "$DIR/arm64-debs"
            # As root apt warns that its _apt user cannot write there: harmless.
            (cd "$DIR/arm64-debs" && apt-get download -q "${ARM64_PYTHON_PKGS[@]/%/:arm64}" 2>&1 >/dev/null |
                { grep -v 'unsandboxed as root' || true; })
            for deb in "$DIR"/arm64-debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
            rm -rf "$DIR/arm64-debs"
            echo "${ARM64_PYTHON_PKGS[*]}" >"$root/.pins"
        fi
        ;;
    *)
        echo "setup.sh: unknown part $part (aarch64, zig, musl, arm64-python)" >&2
        exit 2
        ;;
    esac
done
