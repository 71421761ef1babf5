#!/usr/bin/env python3
"""Checks that loadproof's source files depend on each other one way only.

    tools/layers.py [--graph] CRATE_SRC_DIR

Reads every `.rs` file under CRATE_SRC_DIR, resolves each path that names something of the
crate — `crate::…`, `super::…`, `self::…` and a child module's name, in `use` trees and inline
in code — to the file that *defines* it, and fails (exit 1) on:

  * a file-level import cycle: a file that, through what it imports, reaches itself;
  * for `core/src`, a module importing one from a higher layer of CORE_LAYERS below.

Rules of the graph, so the check measures the real dependencies:

  * Re-exports are transparent. `pub use` (any visibility) is a facade, not a dependency of the
    file that writes it: a path through a `mod.rs` that re-exports `X` from a child leads to the
    child that defines `X`.
  * Test code is not production code: `#[cfg(test)]` modules (inline or in their own file) may
    use anything in the crate, so they add no edges. Everything else does.

Prints each offending edge with its file, line and text. `--graph` prints every edge.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# core's layers, lowest first. A module may import its own top-level module and any lower
# layer; modules that share a layer may not import each other.
CORE_LAYERS = [
    ["decimal", "divisor", "stats", "signing"],
    ["trace"],
    ["regime"],
    ["report", "synth"],
    ["plan"],
    ["receipt"],
    ["formats"],
    ["audit"],
    ["claim"],
    ["playbook", "compare", "site"],
]

Module = tuple[str, ...]


def blank(match_text: str) -> str:
    return re.sub(r"[^\n]", " ", match_text)


def strip_comments_and_strings(text: str) -> str:
    """Blanks comments and string/char literals (newlines kept, so line numbers survive)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', text[i:i + 300])) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append(blank(text[i:end]))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i:j + 1]))
            i = j + 1
        elif c == "'" and (m := re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:i + 12])):
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_of(src: Path, file: Path) -> Module:
    """core/src/trace/ingest.rs -> ("trace", "ingest"); lib.rs and mod.rs name their folder."""
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return tuple(parts)


