#!/usr/bin/env python3
"""Checks that loadproof's modules depend on each other one way only.

Reads every `.rs` file of a crate, resolves each `crate::…`, `super::…` and `self::…` path
(in `use` trees and inline) to the file that defines the module it names, and then:

  * fails on a file-level import cycle (a file that, through its imports, reaches itself);
  * for `core/`, fails when a module imports one from a higher layer of LAYERS below.

Prints the offending edge or cycle with the line that makes it. Test code counts too: a test
module is part of its file. Usage: tools/layers.py [--graph] CRATE_SRC_DIR [LAYERS...]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# core's layer order, lowest first. A module may import its own layer and any lower one. One
# entry may hold several top-level modules (the same layer: neither may import the other).
CORE_LAYERS = [
    ["decimal", "stats"],
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

PATH_RE = re.compile(r"\b(crate|super|self)((?:\s*::\s*(?:\w+|\{))+)")


def strip_comments_and_strings(text: str) -> str:
    """Blanks comments, string and char literals so a path in prose is not an import.

    Newlines are kept so line numbers survive."""
    out = []
    i, n = 0, len(text)
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
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 260] or "") and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            hashes = m.group(1)
            end = text.find('"' + hashes, i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'", text[i:i + 12]):
            m = re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'", text[i:])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def inline_mods(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every inline `mod name { … }` block in comment-free text."""
    out = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += text[j] == "{"
            depth -= text[j] == "}"
            j += 1
        out.append((m.start(), j, m.group(1)))
    return out


def module_of(src: Path, file: Path) -> list[str]:
    """The module path of a file: core/src/trace/ingest.rs -> ["trace", "ingest"]."""
    rel = file.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return parts


def expand_use_tree(tree: str) -> list[str]:
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"] (whitespace removed)."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    depth, start = 0, None
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and start is not None:
                prefix, inner, rest = tree[:start], tree[start + 1:i], tree[i + 1:]
                parts, d, cur = [], 0, ""
                for c in inner:
                    if c == "," and d == 0:
                        parts.append(cur)
                        cur = ""
                        continue
                    d += c == "{"
                    d -= c == "}"
                    cur += c
                parts.append(cur)
                out = []
                for p in parts:
                    if not p:
                        continue
                    for e in expand_use_tree(p):
                        out.append(prefix + e + rest)
                return out
    return [tree]


