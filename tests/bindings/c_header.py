"""A reader of include/mcpc.h for the binding checks: the header's prototypes,
function-pointer typedefs, structs, enums and macros, as data.

It knows the shapes cbindgen writes and no others: a declaration of any other shape
is an error, so a new kind of declaration cannot slip past the checks unread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple, Union

__all__ = ["CType", "Proto", "Header", "parse_header", "parse_type"]


@dataclass(frozen=True)
class CType:
    """A C type: a base name with its const, then pointer levels from the innermost
    out, each True when that pointer is itself const (`const char *const *`:
    base "char", const, ptrs (True, False))."""

    base: str
    const: bool = False
    ptrs: Tuple[bool, ...] = ()

    def pointee(self) -> "CType":
        return CType(self.base, self.const, self.ptrs[:-1])

    def __str__(self) -> str:
        """As gcc -aux-info writes it: "const char *const *", "mcpc_client_t **"."""
        s = ("const " if self.const else "") + self.base
        if self.ptrs:
            s += " " + "".join("*const " if c else "*" for c in self.ptrs)
        return s.rstrip()


@dataclass(frozen=True)
class Proto:
    """A function or function-pointer type: return type and (type, name) parameters."""

    ret: CType
    params: Tuple[Tuple[CType, str], ...]

    def declare(self, name: str) -> str:
        """The prototype as gcc -aux-info writes it, without `extern` and `;`."""
        ret = str(self.ret)
        return "%s%s%s" % (ret, "" if ret.endswith("*") else " ", name) + str(self)[len(ret):]

    def __str__(self) -> str:
        return "%s (%s)" % (self.ret, ", ".join(str(t) for t, _ in self.params) or "void")


@dataclass
class Header:
    functions: Dict[str, Proto] = field(default_factory=dict)
    callbacks: Dict[str, Proto] = field(default_factory=dict)
    structs: Dict[str, List[Tuple[CType, str]]] = field(default_factory=dict)
    opaque: Set[str] = field(default_factory=set)
    enums: Dict[str, Dict[str, int]] = field(default_factory=dict)
    macros: Dict[str, str] = field(default_factory=dict)

    def names(self) -> Set[str]:
        """Every name the header declares (functions, types, constants, macros)."""
        out = set(self.functions) | set(self.callbacks) | set(self.structs) | self.opaque | set(self.macros)
        for name, values in self.enums.items():
            out.add(name)
            out.update(values)
        return out


_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_TOKEN = re.compile(r"\*|%s" % _IDENT)


def _tokens(text: str) -> List[str]:
    rest = _TOKEN.sub(" ", text).strip()
    if rest:
        raise ValueError("unexpected %r in %r" % (rest, text))
    return _TOKEN.findall(text)


def parse_type(text: str) -> CType:
    """A type without a declared name, such as "const char *const *"."""
    return _type_of(_tokens(text), text)


def _type_of(tokens: List[str], text: str) -> CType:
    words: List[str] = []
    const = False
    ptrs: List[bool] = []
    for tok in tokens:
        if tok == "*":
            ptrs.append(False)
        elif tok == "const":
            if ptrs:
                ptrs[-1] = True
            else:
                const = True
        elif ptrs:
            raise ValueError("a name after a pointer in %r" % text)
        else:
            words.append(tok)
    if not words:
        raise ValueError("no type in %r" % text)
    return CType(" ".join(words), const, tuple(ptrs))


def _declarator(text: str) -> Tuple[CType, str]:
    """"const char *name" -> (const char *, "name")."""
    tokens = _tokens(text)
    if len(tokens) < 2 or not re.fullmatch(_IDENT, tokens[-1]) or tokens[-1] == "const":
        raise ValueError("no name in %r" % text)
    return _type_of(tokens[:-1], text), tokens[-1]


def _params(text: str) -> Tuple[Tuple[CType, str], ...]:
    text = text.strip()
    if text == "void":
        return ()
    return tuple(_declarator(p) for p in text.split(","))


def _strip(source: str, macros: Dict[str, str]) -> str:
    """Comments out, preprocessor lines out (macros recorded), C++-only blocks out."""
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    source = re.sub(r"//[^\n]*", " ", source)
    out: List[str] = []
    skipping = 0
    for line in source.splitlines():
        s = line.strip()
        if s.startswith("#"):
            words = s[1:].split(None, 2)
            if words[:2] == ["ifdef", "__cplusplus"]:
                skipping += 1
            elif words[0] == "endif" and skipping:
                skipping -= 1
            elif words[0] == "define" and not skipping and len(words) > 1:
                macros[words[1]] = words[2] if len(words) > 2 else ""
            continue
        if not skipping:
            out.append(line)
    return "\n".join(out)


def _statements(text: str) -> List[str]:
    """Top-level declarations, split at the semicolons outside braces."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ";" and depth == 0:
            out.append(" ".join(text[start:i].split()))
            start = i + 1
    if text[start:].strip():
        raise ValueError("text after the last declaration: %r" % text[start:].strip()[:80])
    return [s for s in out if s]


_ENUM = re.compile(r"typedef enum \{(.*)\} (%s)" % _IDENT)
_STRUCT = re.compile(r"typedef struct \{(.*)\} (%s)" % _IDENT)
_OPAQUE = re.compile(r"typedef struct (%s) (%s)" % (_IDENT, _IDENT))
_FNPTR = re.compile(r"typedef (.+?)\(\*(%s)\)\((.*)\)" % _IDENT)
_FUNC = re.compile(r"(.+?[ *])(%s)\((.*)\)" % _IDENT)


def parse_header(source: Union[str, Path]) -> Header:
    """Reads a header's text (or the file at a Path)."""
    if isinstance(source, Path):
        source = source.read_text()
    h = Header()
    for stmt in _statements(_strip(source, h.macros)):
        m: Optional[re.Match] = _ENUM.fullmatch(stmt)
        if m:
            values: Dict[str, int] = {}
            for item in filter(None, (x.strip() for x in m.group(1).split(","))):
                name, _, value = (x.strip() for x in item.partition("="))
                values[name] = int(value, 0) if value else (max(values.values(), default=-1) + 1)
            h.enums[m.group(2)] = values
        elif _STRUCT.fullmatch(stmt):
            m = _STRUCT.fullmatch(stmt)
            assert m
            h.structs[m.group(2)] = [_declarator(f) for f in m.group(1).split(";") if f.strip()]
        elif _OPAQUE.fullmatch(stmt):
            m = _OPAQUE.fullmatch(stmt)
            assert m
            if m.group(1) != m.group(2):
                raise ValueError("a struct typedef'd under another name: %r" % stmt)
            h.opaque.add(m.group(2))
        elif _FNPTR.fullmatch(stmt):
            m = _FNPTR.fullmatch(stmt)
            assert m
            h.callbacks[m.group(2)] = Proto(parse_type(m.group(1)), _params(m.group(3)))
        elif _FUNC.fullmatch(stmt):
            m = _FUNC.fullmatch(stmt)
            assert m
            if m.group(2) in h.functions:
                raise ValueError("%s declared twice" % m.group(2))
            h.functions[m.group(2)] = Proto(parse_type(m.group(1)), _params(m.group(3)))
        else:
            raise ValueError("a declaration of unknown shape: %r" % stmt[:120])
    return h