def split_top(inner: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for c in inner:
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += c == "{"
        depth -= c == "}"
        cur += c
    parts.append(cur)
    return [p for p in parts if p]


def expand_use_tree(tree: str) -> list[tuple[list[str], str]]:
    """`a::{b, c::{d as e}}` -> [(["a","b"], "b"), (["a","c","d"], "e")]: path and bound name."""
    tree = re.sub(r"\s+as\s+", "@", tree.strip())
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace < 0:
        path, _, alias = tree.partition("@")
        segs = [s for s in path.split("::") if s]
        return [(segs, alias or (segs[-1] if segs else ""))] if segs else []
    prefix = tree[:brace]
    inner = tree[brace + 1:tree.rfind("}")]
    out = []
    for part in split_top(inner):
        for segs, name in expand_use_tree(part):
            if segs == ["self"]:
                base = [s for s in prefix.split("::") if s]
                out.append((base, name if name != "self" else (base[-1] if base else "")))
            else:
                out.append(([s for s in prefix.split("::") if s] + segs, name))
    return out


class Source:
    """One file, comment- and string-free, with its inline modules located."""

    def __init__(self, module: Module, path: Path):
        self.module = module
        self.path = path
        self.raw = path.read_text()
        self.lines = self.raw.splitlines()
        self.text = strip_comments_and_strings(self.raw)
        # (start, end, name, is_test) of every inline `mod name { … }`.
        self.inline: list[tuple[int, int, str, bool]] = []
        for m in re.finditer(r"((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*\{", self.text):
            depth, j = 1, m.end()
            while j < len(self.text) and depth:
                depth += self.text[j] == "{"
                depth -= self.text[j] == "}"
                j += 1
            self.inline.append((m.start(), j, m.group(2), "cfg(test)" in m.group(1).replace(" ", "")))
        # Child modules declared `#[cfg(test)] mod name;` in this file.
        self.test_children = set(re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", self.text))

    def context(self, pos: int) -> tuple[Module, bool]:
        """The module path at `pos` (inline modules included) and whether it is test code."""
        chain = tuple(name for (a, b, name, _) in self.inline if a <= pos < b)
        is_test = any(t for (a, b, _, t) in self.inline if a <= pos < b)
        return self.module + chain, is_test

    def line_of(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1


class Crate:
    def __init__(self, src: Path):
        self.src = src
        self.sources = {module_of(src, f): Source(module_of(src, f), f) for f in sorted(src.rglob("*.rs"))}
        self.modules = set(self.sources)
        # Files that only tests compile.
        self.test_files: set[Module] = set()
        for mod, s in self.sources.items():
            for child in s.test_children:
                self.test_files |= {m for m in self.modules if m[: len(mod) + 1] == mod + (child,)}
        # name -> (context, path) of every re-export, per module (file-level and inline).
        self.reexports: dict[Module, dict[str, tuple[Module, list[str]]]] = {}
        for s in self.sources.values():
            for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]*);", s.text):
                ctx, _ = s.context(m.start())
                for segs, name in expand_use_tree(m.group(1)):
                    self.reexports.setdefault(ctx, {})[name] = (ctx, segs)

    def children(self, mod: Module) -> set[str]:
        return {m[len(mod)] for m in self.modules if len(m) > len(mod) and m[: len(mod)] == mod}

    def file_of(self, path: Module) -> Module | None:
        while path not in self.modules:
            if not path:
                return None
            path = path[:-1]
        return path

    def resolve(self, ctx: Module, segs: list[str], depth: int = 0) -> Module | None:
        """The file defining what `segs` names, seen from module `ctx`."""
        if not segs or depth > 16:
            return None
        head, rest = segs[0], list(segs[1:])
        if head == "crate":
            base: Module = ()
        elif head == "self":
            base = ctx
        elif head == "super":
            base = ctx[:-1]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif head in self.children(ctx):
            base, rest = ctx + (head,), rest
        else:
            return None  # another crate, a local item, a prelude name
        path = base
        while rest:
            seg = rest[0]
            if seg in ("*", "self") or not re.fullmatch(r"\w+", seg):
                break
            if path + (seg,) in self.modules or any(m[: len(path) + 1] == path + (seg,) for m in self.modules):
                path, rest = path + (seg,), rest[1:]
                continue
            # An item of `path`: defined there, or re-exported from elsewhere.
            exported = self.reexports.get(path, {}).get(seg)
            if exported is not None:
                ectx, esegs = exported
                target = self.resolve(ectx, esegs, depth + 1)
                if target is not None:
                    return target
            break
        return self.file_of(path)

    def edges(self):
        """(from_file, to_file, line, text) for every production import."""
        for mod, s in self.sources.items():
            if mod in self.test_files:
                continue
            seen_use: list[tuple[int, int]] = []
            for m in re.finditer(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", s.text):
                seen_use.append((m.start(), m.end()))
                ctx, is_test = s.context(m.start())
                if is_test or m.group(1):
                    continue
                for segs, _ in expand_use_tree(m.group(2)):
                    yield from self._edge(s, ctx, segs, m.start())
            inside_use = lambda pos: any(a <= pos < b for a, b in seen_use)
            # Inline paths: crate::/super::/self::, and a child module's name followed by `::`.
            for m in re.finditer(r"(?<![\w:])(\w+)((?:\s*::\s*\w+)+)", s.text):
                if inside_use(m.start()):
                    continue
                ctx, is_test = s.context(m.start())
                if is_test:
                    continue
                head = m.group(1)
                if head not in ("crate", "super", "self") and head not in self.children(ctx):
                    continue
                segs = [head] + [x for x in re.split(r"\s*::\s*", m.group(2)) if x]
                yield from self._edge(s, ctx, segs, m.start())
            # A name a file re-exports and also uses itself is a dependency after all.
            for (ctx, segs) in self.reexports.get(mod, {}).values():
                bound = segs[-1] if segs else ""
                for m in re.finditer(rf"(?<![\w:.]){re.escape(bound)}\b", s.text):
                    line_start = s.text.rfind("\n", 0, m.start()) + 1
                    declared = re.search(r"\b(mod|fn|struct|enum|trait|type|const|static)\s+$", s.text[line_start:m.start()])
                    if declared or inside_use(m.start()) or s.context(m.start())[1]:
                        continue
                    yield from self._edge(s, ctx, segs, m.start())
                    break

    def _edge(self, s: Source, ctx: Module, segs: list[str], pos: int):
        target = self.resolve(ctx, segs)
        if target is None or target == s.module or target in self.test_files:
            return
        line = s.line_of(pos)
        yield s.module, target, line, s.lines[line - 1].strip()


def find_cycles(graph: dict[Module, dict[Module, tuple[int, str]]]) -> list[list[Module]]:
    """Strongly connected components of more than one file (Tarjan)."""
    index: dict[Module, int] = {}
    low: dict[Module, int] = {}
    on, stack, out = set(), [], []

    def strong(v: Module):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            strong(v)
    return out


def name(m: Module) -> str:
    return "::".join(m) or "crate"


def main(argv: list[str]) -> int:
    show_graph = "--graph" in argv
    argv = [a for a in argv if a != "--graph"]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    src = Path(argv[0]).resolve()
    crate = Crate(src)
    shown = lambda m: crate.sources[m].path.relative_to(src.parent)
    graph: dict[Module, dict[Module, tuple[int, str]]] = {m: {} for m in crate.sources}
    for a, b, line, text in crate.edges():
        graph[a].setdefault(b, (line, text))
    if show_graph:
        for a in sorted(graph):
            for b, (line, text) in sorted(graph[a].items()):
                print(f"{name(a)} -> {name(b)}   ({shown(a)}:{line})")
    failures = 0
    for comp in find_cycles(graph):
        failures += 1
        print(f"import cycle in {src.parent.name}/{src.name}: " + " <-> ".join(name(m) for m in comp), file=sys.stderr)
        for a in comp:
            for b, (line, text) in sorted(graph[a].items()):
                if b in comp:
                    print(f"    {shown(a)}:{line}: {name(a)} -> {name(b)}: {text}", file=sys.stderr)
    layered = src.parent.name == "core"
    if layered:
        rank = {top: i for i, group in enumerate(CORE_LAYERS) for top in group}
        for a in sorted(graph):
            if not a:
                continue
            if a[0] not in rank:
                failures += 1
                print(f"{shown(a)}: module `{a[0]}` is in no layer of tools/layers.py", file=sys.stderr)
                continue
            for b, (line, text) in sorted(graph[a].items()):
                if b and b[0] != a[0] and b[0] in rank and rank[b[0]] >= rank[a[0]]:
                    failures += 1
                    print(
                        f"layer violation: {shown(a)}:{line}: `{a[0]}` (layer {rank[a[0]]}) imports "
                        f"`{name(b)}` (layer {rank[b[0]]}): {text}",
                        file=sys.stderr,
                    )
    if failures:
        return 1
    print(f"{src.parent.name}/{src.name}: {len(graph)} files, no import cycle" + (", layers one-way" if layered else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
