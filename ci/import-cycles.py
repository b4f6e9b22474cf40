#!/usr/bin/env python3
"""Import circles between the files of each crate of the workspace.

Usage: ci/import-cycles.py [--root DIR] [--crate NAME]... [--edges] [--self-test]

For every crate (the members of the root Cargo.toml, plus any directory with a Cargo.toml and a
src/ folder), each crate root (src/lib.rs, src/main.rs, src/bin/*.rs) is walked through its
`mod` declarations, which maps every .rs file under src/ to its module path. An edge A -> B is
recorded when file A names an item or module that file B defines:

* `crate::x::y` / `$crate::x::y` / `super::x` / `self::x` paths, and paths starting with a child
  module or a name the file imported with `use`;
* every path of a `use` tree (`use crate::{a::b, c::{self, D}}`);
* a `crate::name!` macro call, to the file that defines the exported macro.

A path is resolved to the file that defines its last item: through the modules it names and
through the `use` re-exports on the way (a glob re-export `pub use x::*` leads to every module
it globs that defines the name, e.g. every backend of a shim). A parent's `mod child;` is not
an edge, nor is a parent's re-export of its own descendants (`pub use child::X`: a facade);
comments, doc comments and strings are ignored. Any cycle of files is reported, as a chain of
files with the reference behind each step, and the exit status is 1.

--edges prints every edge; --self-test builds two tiny crates in a temporary directory, one with
a circle and one without (but with a facade, a test module and paths in comments and strings),
and checks that only the first is flagged.
"""

import os
import re
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------------------------------------
# Lexing: comments, strings and char literals blanked out (newlines kept, so lines still count).


