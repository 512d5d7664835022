#!/bin/bash
# `make install` into temporary prefixes, then, outside the source tree, build C and
# C++ programs against the installed copy through pkg-config and through CMake, and run
# them against the demo server. Also checks the layout, the soname and its symlinks,
# the version (mcpc_version() == the header's macros == Cargo.toml), a DESTDIR-staged
# install that is moved elsewhere (both pkg-config --define-prefix and CMake find it),
# static linking, find_package's version check, the command line (bin/mcpc, or
# CLI_NAME) and its man page, the stripped library and its debug information in
# lib/.debug (named by its .gnu_debuglink, found by gdb when gdb is there), and uninstall.
#
# Run from the repository root by `make test-install` (which passes CC, CXX,
# PYTHON, MCPC_VERSION, MCPC_SOVERSION). Needs cmake and pkg-config; as root with
# apt-get it installs them when they are missing. Ends with "N passed, N failed".
set -u

REPO=$PWD
MAKE=${MAKE:-make}
CC=${CC:-cc}
CXX=${CXX:-c++}
PYTHON=${PYTHON:-python3}
VERSION=${MCPC_VERSION:?}
SOVERSION=${MCPC_SOVERSION:?}
passed=0
failed=0

# The library was built by `make test-install`'s own prerequisite: never rebuild it here.
MAKE_INSTALL="$MAKE --no-print-directory -o lib"
pc() { echo $(pkg-config "$@"); }  # without pkg-config's trailing blank

ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() {
    echo "FAIL $1"
    failed=$((failed + 1))
    if [ -s "$WORK/last.log" ]; then sed 's/^/    /' "$WORK/last.log" | tail -25; fi
}
# check NAME COMMAND...: runs the command (output to last.log), ok when it exits 0.
check() {
    local name=$1
    shift
    if "$@" >"$WORK/last.log" 2>&1; then ok "$name"; else fail "$name"; fi
}
finish() {
    echo "test-install: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}

WORK=$(mktemp -d /tmp/mcpc-install-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# ---- tools -----------------------------------------------------------------------
missing=""
command -v cmake >/dev/null || missing="$missing cmake"
command -v pkg-config >/dev/null || missing="$missing pkg-config"
if [ -n "$missing" ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        echo "installing$missing (apt-get)"
        { apt-get install -y -qq $missing || { apt-get update -qq && apt-get install -y -qq $missing; }; } >"$WORK/last.log" 2>&1
    fi
    for tool in $missing; do
        if ! command -v "$tool" >/dev/null; then
            fail "$tool is needed (Debian: apt-get install cmake pkg-config)"
            finish
        fi
    done
fi

# ---- install -----------------------------------------------------------------------
P=$WORK/usr
check "make install PREFIX=$P" $MAKE_INSTALL install PREFIX="$P"
[ "$failed" -eq 0 ] || finish

layout() {
    local lib=$1/lib inc=$1/include
    [ -f "$lib/libmcpc.so.$VERSION" ] && [ ! -L "$lib/libmcpc.so.$VERSION" ] &&
        [ "$(readlink "$lib/libmcpc.so.$SOVERSION")" = "libmcpc.so.$VERSION" ] &&
        [ "$(readlink "$lib/libmcpc.so")" = "libmcpc.so.$SOVERSION" ] &&
        [ -f "$lib/.debug/libmcpc.so.$VERSION.debug" ] && [ "$(stat -c %a "$lib/.debug/libmcpc.so.$VERSION.debug")" = 644 ] &&
        [ -f "$lib/libmcpc.a" ] && [ -f "$inc/mcpc.h" ] && [ -f "$inc/mcpc.hpp" ] &&
        [ -f "$lib/pkgconfig/mcpc.pc" ] &&
        [ -f "$lib/cmake/mcpc/mcpcConfig.cmake" ] && [ -f "$lib/cmake/mcpc/mcpcConfigVersion.cmake" ] &&
        cmp -s "$inc/mcpc.h" "$REPO/include/mcpc.h" && cmp -s "$inc/mcpc.hpp" "$REPO/bindings/cpp/mcpc.hpp" &&
        [ "$(stat -c %a "$lib/libmcpc.so.$VERSION")" = 755 ] && [ "$(stat -c %a "$inc/mcpc.h")" = 644 ] &&
        [ -f "$1/bin/mcpc" ] && [ "$(stat -c %a "$1/bin/mcpc")" = 755 ] && man_page "$1/share/man/man1/mcpc.1"
}
# man -l may be missing: the page is the committed one, and a page of section 1.
man_page() {
    [ -f "$1" ] && [ "$(stat -c %a "$1")" = 644 ] && cmp -s "$1" "$REPO/cli/mcpc.1" && grep -q '^\.TH MCPC 1 ' "$1"
}
check "layout: libmcpc.so.$VERSION, links .so.$SOVERSION and .so, .debug/libmcpc.so.$VERSION.debug, .a, headers, .pc, CMake files, bin/mcpc, share/man/man1/mcpc.1" layout "$P"

soname() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'; }
got=$(soname "$P/lib/libmcpc.so.$VERSION")
if [ "$got" = "libmcpc.so.$SOVERSION" ]; then
    ok "the library's SONAME is libmcpc.so.$SOVERSION"
else
    echo "    SONAME is '${got:-none}'; build.rs must pass -Wl,-soname,libmcpc.so.$SOVERSION" >"$WORK/last.log"
    fail "the library's SONAME is libmcpc.so.$SOVERSION"
fi

# Stripped, with its debug information split off into lib/.debug, as distributions do.
stripped() {  # LIB: no symbol table and no DWARF left
    ! readelf -SW "$1" | grep -E ' \.(symtab|debug_[a-z_]+) ' && readelf -SW "$1" | grep -q ' \.gnu_debuglink '
}
check "the installed library is stripped" stripped "$P/lib/libmcpc.so.$VERSION"
# LIB DEBUGFILE: the debuglink names the file and carries its CRC-32; the file has the DWARF.
debuglink_ok() {
    objcopy --dump-section .gnu_debuglink="$WORK/debuglink.bin" "$1" "$WORK/debuglink.so" &&
        readelf -SW "$2" | grep -q ' \.debug_info ' &&
        "$PYTHON" - "$WORK/debuglink.bin" "$2" <<'PY'
import os, struct, sys, zlib
link = open(sys.argv[1], "rb").read()
name = link[:link.index(b"\0")].decode()
crc, = struct.unpack("<I", link[-4:])
want = zlib.crc32(open(sys.argv[2], "rb").read())
print("debuglink", name, hex(crc), "file", os.path.basename(sys.argv[2]), hex(want))
sys.exit(0 if name == os.path.basename(sys.argv[2]) and crc == want else 1)
PY
}
check "its .gnu_debuglink names lib/.debug/libmcpc.so.$VERSION.debug, CRC and all" \
    debuglink_ok "$P/lib/libmcpc.so.$VERSION" "$P/lib/.debug/libmcpc.so.$VERSION.debug"
if command -v gdb >/dev/null; then
    # gdb follows the debuglink by itself: a line of mcpc's sources for an export.
    gdb_finds_lines() { gdb -nx -batch -ex 'info line mcpc_version' "$1" 2>&1 | grep -E '^Line [0-9]+ of ".*\.rs"'; }
    check "gdb finds the debug information of the installed library" gdb_finds_lines "$P/lib/libmcpc.so.$VERSION"
fi

# The command line finds the installed library (its rpath is $ORIGIN/../lib).
cli_works() {  # PREFIX/bin/NAME
    local found
    found=$(ldd "$1" | sed -n "s/.*libmcpc\.so\.$SOVERSION => \(.*\) (0x.*/\1/p")
    echo "loads: ${found:-nothing}"
    [ -n "$found" ] && [ "$(realpath "$found")" = "$(realpath "$(dirname "$1")/../lib/libmcpc.so.$VERSION")" ] &&
        (cd "$REPO" && "$1" --stdio "$PYTHON demo/server.py" call add '{"a":2,"b":3}') | grep -F '"structuredContent":{"sum":5}'
}
check "bin/mcpc loads the installed library and calls the demo server" cli_works "$P/bin/mcpc"
N=$WORK/named
check "make install CLI_NAME=mcpc-c installs bin/mcpc-c, and no bin/mcpc" sh -c \
    "$MAKE_INSTALL install PREFIX='$N' CLI_NAME=mcpc-c && test -f '$N/bin/mcpc-c' && test ! -e '$N/bin/mcpc'"
check "make install CLI_NAME=mcpc-c installs its man page as mcpc-c.1" sh -c \
    "test -f '$N/share/man/man1/mcpc-c.1' && test ! -e '$N/share/man/man1/mcpc.1'"
check "bin/mcpc-c works" cli_works "$N/bin/mcpc-c"
check "make uninstall CLI_NAME=mcpc-c removes every file" sh -c \
    "$MAKE_INSTALL uninstall PREFIX='$N' CLI_NAME=mcpc-c && test -z \"\$(find '$N' -type f -o -type l)\""

# ---- pkg-config ----------------------------------------------------------------------
export PKG_CONFIG_PATH=$P/lib/pkgconfig
check "pkg-config --modversion mcpc is $VERSION" test "$(pc --modversion mcpc)" = "$VERSION"
check "pkg-config --cflags --libs mcpc" test "$(pc --cflags --libs mcpc)" = "-I$P/include -L$P/lib -lmcpc"
check "pkg-config --static --libs mcpc adds the private libs" \
    test "$(pc --static --libs mcpc)" = "-L$P/lib -lmcpc -lpthread -ldl -lm"

# Sources are copied out of the tree; programs run from the repository root, where
# the examples find demo/server.py.
SRC=$WORK/src
mkdir -p "$SRC"
cp "$REPO/examples/hello.c" "$REPO/bindings/cpp/examples/hello.cpp" "$REPO/tests/install/version_check.c" "$SRC/"

needs_soname() { readelf -d "$1" | grep -q "(NEEDED).*\[libmcpc.so.$SOVERSION\]"; }
runs_hello() {  # BINARY: the C example's output
    local out
    out=$(cd "$REPO" && "$1") || return 1
    grep -qxF 'tool: echo' <<<"$out" && grep -qxF 'structured: {"sum":5}' <<<"$out"
}
runs_hello_cpp() {
    local out
    out=$(cd "$REPO" && "$1") || return 1
    grep -qxF 'structured: {"sum":5}' <<<"$out" && grep -qxF 'echo: hi' <<<"$out" &&
        grep -qxF 'slow: MCPC_ERR_CANCELLED' <<<"$out"
}

B=$WORK/pkgconfig
mkdir -p "$B"
# shellcheck disable=SC2046
check "pkg-config: C example compiles with -Wall -Wextra -Werror" \
    $CC -std=c11 -Wall -Wextra -Werror "$SRC/hello.c" $(pkg-config --cflags --libs mcpc) \
    -Wl,-rpath,"$P/lib" -o "$B/hello"
check "pkg-config: C example needs libmcpc.so.$SOVERSION" needs_soname "$B/hello"
check "pkg-config: C example runs against the demo server" runs_hello "$B/hello"
# shellcheck disable=SC2046
check "pkg-config: C++ example compiles (C++17, -Wall -Wextra -Werror)" \
    $CXX -std=c++17 -Wall -Wextra -Werror "$SRC/hello.cpp" $(pkg-config --cflags --libs mcpc) \
    -Wl,-rpath,"$P/lib" -o "$B/hello_cpp"
check "pkg-config: C++ example runs against the demo server" runs_hello_cpp "$B/hello_cpp"
# shellcheck disable=SC2046
check "version: mcpc_version() == MCPC_VERSION macros == Cargo.toml ($VERSION)" sh -c \
    "$CC -std=c11 -Wall -Wextra -Werror '$SRC/version_check.c' $(pkg-config --cflags --libs mcpc) \
     -DCARGO_VERSION='\"$VERSION\"' -Wl,-rpath,'$P/lib' -o '$B/version_check' && '$B/version_check'"
# Static: libmcpc.a with the private libs pkg-config gives.
static_libs=$(pkg-config --static --libs mcpc | sed 's/-lmcpc\b/-l:libmcpc.a/')
# shellcheck disable=SC2086
check "pkg-config --static: C example links libmcpc.a" \
    $CC -std=c11 -Wall -Wextra -Werror "$SRC/hello.c" $(pkg-config --cflags mcpc) $static_libs -o "$B/hello_static"
check "pkg-config --static: no libmcpc.so needed, and it runs" sh -c \
    "! readelf -d '$B/hello_static' | grep -q 'NEEDED.*libmcpc' && cd '$REPO' && '$B/hello_static' | grep -qxF 'tool: echo'"

# ---- CMake -----------------------------------------------------------------------------
check "README.md shows tests/install/example/CMakeLists.txt" tests/bindings/readme_check.sh tests/install/example/CMakeLists.txt
C=$WORK/cmake
mkdir -p "$C/src"
cp "$REPO/tests/install/example/CMakeLists.txt" "$SRC/hello.c" "$SRC/hello.cpp" "$C/src/"
check "cmake: configure with find_package(mcpc 0.1)" \
    cmake -S "$C/src" -B "$C/build" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" \
    -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror"
check "cmake: build the C and C++ examples" cmake --build "$C/build"
check "cmake: C example needs libmcpc.so.$SOVERSION" needs_soname "$C/build/hello"
check "cmake: C example runs against the demo server" runs_hello "$C/build/hello"
check "cmake: C++ example runs against the demo server" runs_hello_cpp "$C/build/hello_cpp"

mkdir -p "$C/static"
cp "$REPO/tests/install/static/CMakeLists.txt" "$SRC/hello.c" "$C/static/"
check "cmake: mcpc::mcpc_static links libmcpc.a" sh -c \
    "cmake -S '$C/static' -B '$C/static/build' -DCMAKE_PREFIX_PATH='$P' && cmake --build '$C/static/build'"
check "cmake: the static example needs no libmcpc.so, and runs" sh -c \
    "! readelf -d '$C/static/build/hello_static' | grep -q 'NEEDED.*libmcpc' && cd '$REPO' && '$C/static/build/hello_static' | grep -qxF 'tool: echo'"

want_ok() {  # WANT: configures only when find_package(mcpc WANT) accepts the install
    rm -rf "$C/version"
    mkdir -p "$C/version"
    cp "$REPO/tests/install/version/CMakeLists.txt" "$C/version/"
    cmake -S "$C/version" -B "$C/version/build" -DCMAKE_PREFIX_PATH="$P" -DWANT="$1"
}
want_refused() { ! want_ok "$1"; }
major=${VERSION%%.*}
minor=${VERSION#*.}
minor=${minor%%.*}
check "cmake: find_package(mcpc) accepts no version" want_ok ""
check "cmake: find_package(mcpc $major.$minor) accepts $VERSION" want_ok "$major.$minor"
check "cmake: find_package(mcpc $VERSION) accepts $VERSION" want_ok "$VERSION"
check "cmake: find_package(mcpc $((major + 1)).0) refuses $VERSION" want_refused "$((major + 1)).0"
if [ "$major" = 0 ]; then
    check "cmake: find_package(mcpc 0.$((minor + 1))) refuses $VERSION (0.x: a minor version may break)" \
        want_refused "0.$((minor + 1))"
fi

# ---- DESTDIR staging, then moved: both finders are relocatable ------------------------
S=$WORK/stage
check "make install DESTDIR=$S PREFIX=/opt/mcpc" $MAKE_INSTALL install DESTDIR="$S" PREFIX=/opt/mcpc
check "DESTDIR: the files land under DESTDIR/PREFIX" layout "$S/opt/mcpc"
check "DESTDIR: mcpc.pc names the final prefix" grep -qx 'prefix=/opt/mcpc' "$S/opt/mcpc/lib/pkgconfig/mcpc.pc"
mv "$S/opt/mcpc" "$WORK/moved"
M=$WORK/moved
check "moved tree: pkg-config --define-prefix finds it" \
    test "$(PKG_CONFIG_PATH=$M/lib/pkgconfig pc --define-prefix --cflags --libs mcpc)" = "-I$M/include -L$M/lib -lmcpc"
mkdir -p "$C/moved"
cp "$REPO/tests/install/example/CMakeLists.txt" "$SRC/hello.c" "$SRC/hello.cpp" "$C/moved/"
check "moved tree: CMake finds it and builds" sh -c \
    "cmake -S '$C/moved' -B '$C/moved/build' -DCMAKE_PREFIX_PATH='$M' && cmake --build '$C/moved/build'"
check "moved tree: the CMake-built example runs" runs_hello "$C/moved/build/hello"
check "moved tree: bin/mcpc finds the moved library" cli_works "$M/bin/mcpc"
if command -v gdb >/dev/null; then
    check "moved tree: gdb finds the moved debug information" gdb_finds_lines "$M/lib/libmcpc.so.$VERSION"
fi

# ---- uninstall -----------------------------------------------------------------------------
check "make uninstall removes every file" sh -c \
    "$MAKE_INSTALL uninstall PREFIX='$P' && test -z \"\$(find '$P' -type f -o -type l)\""

finish
