#!/bin/bash
# The sdist (make python-sdist) holds what building from source needs, installs with
# pip into a fresh venv by building the library with cargo, and the installed package
# loads its own copy of the library and talks to the demo server, from outside the
# source tree. Without cargo the install fails, saying that it needs Rust.
#
# Usage (from the repository root, as `make test-python-sdist` runs it):
#   tests/bindings/sdist_test.sh build/python/dist/libmcpc-VERSION.tar.gz
# Environment: PYTHON, SETUPTOOLS_PIN (the build backend, installed into the venv: pip
# then builds without fetching it); cargo honours CARGO_TARGET_DIR (make points it at
# target/, where `make lib` built, so only mcpc itself is compiled again).
# Ends with "N passed, N failed".
set -u
SDIST=${1:?usage: sdist_test.sh SDIST}
PYTHON=${PYTHON:-python3}
SETUPTOOLS_PIN=${SETUPTOOLS_PIN:?}
REPO=$PWD
VERSION=$(awk -F'"' '/^\[/ { p = ($0 == "[package]") } p && /^version *=/ { print $2; exit }' Cargo.toml)
passed=0
failed=0

WORK=$(mktemp -d /tmp/mcpc-sdist-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() {
    echo "FAIL $1"
    failed=$((failed + 1))
    if [ -s "$WORK/last.log" ]; then sed 's/^/    /' "$WORK/last.log" | tail -25; fi
}
check() {  # NAME COMMAND...: ok when the command (output to last.log) exits 0
    local name=$1
    shift
    if "$@" >"$WORK/last.log" 2>&1; then ok "$name"; else fail "$name"; fi
}

base=libmcpc-$VERSION
check "the sdist is $base.tar.gz" test "$(basename "$SDIST")" = "$base.tar.gz"
tar -tzf "$SDIST" >"$WORK/files" 2>/dev/null
has_all() {
    local f
    for f in PKG-INFO pyproject.toml setup.py src/libmcpc/__init__.py src/libmcpc/py.typed \
        native/Cargo.toml native/Cargo.lock native/build.rs native/cbindgen.toml \
        native/tools/header_gen.rs native/src/lib.rs native/include/mcpc.h; do
        grep -qx "$base/$f" "$WORK/files" || { echo "missing: $f"; return 1; }
    done
    ! grep -E "^$base/native/target/|\.so$|\.pyc$" "$WORK/files"
}
check "it holds the Python package and the Rust sources, and no build output" has_all

venv=$WORK/venv
pip() { "$venv/bin/python" -m pip --disable-pip-version-check "$@"; }
check "a fresh venv with $SETUPTOOLS_PIN" sh -c "'$PYTHON' -m venv '$venv' && '$venv/bin/python' -m pip install -q --disable-pip-version-check '$SETUPTOOLS_PIN'"

no_cargo() {
    ! CARGO=/nonexistent/cargo pip install --no-deps --no-build-isolation "$SDIST" &&
        ! "$venv/bin/python" -c 'import libmcpc' 2>/dev/null
}
if no_cargo >"$WORK/last.log" 2>&1 && grep -q "building from source needs a Rust toolchain (Rust [0-9.]* or later)" "$WORK/last.log"; then
    ok "without cargo the install fails and says it needs a Rust toolchain"
else
    fail "without cargo the install fails and says it needs a Rust toolchain"
fi

start=$(date +%s)
check "pip install $base.tar.gz builds the library with cargo" pip install --no-deps --no-build-isolation "$SDIST"
echo "    (took $(($(date +%s) - start)) s)"

# From outside the source tree, with no MCPC_LIBRARY: the package's own copy is loaded.
use() {
    (cd "$WORK" && env -u MCPC_LIBRARY "$venv/bin/python" - "$VERSION" "$REPO/demo/server.py" "$PYTHON") <<'PY'
import sys
from pathlib import Path

import libmcpc

version, demo, python = sys.argv[1:]
assert libmcpc.version() == version == libmcpc.__version__, (libmcpc.version(), version)
assert Path(libmcpc.library_path).parent == Path(libmcpc.__file__).parent, libmcpc.library_path
with libmcpc.Client.stdio([python, demo], timeout=20) as c:
    assert c.call("add", {"a": 2, "b": 3}).structured == {"sum": 5}
PY
}
check "import libmcpc: version() is $VERSION, the bundled library is loaded, a call works" use

echo "test-python-sdist: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