def strip_code(text):
    out = []
    i, n = 0, len(text)

    def blank(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
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
        elif (c in "rb" and not (i and (text[i - 1].isalnum() or text[i - 1] == "_"))
              and re.match(r'(?:br|rb|r)(#*)"', text[i:i + 260])):
            m = re.match(r'(?:br|rb|r)(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + m.end())
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + blank(text[i + 2:end]))
            i = end
        elif c == '"' or (c == "b" and text.startswith('b"', i)
                          and not (i and (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + blank(text[i + 2:j + 1]))
            i = j + 1
        elif c == "'":
            if text.startswith("'\\", i):
                j = text.find("'", i + 2)
                if text.startswith("'\\''", i):
                    j = i + 3
                j = n - 1 if j < 0 else j
                out.append("' '" + blank(text[i + 3:j + 1]))
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                out.append("' '")
                i += 3
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


# ---------------------------------------------------------------------------------------------
# One source file: its inline modules, `mod` declarations, `use` items, paths and definitions.

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


class Source:
    def __init__(self, path):
        self.path = path
        raw = open(path, encoding="utf-8").read()
        self.code = strip_code(raw)
        # `#[path = "..."] mod name;` (read before the strings are blanked).
        self.path_attrs = {}
        for m in re.finditer(r'#\[\s*path\s*=\s*"([^"]+)"\s*\]\s*(?:#\[[^\]]*\]\s*)*'
                             r'(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(' + IDENT + r')\s*;', raw):
            self.path_attrs[m.group(2)] = m.group(1)
        self._inline_modules()
        self._items()

    def _inline_modules(self):
        """Spans of inline `mod name { ... }` blocks, as (start, end, name)."""
        self.inline = []
        code = self.code
        opens = {}
        for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{", code):
            opens[m.end() - 1] = m.group(1)
        stack = []  # (name or None, start)
        for i, c in enumerate(code):
            if c == "{":
                stack.append((opens.get(i), i))
            elif c == "}" and stack:
                name, start = stack.pop()
                if name is not None:
                    self.inline.append((start, i, name))

    def scope_at(self, pos):
        """The inline-module path (tuple of names) at a position, outermost first."""
        spans = [s for s in self.inline if s[0] < pos < s[1]]
        spans.sort()
        return tuple(s[2] for s in spans)

    def _items(self):
        code = self.code
        self.mods = []  # (scope, name)
        for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*;", code):
            self.mods.append((self.scope_at(m.start()), m.group(1)))
        self.uses = []  # dict(scope, pub, segs, glob, alias, line, text)
        self.use_spans = []
        for m in re.finditer(r"(?:\b(pub)\s*(?:\([^)]*\))?\s*)?\buse\b", code):
            # statement position only: after `;`, `{`, `}`, `]` or the start
            before = code[:m.start()].rstrip()
            if before and before[-1] not in ";{}]":
                continue
            end = code.find(";", m.end())
            if end < 0:
                continue
            body = code[m.end():end]
            self.use_spans.append((m.start(), end))
            scope = self.scope_at(m.start())
            line = line_of(code, m.start())
            text = " ".join(code[m.start():end + 1].split())
            for segs, glob, alias in parse_use_tree(body):
                self.uses.append(dict(scope=scope, pub=bool(m.group(1)), segs=segs, glob=glob,
                                      alias=alias, line=line, text=text))
        # Paths outside `use` items.
        masked = list(code)
        for s, e in self.use_spans:
            for k in range(s, e + 1):
                if masked[k] != "\n":
                    masked[k] = " "
        masked = "".join(masked)
        self.paths = []  # (scope, segs, is_macro, line, text)
        for m in re.finditer(r"(?<![\w:.$])(\$crate|" + IDENT + r")((?:\s*::\s*" + IDENT
                             + r")+)(\s*!)?", masked):
            segs = [m.group(1)] + re.findall(IDENT, m.group(2))
            self.paths.append((self.scope_at(m.start()), segs, bool(m.group(3)),
                               line_of(code, m.start()), " ".join(m.group(0).split())))
        # Macro calls by bare name (`mutant!`) are not edges: only `crate::name!` paths are.
        self.defs, self.pub_defs = set(), set()
        for m in re.finditer(r"(\bpub\s*(?:\([^)]*\))?\s*)?(?:\b(?:unsafe|const|async|extern)\s+)*"
                             r"\b(?:fn|struct|enum|union|trait|type|const|static|mod)\s+("
                             + IDENT + r")", code):
            self.defs.add(m.group(2))
            if m.group(1):
                self.pub_defs.add(m.group(2))
        self.macros = set()
        for m in re.finditer(r"macro_rules!\s*(" + IDENT + r")", code):
            self.macros.add(m.group(1))


def tokenize_use(body):
    return re.findall(r"\$crate|" + IDENT + r"|::|\{|\}|,|\*", body)


def parse_use_tree(body):
    """Expands a use tree into (segments, is_glob, alias) leaves."""
    toks = tokenize_use(body)
    pos = 0
    out = []

    def tree(prefix):
        nonlocal pos
        segs = list(prefix)
        while pos < len(toks):
            t = toks[pos]
            if t == "::":
                pos += 1
            elif t == "{":
                pos += 1
                while pos < len(toks) and toks[pos] != "}":
                    if toks[pos] == ",":
                        pos += 1
                        continue
                    tree(segs)
                pos += 1
                return
            elif t == "*":
                pos += 1
                out.append((segs, True, None))
                return
            elif t in (",", "}"):
                break
            elif t == "as":
                pos += 1
                alias = toks[pos] if pos < len(toks) else None
                pos += 1
                out.append((segs, False, alias))
                return
            else:
                if t == "self" and segs and len(segs) == len(prefix):
                    pos += 1  # `{self, ...}`: the prefix itself
                    continue
                segs = segs + [t]
                pos += 1
        if segs:
            out.append((segs, False, None))

    while pos < len(toks):
        if toks[pos] == ",":
            pos += 1
            continue
        tree([])
    return out


# ---------------------------------------------------------------------------------------------
# A crate root's module tree and its file graph.


class Tree:
    def __init__(self, root_file, src_dir):
        self.src_dir = src_dir
        self.modules = {}  # module path (tuple) -> (file, inline scope in that file)
        self.file_mod = {}  # file -> module path of the file
        self.sources = {}
        self.walk(root_file, (), True)
        self.macro_file = {}
        for f, s in self.sources.items():
            for name in s.macros:
                self.macro_file.setdefault(name, f)

    def walk(self, file, modpath, dir_owner):
        if file in self.sources or not os.path.isfile(file):
            return
        src = Source(file)
        self.sources[file] = src
        self.file_mod[file] = modpath
        self.modules[modpath] = (file, ())
        for start, end, name in src.inline:
            scope = src.scope_at(start) + (name,)
            self.modules[modpath + scope] = (file, scope)
        base = os.path.dirname(file)
        if not dir_owner:
            base = os.path.join(base, os.path.splitext(os.path.basename(file))[0])
        for scope, name in src.mods:
            d = os.path.join(base, *scope)
            if name in src.path_attrs and not scope:
                child = os.path.normpath(os.path.join(os.path.dirname(file),
                                                      src.path_attrs[name]))
                owner = True
            elif name in src.path_attrs:
                child = os.path.normpath(os.path.join(d, src.path_attrs[name]))
                owner = True
            elif os.path.isfile(os.path.join(d, name + ".rs")):
                child, owner = os.path.join(d, name + ".rs"), False
            else:
                child, owner = os.path.join(d, name, "mod.rs"), True
            self.walk(child, modpath + scope + (name,), owner)

    # -- name resolution --------------------------------------------------------------------

    def uses_in(self, modpath):
        file, scope = self.modules[modpath]
        return [u for u in self.sources[file].uses if u["scope"] == scope]

    def local_names(self, modpath):
        """name -> absolute path of the `use` imports and child modules of a module."""
        names = {}
        for u in self.uses_in(modpath):
            if u["glob"] or not u["segs"]:
                continue
            name = u["alias"] or u["segs"][-1]
            if name == "_":
                continue
            names[name] = (u["segs"], modpath)
        return names

    def absolute(self, segs, modpath, seen=None):
        """The absolute module path of a path written in module `modpath`, or None (extern)."""
        if not segs:
            return None
        first, rest = segs[0], list(segs[1:])
        if first in ("crate", "$crate"):
            return list(rest)
        if first == "self":
            return list(modpath) + rest
        if first == "super":
            m = list(modpath)
            while segs and segs[0] == "super":
                if not m:
                    return None
                m.pop()
                segs = segs[1:]
            return m + list(segs)
        if tuple(modpath) + (first,) in self.modules:
            return list(modpath) + [first] + rest
        names = self.local_names(tuple(modpath))
        if first in names:
            seen = seen or set()
            key = (tuple(modpath), first)
            if key in seen:
                return None
            seen.add(key)
            target, where = names[first]
            base = self.absolute(target, where, seen)
            return None if base is None else base + rest
        return None

    def resolve(self, abspath, seen=None):
        """The files that define what an absolute path names."""
        seen = seen if seen is not None else set()
        cur = ()
        for i, seg in enumerate(abspath):
            if cur + (seg,) in self.modules:
                cur = cur + (seg,)
                continue
            rest = list(abspath[i + 1:])
            files = set()
            for kind, what in self.lookup(cur, seg, seen, False):
                files |= {what} if kind == "file" else self.resolve(what + rest, seen)
            return files or {self.modules[cur][0]}
        return {self.modules[cur][0]}

    def lookup(self, modpath, name, seen, public_only):
        """Where module `modpath` gets `name` from: ("file", f) where it is defined (or taken
        from another crate), ("path", absolute path) where it is imported from. With
        `public_only`, only what a glob from outside the module sees (its `pub` items)."""
        key = (modpath, name, public_only)
        if key in seen:
            return []
        seen.add(key)
        file, scope = self.modules[modpath]
        src = self.sources[file]
        out = []
        for u in self.uses_in(modpath):
            if u["glob"] or (public_only and not u["pub"]):
                continue
            if (u["alias"] or (u["segs"][-1] if u["segs"] else None)) == name:
                a = self.absolute(u["segs"], modpath)
                out.append(("file", file) if a is None else ("path", a))
        if out:
            return out
        if name in (src.pub_defs if public_only else src.defs):
            return [("file", file)]
        for u in self.uses_in(modpath):
            if not u["glob"] or (public_only and not u["pub"]):
                continue
            a = self.absolute(u["segs"], modpath)
            if a is None or tuple(a) not in self.modules:
                continue
            # a glob from a descendant sees the target's private items too
            inner = tuple(modpath)[:len(a)] == tuple(a)
            out += self.lookup(tuple(a), name, seen, not inner)
        return out

    # -- edges ------------------------------------------------------------------------------

    def edges(self):
        """{(from_file, to_file): first reference (line, text)}"""
        out = {}
        for file, src in self.sources.items():
            fmod = self.file_mod[file]

            def add(targets, line, text):
                for t in targets:
                    if t != file:
                        out.setdefault((file, t), (line, text))

            for u in src.uses:
                modpath = fmod + u["scope"]
                a = self.absolute(u["segs"], modpath)
                if a is None:
                    continue
                targets = self.resolve(a) if u["segs"] else set()
                if u["pub"] and all(self.file_mod.get(t, ())[:len(fmod)] == fmod
                                    and len(self.file_mod.get(t, ())) > len(fmod)
                                    for t in targets):
                    continue  # a facade: re-exports of the file's own descendants
                add(targets, u["line"], u["text"])
            for scope, segs, is_macro, line, text in src.paths:
                modpath = fmod + scope
                if is_macro and segs[0] in ("crate", "$crate") and len(segs) == 2:
                    t = self.macro_file.get(segs[1])
                    if t:
                        add({t}, line, text)
                    continue
                a = self.absolute(segs, modpath)
                if a is None:
                    continue
                add(self.resolve(a), line, text)
        return out


def cycles(nodes, edges):
    """Strongly connected components with more than one file, each as a list of chains."""
    graph = {n: sorted({b for (a, b) in edges if a == n}) for n in nodes}
    index, low, on, stack, sccs = {}, {}, set(), [], []
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
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    result = []
    for comp in sccs:
        members = set(comp)
        chains, covered = [], set()
        for start in comp:
            if start in covered:
                continue
            # shortest cycle through `start` inside the component (BFS)
            prev, frontier, found = {start: None}, [start], None
            while frontier and not found:
                nxt = []
                for u in frontier:
                    for w in graph[u]:
                        if w not in members:
                            continue
                        if w == start:
                            found = u
                            break
                        if w not in prev:
                            prev[w] = u
                            nxt.append(w)
                    if found:
                        break
                frontier = nxt
            path, u = [start], found
            while u is not None and u != start:
                path.append(u)
                u = prev[u]
            chain = [start] + list(reversed(path[1:])) + [start]
            covered |= set(chain)
            chains.append(chain)
        result.append(chains)
    return result


# ---------------------------------------------------------------------------------------------
# The workspace.


def crates(root):
    found = []
    manifest = os.path.join(root, "Cargo.toml")
    if os.path.isfile(manifest):
        text = open(manifest, encoding="utf-8").read()
        m = re.search(r"^\s*members\s*=\s*\[(.*?)\]", text, re.S | re.M)
        if m:
            found += re.findall(r'"([^"]+)"', m.group(1))
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if d not in ("target", ".git", "node_modules")
                       and not d.startswith(".") and rel.count(os.sep) < 2]
        if rel != "." and "Cargo.toml" in filenames and os.path.isdir(
                os.path.join(dirpath, "src")):
            found.append(rel)
    out = []
    for c in found:
        c = os.path.normpath(c)
        if c not in out and os.path.isdir(os.path.join(root, c, "src")):
            out.append(c)
    return out


def crate_roots(crate_dir):
    src = os.path.join(crate_dir, "src")
    roots = [os.path.join(src, f) for f in ("lib.rs", "main.rs")
             if os.path.isfile(os.path.join(src, f))]
    bindir = os.path.join(src, "bin")
    if os.path.isdir(bindir):
        for f in sorted(os.listdir(bindir)):
            p = os.path.join(bindir, f)
            if f.endswith(".rs"):
                roots.append(p)
            elif os.path.isfile(os.path.join(p, "main.rs")):
                roots.append(os.path.join(p, "main.rs"))
    return roots


def check(root, only=(), show_edges=False, out=sys.stdout):
    bad = 0
    for crate in crates(root):
        name = os.path.basename(crate)
        if only and name not in only and crate not in only:
            continue
        crate_dir = os.path.join(root, crate)
        nodes, all_edges, files = set(), {}, set()
        for r in crate_roots(crate_dir):
            tree = Tree(r, os.path.join(crate_dir, "src"))
            e = tree.edges()
            # one graph per crate root; the files of a crate root form their own tree
            key = os.path.relpath(r, root)
            for (a, b), ref in e.items():
                all_edges[((key, a), (key, b))] = ref
            nodes |= {(key, f) for f in tree.sources}
            files |= set(tree.sources)
        rel = lambda f: os.path.relpath(f[1], root)
        if show_edges:
            for (a, b), (line, text) in sorted(all_edges.items()):
                print(f"  edge {rel(a)} -> {rel(b)}   ({rel(a)}:{line} {text})", file=out)
        found = cycles(nodes, all_edges)
        if not found:
            print(f"{crate}: no import circle ({len(files)} files)", file=out)
            continue
        bad += 1
        print(f"{crate}: {len(found)} import circle(s)", file=out)
        for chains in found:
            members = sorted({rel(f) for chain in chains for f in chain})
            print(f"  circle of {len(members)} files: {', '.join(members)}", file=out)
            for chain in chains:
                print("    cycle: " + " -> ".join(rel(f) for f in chain), file=out)
                for a, b in zip(chain, chain[1:]):
                    line, text = all_edges[(a, b)]
                    print(f"        {rel(a)}:{line}: {text}", file=out)
    return bad


def self_test():
    files = {
        "Cargo.toml": '[workspace]\nmembers = ["circle", "layered"]\n',
        "circle/Cargo.toml": '[package]\nname = "circle"\n',
        "circle/src/lib.rs": "mod a;\nmod b;\npub use a::A;\n",
        "circle/src/a.rs": "use crate::{b::{self, B}};\npub struct A(pub B);\n"
                           "pub fn f() { b::g(); }\n",
        "circle/src/b.rs": "pub struct B;\npub fn g() { let _ = super::a::f; }\n",
        "layered/Cargo.toml": '[package]\nname = "layered"\n',
        # facade: the root re-exports its children, which use the root's own item R
        "layered/src/lib.rs": "mod low;\nmod high;\npub mod shim;\npub use high::H;\n"
                              "pub use low::{L, R as Root};\npub struct R;\n",
        "layered/src/low.rs": "pub struct L;\npub fn r() -> crate::R { crate::R }\n"
                              "// crate::high::H would be a circle\n"
                              "pub const S: &str = \"crate::high::H\";\n"
                              "#[cfg(test)]\nmod tests {\n    use super::*;\n"
                              "    #[test]\n    fn t() { let _ = L; }\n}\n",
        "layered/src/high.rs": "use crate::L;\nuse crate::shim::Word;\n"
                               "pub struct H(pub L, pub Word);\n",
        # a selector over two backends, and a helper that uses the selected one
        "layered/src/shim/mod.rs": "mod one;\nmod two;\nmod helper;\npub use self::one::*;\n"
                                   "pub use helper::twice;\n",
        "layered/src/shim/one.rs": "pub struct Word;\npub fn get() -> u32 { 1 }\n",
        "layered/src/shim/two.rs": "pub struct Other;\n",
        "layered/src/shim/helper.rs": "pub fn twice() -> u32 { super::get() * 2 }\n",
    }
    with tempfile.TemporaryDirectory() as d:
        for path, text in files.items():
            p = os.path.join(d, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "w").write(text)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", d],
                           capture_output=True, text=True)
        out = r.stdout
        ok = (r.returncode == 1
              and "circle: 1 import circle(s)" in out
              and re.search(r"cycle: circle/src/a\.rs -> circle/src/b\.rs -> circle/src/a\.rs",
                            out)
              and "layered: no import circle (7 files)" in out)
        r2 = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", d,
                             "--crate", "layered", "--edges"], capture_output=True, text=True)
        want = {("layered/src/high.rs", "layered/src/low.rs"),
                ("layered/src/high.rs", "layered/src/shim/one.rs"),
                ("layered/src/low.rs", "layered/src/lib.rs"),
                ("layered/src/shim/helper.rs", "layered/src/shim/one.rs")}
        got = set(re.findall(r"edge (\S+) -> (\S+)", r2.stdout))
        ok = ok and r2.returncode == 0 and got == want
        if not ok:
            print(out + r2.stdout + r.stderr + r2.stderr)
            print(f"self-test FAILED (edges {sorted(got)}, want {sorted(want)})")
            return 1
        print("self-test passed: the circle is flagged, the layered crate is not")
        return 0


def main(argv):
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    only, show_edges = [], False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--self-test":
            return self_test()
        if a == "--root":
            root = args.pop(0)
        elif a == "--crate":
            only.append(args.pop(0))
        elif a == "--edges":
            show_edges = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            print(f"unknown argument: {a}", file=sys.stderr)
            return 2
    return 1 if check(root, only, show_edges) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
