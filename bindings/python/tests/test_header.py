"""The ctypes declarations held to include/mcpc.h (tests/bindings/check_bindings.py),
and proof that the check fails on each kind of drift: the real table, one entry
changed, must be reported."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from ctypes import CFUNCTYPE, POINTER, Structure, c_bool, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t, c_void_p
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import REPO
from libmcpc import _decls

sys.path.insert(0, str(REPO / "tests" / "bindings"))
import check_bindings  # noqa: E402
from c_header import parse_header  # noqa: E402

HEADER = parse_header(REPO / "include" / "mcpc.h")


def check(functions: Dict[str, Any]) -> List[str]:
    return check_bindings.Checker(HEADER, _decls.STRUCTS).table(functions)


def test_the_table_matches_the_header() -> None:
    assert check(_decls.FUNCTIONS) == []


def test_the_source_tree_passes_every_check() -> None:
    problems, summary = check_bindings.run(REPO)
    assert problems == []
    assert summary.startswith("mcpc.h: %d functions; Python binds %d" % (len(HEADER.functions), len(_decls.FUNCTIONS)))


def _arg(name: str, index: int, new: Any) -> Dict[str, Any]:
    table = dict(_decls.FUNCTIONS)
    res, args = table[name]
    args = list(args)
    args[index] = new
    table[name] = (res, args)
    return table


def _ret(name: str, new: Any) -> Dict[str, Any]:
    table = dict(_decls.FUNCTIONS)
    table[name] = (new, table[name][1])
    return table


def _drop_last(name: str) -> Dict[str, Any]:
    table = dict(_decls.FUNCTIONS)
    res, args = table[name]
    table[name] = (res, list(args)[:-1])
    return table


def _renamed(old: str, new: str) -> Dict[str, Any]:
    table = dict(_decls.FUNCTIONS)
    table[new] = table.pop(old)
    return table


MUTATIONS = {
    "int64_t bound as int32": (_arg("mcpc_options_set_timeout_ms", 1, c_int32),
                               "mcpc_options_set_timeout_ms: argument 2 (timeout_ms): int64_t needs"),
    "size_t bound as int": (_arg("mcpc_options_set_max_pages", 1, c_int), "argument 2 (max_pages): size_t needs"),
    "uint32_t bound as int32_t": (_arg("mcpc_options_set_restart", 1, c_int32), "uint32_t needs c_uint"),
    "pointer bound as integer": (_arg("mcpc_client_close", 0, c_int64), "const mcpc_client_t * needs c_void_p or a POINTER, bound as c_long"),
    "char * bound as const char *": (_arg("mcpc_string_free", 0, c_char_p), "char * needs c_void_p or POINTER(c_char)"),
    "owned string out as c_char_p": (_arg("mcpc_client_server_info", 1, POINTER(c_char_p)),
                                     "argument 2 (out_json): char **: char * needs c_void_p or POINTER(c_char), bound as c_char_p"),
    "size_t * bound as int *": (_arg("mcpc_result_text", 1, POINTER(c_int)), "size_t needs"),
    "callback with a wrong argument": (_arg("mcpc_options_set_token_callback", 1,
                                            CFUNCTYPE(c_int32, c_void_p, c_char_p, c_char_p, c_size_t)),
                                       "mcpc_token_cb: argument 3 (buf): char * needs"),
    "callback missing an argument": (_arg("mcpc_options_set_stderr_callback", 1, CFUNCTYPE(None, c_void_p, c_void_p)),
                                     "mcpc_stderr_cb: 2 arguments bound, mcpc.h has 3"),
    "callback with a wrong return": (_arg("mcpc_transport_new", 0, CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)),
                                     "mcpc_transport_send_cb: return: int32_t needs c_int, bound as None"),
    "callback where data goes": (_arg("mcpc_options_set_log_callback", 2, _decls.FREE_CB),
                                 "argument 3 (userdata): void * needs c_void_p or a POINTER, bound as CFUNCTYPE"),
    "data where a callback goes": (_arg("mcpc_options_set_log_callback", 1, c_void_p),
                                   "mcpc_log_cb is a function pointer, bound as c_void_p"),
    "wrong return type": (_ret("mcpc_tool_list_len", c_int), "mcpc_tool_list_len: return: size_t needs"),
    "status bound as bool": (_ret("mcpc_client_close", c_bool), "return: mcpc_status_t needs c_int"),
    "owned return as c_char_p": (_ret("mcpc_oauth_new", c_char_p), "return: mcpc_oauth_t * needs c_void_p or a POINTER, bound as c_char_p"),
    "void bound as int": (_ret("mcpc_client_free", c_int), "return: void, bound as c_int"),
    "missing argument": (_drop_last("mcpc_client_call_tool"), "mcpc_client_call_tool: 4 arguments bound, mcpc.h has 5"),
    "a name the header lacks": (_renamed("mcpc_client_call_tool", "mcpc_client_call_tools"),
                                "mcpc_client_call_tools: bound, but mcpc.h declares no such function"),
}


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_a_mutated_declaration_is_reported(kind: str) -> None:
    table, expected = MUTATIONS[kind]
    problems = check(table)
    assert len(problems) == 1, problems
    assert expected in problems[0]


def _opts(fields: List[Any]) -> Any:
    return type("CallOpts", (Structure,), {"_fields_": fields})


def _struct(cls: Any) -> List[str]:
    return check_bindings.Checker(HEADER, {"mcpc_call_opts_t": cls}).struct("mcpc_call_opts_t", cls)


def test_the_mirrored_struct_matches_the_header() -> None:
    assert _struct(_decls.CallOpts) == []


@pytest.mark.parametrize("change,expected", [
    ({"timeout_ms": c_int32}, "field timeout_ms: int64_t needs"),
    ({"struct_size": c_size_t}, "field struct_size: uint32_t needs c_uint"),
    ({"on_progress": c_void_p}, "field on_progress: mcpc_progress_cb is a function pointer"),
    ({"on_progress": CFUNCTYPE(None, c_void_p, c_double, c_int, c_char_p)}, "mcpc_progress_cb: argument 3 (total)"),
    ({"reset_timeout_on_progress": c_int}, "field reset_timeout_on_progress: bool needs c_bool"),
])
def test_a_mutated_struct_field_is_reported(change: Dict[str, Any], expected: str) -> None:
    fields = [(n, change.get(n, t)) for n, t in _decls.CallOpts._fields_]
    problems = _struct(_opts(fields))
    assert len(problems) == 1 and expected in problems[0], problems


def test_missing_and_reordered_struct_fields_are_reported() -> None:
    fields = list(_decls.CallOpts._fields_)
    for bad in (fields[:-1], [fields[1], fields[0]] + fields[2:]):
        problems = _struct(_opts(bad))
        assert any(p.startswith("struct mcpc_call_opts_t: fields") for p in problems), problems


def test_an_unlisted_export_and_a_stale_list_are_reported() -> None:
    listed = check_bindings.not_bound((REPO / "bindings" / "python" / "README.md").read_text())
    bound = set(_decls.FUNCTIONS) - {"mcpc_client_notify"}
    problems = check_bindings.coverage(HEADER, bound, listed, "README")
    assert problems == ['mcpc_client_notify: neither bound nor listed in README\'s "Not bound"']
    problems = check_bindings.coverage(HEADER, set(_decls.FUNCTIONS), {**listed, "mcpc_client_close": "x"}, "README")
    assert problems == ["mcpc_client_close: listed as not bound in README, but bound"]


def test_cpp_names_the_header_lacks_are_reported() -> None:
    hpp = (REPO / "bindings" / "cpp" / "mcpc.hpp").read_text()
    assert check_bindings.check_cpp(HEADER, hpp)[0] == []
    drifted = hpp.replace("mcpc_client_call_tool(", "mcpc_client_call_tools(", 1)
    drifted = drifted.replace("MCPC_ERR_TIMEOUT", "MCPC_ERR_TIMED_OUT", 1)
    problems, wrapped = check_bindings.check_cpp(HEADER, drifted)
    assert problems == ["mcpc.hpp uses MCPC_ERR_TIMED_OUT, which mcpc.h does not declare",
                        "mcpc.hpp uses mcpc_client_call_tools, which mcpc.h does not declare"]
    assert 'mcpc_check_arguments: neither bound nor listed in README\'s "Not bound"' in \
        check_bindings.coverage(HEADER, wrapped, {}, "README")
    assert "mcpc_client_call_tool" not in wrapped
    # Names in comments and strings are not calls.
    assert check_bindings.cpp_names('// mcpc_gone()\nconst char* s = "mcpc_gone";') == set()


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_parser_reads_the_header_as_gcc_does(tmp_path: Path) -> None:
    """Each prototype as c_header.py reads it is gcc's (-aux-info), so the checks
    compare against what the compiler sees."""
    (tmp_path / "h.c").write_text('#include "mcpc.h"\n')
    subprocess.run(["gcc", "-fsyntax-only", "-I", str(REPO / "include"), "-aux-info", str(tmp_path / "h.aux"),
                    str(tmp_path / "h.c")], check=True)
    gcc = {}
    for line in (tmp_path / "h.aux").read_text().splitlines():
        m = re.search(r"mcpc\.h:\d+:NC \*/ extern (.*\b(mcpc_\w+) \(.*\));$", line)
        if m:
            gcc[m.group(2)] = m.group(1).replace("_Bool", "bool")
    assert gcc == {name: proto.declare(name) for name, proto in HEADER.functions.items()}
