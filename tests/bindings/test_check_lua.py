#!/usr/bin/env python3
"""The Lua checks of check_bindings.py fail on each kind of drift, injected here:
a stale mcpc_cdef.lua, a name the header lacks (in any file of the binding's tree), a
function neither called nor listed, one listed though called, and a header whose
change the committed cdef misses.

Run from the repository root (make check-bindings runs it): `python3 tests/bindings/test_check_lua.py`.
"""

from __future__ import annotations

import sys
import unittest
from pathlib import Path
from typing import Dict

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_bindings  # noqa: E402
from c_header import parse_header  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HEADER_TEXT = (REPO / "include" / "mcpc.h").read_text()
HEADER = parse_header(HEADER_TEXT)
CDEF = (REPO / "bindings" / "lua" / "mcpc_cdef.lua").read_text()
LUA = check_bindings.lua_sources(REPO / "bindings" / "lua")
README = (REPO / "bindings" / "lua" / "README.md").read_text()


def problems(header_text: str = HEADER_TEXT, cdef: str = CDEF, lua: Dict[str, str] = LUA, readme: str = README):
    header = parse_header(header_text)
    found, called = check_bindings.check_lua(header, header_text, cdef, lua)
    return found + check_bindings.coverage(header, called, check_bindings.not_bound(readme), "README")


class LuaChecks(unittest.TestCase):
    def test_the_tree_passes(self) -> None:
        self.assertEqual(problems(), [])

    def test_a_stale_cdef_is_reported(self) -> None:
        stale = CDEF.replace("int64_t timeout_ms;", "int32_t timeout_ms;", 1)
        self.assertNotEqual(stale, CDEF)
        self.assertTrue(any("mcpc_cdef.lua is not what gen_cdef.py makes" in p for p in problems(cdef=stale)))

    def test_a_header_change_makes_the_cdef_stale(self) -> None:
        changed = HEADER_TEXT.replace("void mcpc_op_free(mcpc_op_t *op);",
                                      "void mcpc_op_free(mcpc_op_t *op, int32_t how);", 1)
        self.assertNotEqual(changed, HEADER_TEXT)
        self.assertTrue(any("mcpc_cdef.lua" in p for p in problems(header_text=changed)))

    def test_every_file_of_the_tree_is_scanned(self) -> None:
        self.assertIn("mcpc.lua", LUA)
        self.assertIn("mcpc/client.lua", LUA)
        self.assertNotIn("mcpc_cdef.lua", LUA)

    def test_a_name_the_header_lacks_is_reported(self) -> None:
        drifted = dict(LUA)
        drifted["mcpc/client.lua"] += "\nlocal _ = C.mcpc_client_gone and K.MCPC_ERR_GONE\n"
        found = problems(lua=drifted)
        self.assertIn("mcpc/client.lua uses mcpc_client_gone, which mcpc.h does not declare", found)
        self.assertIn("mcpc/client.lua uses MCPC_ERR_GONE, which mcpc.h does not declare", found)

    def test_names_in_comments_and_strings_do_not_count(self) -> None:
        self.assertEqual(check_bindings.lua_names('-- mcpc_gone()\nlocal s = "mcpc_gone" .. [[mcpc_gone]]\n'), set())

    def test_an_unbound_unlisted_function_is_reported(self) -> None:
        unbound = {path: source.replace("C.mcpc_client_roots_changed(", "C.nothing(") for path, source in LUA.items()}
        self.assertNotEqual(unbound, LUA)
        self.assertIn('mcpc_client_roots_changed: neither bound nor listed in README\'s "Not bound"',
                      problems(lua=unbound))

    def test_a_listed_function_that_is_bound_is_reported(self) -> None:
        listed = README.replace("| `mcpc_tool_list_len` |", "| `mcpc_tool_list_len`, `mcpc_client_close` |")
        self.assertIn("mcpc_client_close: listed as not bound in README, but bound", problems(readme=listed))


if __name__ == "__main__":
    unittest.main(verbosity=1)
