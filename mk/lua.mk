# Lua: the LuaJIT binding (bindings/lua) and the Neovim plugin (bindings/lua/nvim).
#
#   make test-lua    builds build/lua/libmcpc_lua.so (the binding's completion queue,
#                    bindings/lua/mcpc_lua.c) and runs bindings/lua/tests/test_*.lua under
#                    luajit on the debug library: clients over stdio and HTTP against the
#                    demo server and the HTTP fixture, a host of demo servers; then the
#                    first example of bindings/lua/README.md (about 3 s)
#
# luajit comes from the distribution (apt-get install luajit; .ci/run installs it).

LUAJIT   ?= luajit
LUA_SHIM := build/lua/libmcpc_lua.so
LUA_ENV  := MCPC_LIBRARY=$(CURDIR)/$(DEBUG)/libmcpc.so MCPC_LUA_SHIM=$(CURDIR)/$(LUA_SHIM) \
            MCPC_PYTHON=$(PYTHON) MCPC_REPO=$(CURDIR)

.PHONY: test-lua

$(LUA_SHIM): bindings/lua/mcpc_lua.c include/mcpc.h
	@mkdir -p build/lua
	$(CC) -std=c11 $(CWARN) -O2 -shared -fPIC -pthread -Iinclude $< -o $@

# Each run has a time limit, so a lost completion fails the test instead of hanging it.
test-lua: check-bindings lib-debug $(LUA_SHIM)
	$(LUA_ENV) timeout 60 $(LUAJIT) bindings/lua/tests/test_client.lua
	$(LUA_ENV) timeout 60 $(LUAJIT) bindings/lua/tests/test_host.lua
	awk '/^```lua/ { n++; if (n == 1) { f = 1; next } } /^```/ { f = 0 } f' bindings/lua/README.md \
	    >build/lua/readme_example.lua
	$(LUA_ENV) timeout 60 $(LUAJIT) build/lua/readme_example.lua >build/lua/readme_example.out
	grep -q '^{"sum":5}$$' build/lua/readme_example.out && grep -q '^MCPC_ERR_TOOL	no luck$$' build/lua/readme_example.out \
	    && grep -q '^hi$$' build/lua/readme_example.out || { cat build/lua/readme_example.out; exit 1; }

EXTRA_TESTS += test-lua
