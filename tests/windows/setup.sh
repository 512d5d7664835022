#!/bin/bash
# Installs what the Windows build and its tests need on a Debian machine, when it
# is missing: mingw-w64 (the C and C++ cross-compilers and the linker Rust's
# x86_64-pc-windows-gnu target uses), wine64 (runs the tests), and that Rust
# target with clippy. With --no-rust both are left alone (a prebuilt DLL is used).
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v x86_64-w64-mingw32-gcc >/dev/null && command -v x86_64-w64-mingw32-g++-posix >/dev/null ||
    missing+=(mingw-w64)
[ -x /usr/lib/wine/wine64 ] || missing+=(wine64)
if [ ${#missing[@]} -gt 0 ]; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "${1:-}" != "--no-rust" ]; then
    rustup target list --installed 2>/dev/null | grep -qx x86_64-pc-windows-gnu ||
        rustup target add x86_64-pc-windows-gnu
    # make test-windows-rust runs clippy on the Windows build.
    rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
fi
