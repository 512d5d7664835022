#!/usr/bin/env python3
"""Holds the bindings to include/mcpc.h.

Python: every entry of libmcpc/_decls.py's FUNCTIONS table must be a function of the
header with the same number of arguments, and each argument and the return type
bound to the ctypes type the C type needs (callback types and the mirrored structs
compared the same way, recursively). C++: every mcpc_* and MCPC_* name mcpc.hpp uses
must be declared by the header. Lua: bindings/lua/mcpc_cdef.lua must equal a fresh
generation from the header (bindings/lua/gen_cdef.py), and every mcpc_* function and
MCPC_* constant the binding's files (mcpc.lua and mcpc/*.lua) name must be the
header's. All: every function of the header is bound, or listed in the binding
README's "Not bound" table, and nothing else is listed there.

Run it from the repository root: `python3 tests/bindings/check_bindings.py`. It needs
no library and no compiler; it exits 1 and names each difference.
"""

from __future__ import annotations

import ctypes
import importlib.util
import re
import sys
from ctypes import (
    POINTER,
    c_bool,
    c_char,
    c_char_p,
    c_double,
    c_float,
    c_int,
    c_int8,
    c_int16,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Set, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from c_header import CType, Header, Proto, parse_header  # noqa: E402

# ctypes merges types of one size and signedness (c_int32 is c_int), so identity
# compares exactly what the ABI sees.
SCALARS: Dict[str, Any] = {
    "bool": c_bool, "char": c_char, "double": c_double, "float": c_float, "int": c_int,
    "int8_t": c_int8, "uint8_t": c_uint8, "int16_t": c_int16, "uint16_t": c_uint16,
    "int32_t": c_int32, "uint32_t": c_uint32, "int64_t": c_int64, "uint64_t": c_uint64,
    "size_t": c_size_t,
}

# Where a `const char *` may also be c_void_p: text the binding reads with a length
# (a return, a callback's argument), or reaches through another pointer.
_RAW_TEXT_OK = ("ret", "cb_arg", "pointee", "field")


def _is_pointer(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, ctypes._Pointer)


def _is_funcptr(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, ctypes._CFuncPtr)


def ctypes_name(t: Any) -> str:
    if t is None:
        return "None"
    if _is_pointer(t):
        return "POINTER(%s)" % ctypes_name(t._type_)
    if _is_funcptr(t):
        return "CFUNCTYPE(%s)" % ", ".join(ctypes_name(x) for x in (t._restype_, *t._argtypes_))
    return getattr(t, "__name__", repr(t))


class Checker:
    """Compares ctypes declarations with a parsed header; each method returns the
    differences found, as sentences (none: they agree)."""

    def __init__(self, header: Header, structs: Mapping[str, Any]) -> None:
        self.header = header
        self.structs = structs

    def function(self, name: str, restype: Any, argtypes: Sequence[Any]) -> List[str]:
        proto = self.header.functions.get(name)
        if proto is None:
            return ["%s: bound, but mcpc.h declares no such function" % name]
        return ["%s: %s" % (name, p) for p in self.proto(proto, restype, argtypes, callback=False)]

    def proto(self, proto: Proto, restype: Any, argtypes: Sequence[Any], callback: bool) -> List[str]:
        out = []
        if len(argtypes) != len(proto.params):
            out.append("%d arguments bound, mcpc.h has %d: %s" % (len(argtypes), len(proto.params), proto))
        for i, ((t, pname), bound) in enumerate(zip(proto.params, argtypes), 1):
            out += ["argument %d (%s): %s" % (i, pname, p) for p in self.type(t, bound, "cb_arg" if callback else "arg")]
        out += ["return: %s" % p for p in self.type(proto.ret, restype, "cb_ret" if callback else "ret")]
        return out

    def type(self, t: CType, bound: Any, pos: str) -> List[str]:
        if t.ptrs:
            return self.pointer(t, bound, pos)
        if t.base == "void":
            ok = bound is None and pos in ("ret", "cb_ret")
            return [] if ok else ["void, bound as %s" % ctypes_name(bound)]
        if t.base in self.header.callbacks:
            if not _is_funcptr(bound):
                return ["%s is a function pointer, bound as %s" % (t, ctypes_name(bound))]
            cb = self.header.callbacks[t.base]
            return ["%s: %s" % (t.base, p) for p in self.proto(cb, bound._restype_, bound._argtypes_, callback=True)]
        if t.base in self.header.structs:
            want = self.structs.get(t.base)
            if want is None:
                return ["%s has no Python mirror (add it to STRUCTS)" % t]
        elif t.base in self.header.enums:
            want = c_int  # a C enum is int-sized
        elif t.base in SCALARS:
            want = SCALARS[t.base]
        else:
            return ["%s: a type this checker does not know" % t]
        return [] if bound is want else ["%s needs %s, bound as %s" % (t, ctypes_name(want), ctypes_name(bound))]

    def pointer(self, t: CType, bound: Any, pos: str) -> List[str]:
        inner = t.pointee()
        if inner.base == "char" and not inner.ptrs:
            # char * is owned or written to: c_char_p would lose the pointer or hand
            # the library an immutable copy.
            if inner.const:
                allowed = [c_char_p] + ([c_void_p] if pos in _RAW_TEXT_OK else [])
            else:
                allowed = [c_void_p, POINTER(c_char)]
            if bound in allowed:
                return []
            return ["%s needs %s, bound as %s" % (t, " or ".join(map(ctypes_name, allowed)), ctypes_name(bound))]
        if bound is c_void_p:
            return []  # any data pointer may travel untyped: same size, same passing
        if not _is_pointer(bound):
            return ["%s needs c_void_p or a POINTER, bound as %s" % (t, ctypes_name(bound))]
        if not inner.ptrs and (inner.base == "void" or inner.base in self.header.opaque):
            return ["%s points to %s: needs c_void_p, bound as %s" % (t, inner.base, ctypes_name(bound))]
        return ["%s: %s" % (t, p) for p in self.type(inner, bound._type_, "pointee")]

    def struct(self, name: str, cls: Any) -> List[str]:
        fields = self.header.structs.get(name)
        if fields is None:
            return ["struct %s: mirrored, but mcpc.h declares no such struct" % name]
        mine = list(getattr(cls, "_fields_", []))
        out = []
        if [n for n, *_ in mine] != [n for _, n in fields]:
            out.append("struct %s: fields %s, mcpc.h has %s" % (name, [n for n, *_ in mine], [n for _, n in fields]))
        for (t, fname), (_, bound, *_) in zip(fields, mine):
            out += ["struct %s, field %s: %s" % (name, fname, p) for p in self.type(t, bound, "field")]
        return out

    def table(self, functions: Mapping[str, Tuple[Any, Sequence[Any]]]) -> List[str]:
        out: List[str] = []
        for name, (restype, argtypes) in functions.items():
            out += self.function(name, restype, argtypes)
        for name, cls in self.structs.items():
            out += self.struct(name, cls)
        return out


def not_bound(readme: str) -> Dict[str, str]:
    """The README's "## Not bound" table: function name -> why (a row may name several)."""
    section = re.search(r"^## Not bound\n(.*?)(?=^## |\Z)", readme, flags=re.M | re.S)
    out: Dict[str, str] = {}
    for line in (section.group(1).splitlines() if section else []):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and len(cells) >= 2:
            for name in re.findall(r"`(mcpc_\w+)`", cells[0]):
                out[name] = cells[1]
    return out


def coverage(header: Header, bound: Iterable[str], listed: Mapping[str, str], readme: str) -> List[str]:
    """Every function bound or listed as not bound, and the list true."""
    bound, functions = set(bound), set(header.functions)
    out = ["%s: neither bound nor listed in %s's \"Not bound\"" % (n, readme) for n in sorted(functions - bound - set(listed))]
    out += ["%s: listed as not bound in %s, but bound" % (n, readme) for n in sorted(bound & set(listed))]
    out += ["%s: listed in %s, but not in mcpc.h" % (n, readme) for n in sorted(set(listed) - functions)]
    out += ["%s: listed in %s without a reason" % (n, readme) for n, why in sorted(listed.items()) if not why]
    return out


def cpp_names(hpp: str) -> Set[str]:
    """The mcpc_* and MCPC_* names a C++ header uses outside comments and strings,
    less the macros it defines itself."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", " ", hpp, flags=re.S)
    own = set(re.findall(r"^\s*#\s*define\s+(\w+)", code, flags=re.M))
    return set(re.findall(r"\b((?:mcpc|MCPC)_\w+)\b", code)) - own


def check_cpp(header: Header, hpp: str) -> Tuple[List[str], Set[str]]:
    """Names mcpc.hpp uses that mcpc.h lacks, and the header functions it calls."""
    used = cpp_names(hpp)
    problems = ["mcpc.hpp uses %s, which mcpc.h does not declare" % n for n in sorted(used - header.names())]
    return problems, used & set(header.functions)


def lua_names(source: str) -> Set[str]:
    """The mcpc_* and MCPC_* names Lua source uses outside comments and strings."""
    code = re.sub(r"--\[(=*)\[.*?\]\1\]|--[^\n]*|\[(=*)\[.*?\]\2\]|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'",
                  " ", source, flags=re.S)
    return set(re.findall(r"\b((?:mcpc|MCPC)_\w+)\b", code))


def lua_sources(lua_dir: Path) -> Dict[str, str]:
    """The binding's files, by path under bindings/lua: mcpc.lua and the module tree
    beside it (mcpc/). Not mcpc_cdef.lua, which declares every function, nor the
    tests, examples or plugin, which call through the binding."""
    files = [lua_dir / "mcpc.lua"] + sorted((lua_dir / "mcpc").rglob("*.lua"))
    return {f.relative_to(lua_dir).as_posix(): f.read_text() for f in files}


def check_lua(header: Header, header_text: str, cdef: str,
              lua: Mapping[str, str]) -> Tuple[List[str], Set[str]]:
    """A stale mcpc_cdef.lua and names the binding's files (path -> source) use that
    mcpc.h lacks; and the header functions they call."""
    gen = importlib.util.spec_from_file_location("gen_cdef", Path(__file__).resolve().parents[2] / "bindings" / "lua" / "gen_cdef.py")
    assert gen and gen.loader
    module = importlib.util.module_from_spec(gen)
    gen.loader.exec_module(module)
    problems = []
    if module.generate(header_text) != cdef:
        problems.append("bindings/lua/mcpc_cdef.lua is not what gen_cdef.py makes of mcpc.h: run python3 bindings/lua/gen_cdef.py")
    used: Set[str] = set()
    for path, source in lua.items():
        names = lua_names(source)
        problems += ["%s uses %s, which mcpc.h does not declare" % (path, n)
                     for n in sorted(names - header.names())]
        used |= names
    return problems, used & set(header.functions)


def load_decls(path: Path) -> ModuleType:
    """libmcpc/_decls.py by its path: it imports only ctypes, so no library is loaded."""
    spec = importlib.util.spec_from_file_location("libmcpc_decls", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(repo: Path) -> Tuple[List[str], str]:
    """All the checks on a source tree: (differences, a summary line)."""
    header = parse_header(repo / "include" / "mcpc.h")
    decls = load_decls(repo / "bindings" / "python" / "src" / "libmcpc" / "_decls.py")
    py_readme, cpp_readme = "bindings/python/README.md", "bindings/cpp/README.md"
    py_out = not_bound((repo / py_readme).read_text())
    cpp_out = not_bound((repo / cpp_readme).read_text())
    problems = Checker(header, decls.STRUCTS).table(decls.FUNCTIONS)
    problems += coverage(header, decls.FUNCTIONS, py_out, py_readme)
    cpp_problems, wrapped = check_cpp(header, (repo / "bindings" / "cpp" / "mcpc.hpp").read_text())
    problems += cpp_problems + coverage(header, wrapped, cpp_out, cpp_readme)
    lua_dir = repo / "bindings" / "lua"
    lua_readme = "bindings/lua/README.md"
    lua_out = not_bound((repo / lua_readme).read_text())
    lua_problems, lua_bound = check_lua(header, (repo / "include" / "mcpc.h").read_text(),
                                        (lua_dir / "mcpc_cdef.lua").read_text(), lua_sources(lua_dir))
    problems += lua_problems + coverage(header, lua_bound, lua_out, lua_readme)
    summary = "mcpc.h: %d functions; Python binds %d, leaves out %d; C++ wraps %d, leaves out %d; Lua binds %d, leaves out %d" % (
        len(header.functions), len(decls.FUNCTIONS), len(py_out), len(wrapped), len(cpp_out), len(lua_bound), len(lua_out))
    return problems, summary


def main(argv: List[str]) -> int:
    repo = Path(argv[1]) if len(argv) > 1 else Path.cwd()
    problems, summary = run(repo)
    for p in problems:
        print("binding differs from mcpc.h: " + p)
    print(summary + ("" if not problems else "; %d differences" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