class Crate:
    def __init__(self, src: Path):
        self.src = src
        self.files = {tuple(module_of(src, f)): f for f in sorted(src.rglob("*.rs"))}
        # Inline `mod x;` declarations with #[path] are not used in this project.

    def resolve(self, here: tuple[str, ...], segments: list[str]) -> tuple[str, ...] | None:
        """The longest module prefix of a path that is a file of this crate."""
        head, rest = segments[0], segments[1:]
        if head == "crate":
            base: tuple[str, ...] = ()
        elif head == "self":
            base = here
        else:  # super (possibly repeated)
            base = here[:-1]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        path = base
        for seg in rest:
            if seg in ("self", "*") or not re.fullmatch(r"\w+", seg):
                break
            if path + (seg,) not in self.files and not any(
                f[: len(path) + 1] == path + (seg,) for f in self.files
            ):
                break
            path = path + (seg,)
        return self.file_of(path)

    def file_of(self, path: tuple[str, ...]) -> tuple[str, ...] | None:
        """The file holding a module path (an inline `mod x { … }` lives in its parent's)."""
        while path not in self.files:
            if not path:
                return None
            path = path[:-1]
        return path

    def edges(self):
        """(from_module, to_module, line_number, line_text) for every import."""
        for file_mod, file in self.files.items():
            raw = file.read_text()
            text = strip_comments_and_strings(raw)
            lines = raw.splitlines()
            inline = inline_mods(text)

            def here_at(pos: int) -> tuple[str, ...]:
                return file_mod + tuple(n for (a, b, n) in inline if a <= pos < b)

            children = {f[len(file_mod)] for f in self.files if len(f) > len(file_mod) and f[: len(file_mod)] == file_mod}
            # `use` items, possibly multi-line and grouped. A `pub use` of a child is a facade
            # (the parent re-exports it), not a dependency of the parent on the child.
            for m in re.finditer(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", text):
                line = text.count("\n", 0, m.start()) + 1
                for path in expand_use_tree(m.group(2)):
                    segs = [s for s in path.split("::") if s]
                    if not segs:
                        continue
                    if segs[0] in children and here_at(m.start()) == file_mod:
                        if m.group(1):
                            continue
                        segs = ["self"] + segs
                    elif segs[0] not in ("crate", "super", "self"):
                        continue
                    target = self.resolve(here_at(m.start()), segs)
                    if target is not None and target != file_mod:
                        yield file_mod, target, line, lines[line - 1].strip()
            # Inline paths in expressions and types (`crate::x::f()`, `child::f()`).
            child_re = re.compile(r"(?<![\w:])(" + "|".join(sorted(children)) + r")(?=\s*::)") if children else None
            found = list(PATH_RE.finditer(text))
            if child_re:
                found += [cm for cm in child_re.finditer(text) if here_at(cm.start()) == file_mod]
            for m in found:
                if m.re is not PATH_RE:
                    line_start = text.rfind("\n", 0, m.start()) + 1
                    if re.search(r"\buse\b[^;]*$", text[: m.start()][-400:]) and not re.search(r";\s*$", text[line_start:m.start()]):
                        # inside a use tree: handled above
                        if re.search(r"\buse\b[^;]*$", text[max(0, m.start() - 400): m.start()]):
                            continue
                    if re.match(r"\s*mod\b", text[line_start:]):
                        continue
                    line = text.count("\n", 0, m.start()) + 1
                    target = self.file_of(file_mod + (m.group(1),))
                    if target is not None and target != file_mod:
                        yield file_mod, target, line, lines[line - 1].strip()
                    continue
                line_start = text.rfind("\n", 0, m.start()) + 1
                if re.match(r"\s*(pub(\([^)]*\))?\s+)?use\b", text[line_start:m.start()]):
                    continue
                if text[line_start:m.start()].rstrip().endswith(("{", ",")) and re.search(r"\buse\b[^;]*$", text[: m.start()]):
                    continue
                segs = [m.group(1)] + [s for s in re.split(r"\s*::\s*", m.group(2)) if s and s != "{"]
                target = self.resolve(here_at(m.start()), segs)
                if target is not None and target != file_mod:
                    line = text.count("\n", 0, m.start()) + 1
                    yield file_mod, target, line, lines[line - 1].strip()


def is_ancestor(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return len(a) < len(b) and b[: len(a)] == a


def file_graph(crate: Crate):
    """Edges between files. A module's use of its own parent (`super::X` from a child into
    its `mod.rs`) is an edge like any other; `mod.rs` declaring its children is not."""
    graph: dict[tuple[str, ...], dict[tuple[str, ...], tuple[int, str]]] = {m: {} for m in crate.files}
    for a, b, line, text in crate.edges():
        graph[a].setdefault(b, (line, text))
    return graph


def find_cycles(graph):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
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


def name(m: tuple[str, ...]) -> str:
    return "::".join(m) or "crate"


def main(argv: list[str]) -> int:
    show_graph = "--graph" in argv
    argv = [a for a in argv if a != "--graph"]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    src = Path(argv[0]).resolve()
    crate = Crate(src)
    graph = file_graph(crate)
    failures = 0
    if show_graph:
        for a in sorted(graph):
            for b, (line, text) in sorted(graph[a].items()):
                print(f"{name(a)} -> {name(b)}   ({crate.files[a].relative_to(src)}:{line})")
    for comp in find_cycles(graph):
        failures += 1
        print(f"import cycle in {src}: " + " <-> ".join(name(m) for m in comp), file=sys.stderr)
        members = set(comp)
        for a in comp:
            for b, (line, text) in sorted(graph[a].items()):
                if b in members:
                    print(f"    {crate.files[a].relative_to(src.parent)}:{line}: {name(a)} -> {name(b)}: {text}", file=sys.stderr)
    layers = CORE_LAYERS if src.parent.name == "core" else None
    if layers:
        rank = {top: i for i, group in enumerate(layers) for top in group}
        for a in sorted(graph):
            if not a:
                continue
            if a[0] not in rank:
                failures += 1
                print(f"{crate.files[a].relative_to(src.parent)}: module `{a[0]}` is in no layer of tools/layers.py", file=sys.stderr)
                continue
            for b, (line, text) in sorted(graph[a].items()):
                if not b or b[0] == a[0]:
                    continue
                if b[0] not in rank:
                    continue
                if rank[b[0]] >= rank[a[0]]:
                    failures += 1
                    print(
                        f"layer violation: {crate.files[a].relative_to(src.parent)}:{line}: `{a[0]}` "
                        f"(layer {rank[a[0]]}) imports `{name(b)}` (layer {rank[b[0]]}): {text}",
                        file=sys.stderr,
                    )
    if failures == 0:
        print(f"{src}: {len(graph)} files, no import cycle" + (", layers one-way" if layers else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
