//! The architecture's rules, checked on the source:
//!
//! 1. **Layers.** Every top-level module of `src/` has a layer ([`LAYERS`], the same table as
//!    DESIGN.md's "Layers"). A file may import from its own layer and the layers below it, never
//!    from a higher one; a top-level module missing from the table fails (a new module must be
//!    placed), and so does a table that disagrees with DESIGN.md.
//! 2. **No cycles.** No file depends, through `crate::` paths, on a file that depends back on it,
//!    and no top-level module on one that depends back on it (same-layer imports are allowed as
//!    long as they form no cycle of files or of modules).
//! 3. Every source file says what it owns in a `//!` module doc.
//! 4. No source file is longer than 700 lines.
//!
//! How it reads the code (text only, no compiler): every `crate::a::b::Name` and `super::…` path
//! (in `use` statements, grouped or not, and inline) outside `#[cfg(test)]` code — inline test
//! modules and the files a `#[cfg(test)] mod tests;` declares — is resolved to the file that
//! *defines* `Name`, following `pub use` re-exports (so `crate::scenario::Object` lands on
//! `vocab.rs`, not on the `scenario/mod.rs` façade). A file's use of its own ancestor `mod.rs` (a
//! module's façade, seen from inside the module) is not an edge. The crate root `lib.rs` (its
//! `mod` lines, `DEFAULT_SEED`) is layer 0; `main.rs` is the binary, a crate of its own that
//! writes no `crate::` path into the library. Limits: a path written through a local alias (`use
//! crate::x as y; y::z`) counts at the alias's `use`; macros that expand to paths are not seen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every top-level module of `src/` and its layer (DESIGN.md, "Layers"). Keep the two tables the
/// same: `the_layer_table_is_design_md_s` compares them.
const LAYERS: &[(&str, u8)] = &[
    // 0: leaves. They import nothing of the pipeline (at most another leaf); everything may
    // import them.
    ("durable", 0),
    ("conversation", 0),
    ("envelope", 0),
    ("exit", 0),
    ("governed", 0),
    ("lexicon", 0),
    ("provenance", 0),
    ("record", 0),
    ("runtime", 0),
    ("secrets", 0),
    ("shipped", 0),
    ("spec", 0),
    ("stats", 0),
    ("text", 0),
    ("tokens", 0),
    ("vocab", 0),
    // 1: the simulated environments, built from the scenario format.
    ("world", 1),
    ("tau", 1),
    // 2: scenarios as loaded: validation replays them in a world.
    ("scenario", 2),
    // 3: what the source agent observed, and the harness's restore point.
    ("state", 3),
    // 4: the checkpoint document and its rule checker (over a state).
    ("checkpoint", 4),
    // 5: what a compactor produces, and the plug-in protocol that carries it.
    ("handoff", 5),
    ("plugin", 5),
    // 6: building handoffs, and what is judged of a handoff by itself.
    ("strategy", 6),
    ("continuity", 6),
    ("upgrades", 6),
    ("carried", 6),
    // 7: continuing a handoff, and scoring the continuation.
    ("destination", 7),
    ("delivery", 7),
    ("score", 7),
    ("audit", 7),
    // 8: the run.
    ("runner", 8),
    // 9: real agent logs, run through the runner's cells.
    ("transcript", 9),
    // 10: a saved run folder, as its readers share it.
    ("results", 10),
    ("health", 10),
    // 11: the readers of saved records.
    ("report", 11),
    ("gate", 11),
    ("viewer", 11),
    // 12: the binary's error type, over every command's errors.
    ("error", 12),
    // 13: the command line.
    ("cli", 13),
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("src is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source of a file without its `#[cfg(test)]` items and without comments.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<i32> = None;
    let mut pending_cfg_test = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        if let Some(d) = skip_depth.as_mut() {
            *d += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            if *d <= 0 && line.contains('}') {
                skip_depth = None;
            }
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            pending_cfg_test = true;
            continue;
        }
        if pending_cfg_test {
            let opens = line.matches('{').count() as i32 - line.matches('}').count() as i32;
            pending_cfg_test = false;
            if opens > 0 {
                skip_depth = Some(opens);
            }
            // `#[cfg(test)] mod tests;` (a file) or a one-line item: skipped either way.
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Every `crate::…` path in the code, grouped imports expanded (`crate::a::{b, c::D}`).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    prefixed_paths(code, "crate::")
}

/// Every path after `prefix` (`crate::` or `super::`), grouped imports expanded.
fn prefixed_paths(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while let Some(pos) = find(&bytes, i, prefix) {
        // `$crate::` in macros and `foo_crate::` are not ours.
        let prev = if pos > 0 { bytes[pos - 1] } else { ' ' };
        i = pos + prefix.len();
        if prev.is_alphanumeric() || prev == '_' || prev == '$' {
            continue;
        }
        let (tree, end) = read_tree(&bytes, i);
        i = end;
        for p in expand(&tree) {
            out.push(p);
        }
    }
    out
}

fn find(s: &[char], from: usize, pat: &str) -> Option<usize> {
    let p: Vec<char> = pat.chars().collect();
    (from..s.len().saturating_sub(p.len() - 1)).find(|&k| s[k..k + p.len()] == p[..])
}

/// Reads a use-tree starting at `i`: identifiers, `::`, and balanced `{…}` groups.
fn read_tree(s: &[char], mut i: usize) -> (String, usize) {
    let mut out = String::new();
    let mut depth = 0;
    while i < s.len() {
        let c = s[i];
        if c == '{' {
            depth += 1;
        } else if c == '}' {
            if depth == 0 {
                break;
            }
            depth -= 1;
        } else if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':' || c == '*') {
            break;
        }
        out.push(c);
        i += 1;
    }
    (out, i)
}

/// `a::{b, c::{D, E as F}}` → [[a, b], [a, c, D], [a, c, E]].
fn expand(tree: &str) -> Vec<Vec<String>> {
    expand_named(tree).into_iter().map(|(p, _)| p).collect()
}

/// As [`expand`], each path with the name it is imported as (`E as F` → F; otherwise its last
/// segment).
fn expand_named(tree: &str) -> Vec<(Vec<String>, String)> {
    // One space between words, so `E as F` survives and `a :: b` does not.
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(open) = tree.find('{') else {
        let (path, alias) = match tree.split_once(" as ") {
            Some((p, a)) => (p, Some(a.trim().to_string())),
            None => (tree.as_str(), None),
        };
        let segs: Vec<String> = path
            .split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let name = alias.unwrap_or_else(|| segs.last().cloned().unwrap_or_default());
        return vec![(segs, name)];
    };
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut out = Vec::new();
    for part in parts.into_iter().filter(|p| !p.trim().is_empty()) {
        for (mut rest, name) in expand_named(part) {
            let is_self = rest.first().is_some_and(|s| s == "self");
            if is_self {
                rest.remove(0);
            }
            let mut p = prefix.clone();
            p.extend(rest);
            // `a::{self}` is imported as `a`.
            let name = if is_self && name == "self" {
                p.last().cloned().unwrap_or_default()
            } else {
                name
            };
            out.push((p, name));
        }
    }
    out
}

struct Crate {
    root: PathBuf,
    code: BTreeMap<PathBuf, String>,
}

impl Crate {
    /// The file of module `segs` (from the crate root), if it exists.
    fn module_file(&self, segs: &[String]) -> Option<PathBuf> {
        if segs.is_empty() {
            return Some(self.root.join("lib.rs"));
        }
        let mut dir = self.root.clone();
        for (k, s) in segs.iter().enumerate() {
            let file = dir.join(format!("{s}.rs"));
            let modrs = dir.join(s).join("mod.rs");
            let last = k + 1 == segs.len();
            if last {
                return [file, modrs]
                    .into_iter()
                    .find(|p| self.code.contains_key(p));
            }
            dir = dir.join(s);
        }
        None
    }

    /// The module path of a file (`src/a/b.rs` and `src/a/b/mod.rs` → [a, b]).
    fn module_of(&self, file: &Path) -> Vec<String> {
        let rel = file.strip_prefix(&self.root).unwrap_or(file);
        let mut segs: Vec<String> = rel
            .iter()
            .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if segs.last().is_some_and(|s| s == "mod" || s == "lib") {
            segs.pop();
        }
        segs
    }

    /// The longest prefix of `segs` that is a module: its file and the item after it.
    fn split<'s>(&self, segs: &'s [String]) -> Option<(PathBuf, Option<&'s String>)> {
        let mut k = segs.len();
        while k > 0 && self.module_file(&segs[..k]).is_none() {
            k -= 1;
        }
        Some((self.module_file(&segs[..k])?, segs.get(k)))
    }

    /// The file that defines the item `segs` names, following re-exports; the module's own
    /// file when the item is not found there (a path into a module counts as using it).
    fn resolve(&self, segs: &[String]) -> Option<PathBuf> {
        let (module, item) = self.split(segs)?;
        match item {
            None => Some(module),
            Some(i) if i == "*" => Some(module),
            Some(i) => Some(self.defining(&module, i, 0).unwrap_or(module)),
        }
    }

    /// The file that defines `item` of the module in `module`: the module itself, or where a
    /// `pub use` (named, aliased or glob) of it leads. `None` when neither knows it.
    fn defining(&self, module: &Path, item: &str, depth: usize) -> Option<PathBuf> {
        if depth > 8 {
            return None;
        }
        let code = self.code.get(module)?;
        let defines = [
            "fn", "struct", "enum", "trait", "type", "const", "static", "mod",
        ]
        .iter()
        .any(|kw| {
            [
                format!("{kw} {item}("),
                format!("{kw} {item} "),
                format!("{kw} {item}<"),
                format!("{kw} {item}:"),
                format!("{kw} {item};"),
            ]
            .iter()
            .any(|p| code.contains(p.as_str()))
        });
        if defines {
            return Some(module.to_path_buf());
        }
        // A re-export: `pub use PATH::item`, `pub use PATH::x as item` or `pub use PATH::*`
        // (relative, `self::`, `super::` or `crate::`).
        let here = self.module_of(module);
        for stmt in code.split("pub use ").skip(1) {
            let tree: String = stmt.split(';').next().unwrap_or("").to_string();
            for (p, name) in expand_named(&tree) {
                let glob = p.last().is_some_and(|l| l == "*");
                if !(glob || name == item) {
                    continue;
                }
                let mut abs: Vec<String> = match p.first().map(String::as_str) {
                    Some("crate") => p[1..].to_vec(),
                    Some("super") => {
                        let mut h = here.clone();
                        h.pop();
                        h.extend(p[1..].iter().cloned());
                        h
                    }
                    Some("self") => {
                        let mut h = here.clone();
                        h.extend(p[1..].iter().cloned());
                        h
                    }
                    _ => {
                        let mut h = here.clone();
                        h.extend(p.iter().cloned());
                        h
                    }
                };
                if glob {
                    abs.pop();
                    abs.push(item.to_string());
                }
                let Some((m, Some(it))) = self.split(&abs) else {
                    // The re-export names a module (`pub use x::y as item` of a file module).
                    if !glob && let Some((m, None)) = self.split(&abs) {
                        return Some(m);
                    }
                    continue;
                };
                if m == module && it == item {
                    continue;
                }
                if let Some(f) = self.defining(&m, it, depth + 1) {
                    return Some(f);
                }
            }
        }
        None
    }
}

/// One import of one file: the `crate::` (or `super::`) path as written, and the file that
/// defines what it names. Files are relative to `src/`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: PathBuf,
    to: PathBuf,
    path: String,
}

/// The files a `#[cfg(test)] mod NAME;` of some file declares (test code, not architecture).
fn test_only_files(files: &BTreeMap<PathBuf, String>) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for (file, text) in files {
        let dir = if file.ends_with("mod.rs") || file.ends_with("lib.rs") {
            file.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            file.with_extension("")
        };
        let mut lines = text.lines().map(str::trim);
        while let Some(l) = lines.next() {
            if l != "#[cfg(test)]" {
                continue;
            }
            let Some(next) = lines.by_ref().find(|l| !l.starts_with("#[")) else {
                break;
            };
            let next = next.strip_prefix("pub ").unwrap_or(next);
            if let Some(name) = next.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                out.insert(dir.join(format!("{}.rs", name.trim())));
                out.insert(dir.join(name.trim()).join("mod.rs"));
            }
        }
    }
    out
}

/// Every import edge between files of `src/`, outside test code.
fn graph() -> Vec<Edge> {
    let root = src_dir();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let texts: BTreeMap<PathBuf, String> = files
        .iter()
        .map(|f| {
            (
                f.clone(),
                std::fs::read_to_string(f).expect("source is UTF-8"),
            )
        })
        .collect();
    let tests = test_only_files(&texts);
    let krate = Crate {
        root: root.clone(),
        code: texts.iter().map(|(f, t)| (f.clone(), code_of(t))).collect(),
    };
    let rel = |p: &Path| p.strip_prefix(&root).unwrap_or(p).to_path_buf();
    let mut edges = BTreeSet::new();
    for (file, code) in &krate.code {
        if tests.contains(file) {
            continue;
        }
        let mine = krate.module_of(file);
        // `super::x` from a file is the sibling module `x` (or an item of the parent module).
        let parent: Vec<String> = mine
            .iter()
            .take(mine.len().saturating_sub(1))
            .cloned()
            .collect();
        let supers = prefixed_paths(code, "super::").into_iter().map(|p| {
            let shown = format!("super::{}", p.join("::"));
            let mut abs = parent.clone();
            abs.extend(p);
            (abs, shown)
        });
        let crates = crate_paths(code).into_iter().map(|p| {
            let shown = format!("crate::{}", p.join("::"));
            (p, shown)
        });
        for (p, shown) in crates.chain(supers) {
            let Some(target) = krate.resolve(&p) else {
                continue;
            };
            if &target == file {
                continue;
            }
            // A module's own façade (an ancestor mod.rs or lib.rs) is not a dependency.
            let tmod = krate.module_of(&target);
            let is_ancestor_facade = target.ends_with("mod.rs") || target.ends_with("lib.rs");
            if is_ancestor_facade && mine.starts_with(&tmod) {
                continue;
            }
            edges.insert(Edge {
                from: rel(file),
                to: rel(&target),
                path: shown,
            });
        }
    }
    edges.into_iter().collect()
}

/// The file graph of the edges (for [`cycles`]).
fn adjacency(edges: &[Edge]) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut out: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for e in edges {
        out.entry(e.from.clone()).or_default().insert(e.to.clone());
    }
    out
}

/// The top-level module a file (relative to `src/`) belongs to; `None` for the crate roots.
fn top_module(file: &Path) -> Option<String> {
    let first = file.iter().next()?.to_string_lossy().to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib" && name != "main").then_some(name)
}

/// A file's layer: its top-level module's, 0 for `lib.rs`; `None` for `main.rs` and for a module
/// the table does not place (reported by [`unplaced`]).
fn layer_of(file: &Path, layers: &[(&str, u8)]) -> Option<u8> {
    match top_module(file) {
        Some(m) => layers.iter().find(|(n, _)| *n == m).map(|(_, l)| *l),
        None => file.ends_with("lib.rs").then_some(0),
    }
}

/// Every edge from a file to a file of a higher layer, as a message naming both files, their
/// layers and the path written.
fn upward(edges: &[Edge], layers: &[(&str, u8)]) -> Vec<String> {
    let module = |f: &Path| top_module(f).unwrap_or_else(|| "crate root".into());
    edges
        .iter()
        .filter_map(|e| {
            let (from, to) = (layer_of(&e.from, layers)?, layer_of(&e.to, layers)?);
            (from < to).then(|| {
                format!(
                    "src/{} (layer {from}, {}) imports `{}` from src/{} (layer {to}, {})",
                    e.from.display(),
                    module(&e.from),
                    e.path,
                    e.to.display(),
                    module(&e.to)
                )
            })
        })
        .collect()
}

/// The top-level modules among `files` (relative to `src/`) that the table does not place.
fn unplaced(files: &[PathBuf], layers: &[(&str, u8)]) -> Vec<String> {
    let mods: BTreeSet<String> = files.iter().filter_map(|f| top_module(f)).collect();
    mods.into_iter()
        .filter(|m| !layers.iter().any(|(n, _)| n == m))
        .collect()
}

/// Strongly connected components with more than one file (Tarjan).
fn cycles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct T<'a> {
        e: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        next: usize,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a PathBuf) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        if let Some(ws) = t.e.get(v) {
            for w in ws {
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let lw = t.low[w];
                    let lv = t.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if t.on.contains(w) {
                    let iw = t.index[w];
                    let lv = t.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        e: edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// Each cycle as its edges (`a -> b via crate::…`), one line per cycle.
fn cycle_report(edges: &[Edge]) -> Vec<String> {
    cycles(&adjacency(edges))
        .iter()
        .map(|c| {
            let names: BTreeSet<&PathBuf> = c.iter().collect();
            edges
                .iter()
                .filter(|e| names.contains(&e.from) && names.contains(&e.to))
                .map(|e| {
                    format!(
                        "src/{} -> src/{} (`{}`)",
                        e.from.display(),
                        e.to.display(),
                        e.path
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .collect()
}

/// Each cycle among top-level modules (two siblings of one layer that import each other, say,
/// even through files that form no cycle), with one edge of the cycle per pair of modules.
fn module_cycle_report(edges: &[Edge]) -> Vec<String> {
    let module = |f: &Path| PathBuf::from(top_module(f).unwrap_or_else(|| "crate root".into()));
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    let mut example: BTreeMap<(PathBuf, PathBuf), &Edge> = BTreeMap::new();
    for e in edges {
        let (a, b) = (module(&e.from), module(&e.to));
        if a != b {
            graph.entry(a.clone()).or_default().insert(b.clone());
            example.entry((a, b)).or_insert(e);
        }
    }
    cycles(&graph)
        .iter()
        .map(|c| {
            let names: BTreeSet<&PathBuf> = c.iter().collect();
            let ties: Vec<String> = example
                .iter()
                .filter(|((a, b), _)| names.contains(a) && names.contains(b))
                .map(|((a, b), e)| {
                    format!(
                        "{} -> {} (src/{} imports `{}` from src/{})",
                        a.display(),
                        b.display(),
                        e.from.display(),
                        e.path,
                        e.to.display()
                    )
                })
                .collect();
            ties.join("; ")
        })
        .collect()
}

/// The layer table of DESIGN.md's "Layers" section: rows `| N | … | `a`, `b` |`, every module
/// in backticks in the last column.
fn design_layers() -> BTreeMap<String, u8> {
    let design = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("DESIGN.md"))
        .expect("DESIGN.md is readable");
    let mut out = BTreeMap::new();
    let section = design
        .split("\n## ")
        .find(|s| s.starts_with("Layers"))
        .expect("DESIGN.md has a `## Layers` section");
    for line in section.lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        let Some(Ok(layer)) = cells.first().map(|c| c.trim().parse::<u8>()) else {
            continue;
        };
        let last = cells.last().copied().unwrap_or("");
        for name in last.split('`').skip(1).step_by(2) {
            out.insert(name.to_string(), layer);
        }
    }
    out
}

fn src_files() -> Vec<PathBuf> {
    let root = src_dir();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap_or(f).to_path_buf())
        .collect()
}

/// Longer than this, a source file holds more than one responsibility: split it along them.
const MAX_LINES: usize = 700;

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long: Vec<String> = src_files()
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(root.join(f)).ok()?.lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}

#[test]
fn every_top_level_module_has_a_layer() {
    let missing = unplaced(&src_files(), LAYERS);
    assert!(
        missing.is_empty(),
        "top-level modules without a layer (place each in LAYERS here and in DESIGN.md's \"Layers\"): {missing:?}"
    );
    let mut seen = BTreeSet::new();
    let twice: Vec<&str> = LAYERS
        .iter()
        .filter(|(n, _)| !seen.insert(*n))
        .map(|(n, _)| *n)
        .collect();
    assert!(twice.is_empty(), "placed twice in LAYERS: {twice:?}");
}

#[test]
fn the_layer_table_is_design_md_s() {
    let here: BTreeMap<String, u8> = LAYERS.iter().map(|(n, l)| (n.to_string(), *l)).collect();
    let design = design_layers();
    let differ: Vec<String> = here
        .keys()
        .chain(design.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|m| here.get(*m) != design.get(*m))
        .map(|m| format!("{m}: here {:?}, DESIGN.md {:?}", here.get(m), design.get(m)))
        .collect();
    assert!(
        differ.is_empty(),
        "LAYERS and DESIGN.md's \"Layers\" table differ:\n{}",
        differ.join("\n")
    );
}

#[test]
fn no_file_imports_from_a_higher_layer() {
    let found = upward(&graph(), LAYERS);
    assert!(
        found.is_empty(),
        "imports from a higher layer (move the code down, or the importer up, and say why in DESIGN.md):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_file_depends_on_a_file_that_depends_back_on_it() {
    let found = cycle_report(&graph());
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn no_module_depends_on_a_module_that_depends_back_on_it() {
    let found = module_cycle_report(&graph());
    assert!(
        found.is_empty(),
        "top-level modules that import each other (move what both need into a module below them):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_reports_an_upward_edge_cycles_and_an_unplaced_module() {
    // A tiny crate in the shape the checker reads: `low` imports from `high`, and `a.rs` and
    // `b.rs` import each other within one layer.
    let edge = |from: &str, to: &str, path: &str| Edge {
        from: from.into(),
        to: to.into(),
        path: path.into(),
    };
    let layers: &[(&str, u8)] = &[("low", 0), ("high", 1), ("same", 1)];
    let edges = vec![
        edge("high/mod.rs", "low.rs", "crate::low::Thing"),
        edge("low.rs", "high/parts.rs", "crate::high::Part"),
        edge("same/a.rs", "same/b.rs", "super::b::B"),
        edge("same/b.rs", "same/a.rs", "super::a::A"),
        edge("lib.rs", "low.rs", "crate::low::Thing"),
    ];
    assert_eq!(
        upward(&edges, layers),
        vec![
            "src/low.rs (layer 0, low) imports `crate::high::Part` from src/high/parts.rs (layer 1, high)"
                .to_string()
        ]
    );
    assert_eq!(
        cycle_report(&edges),
        vec![
            "src/same/a.rs -> src/same/b.rs (`super::b::B`); src/same/b.rs -> src/same/a.rs (`super::a::A`)"
                .to_string()
        ]
    );
    // Two modules of one layer that import each other through files that form no cycle.
    let siblings = vec![
        edge("same/a.rs", "peer/x.rs", "crate::peer::X"),
        edge("peer/y.rs", "same/b.rs", "crate::same::b::B"),
    ];
    let layers2: &[(&str, u8)] = &[("same", 1), ("peer", 1)];
    assert!(upward(&siblings, layers2).is_empty());
    assert!(cycle_report(&siblings).is_empty());
    assert_eq!(
        module_cycle_report(&siblings),
        vec![
            "peer -> same (src/peer/y.rs imports `crate::same::b::B` from src/same/b.rs); same -> peer (src/same/a.rs imports `crate::peer::X` from src/peer/x.rs)"
                .to_string()
        ]
    );
    let files: Vec<PathBuf> = ["lib.rs", "main.rs", "low.rs", "high/mod.rs", "new/mod.rs"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert_eq!(unplaced(&files, layers), vec!["new".to_string()]);
    assert_eq!(layer_of(Path::new("lib.rs"), layers), Some(0));
    assert_eq!(layer_of(Path::new("main.rs"), layers), None);
}

#[test]
fn the_checker_expands_groups_and_resolves_re_exports() {
    assert_eq!(
        expand("a::{b, c::{D, E as F}}"),
        vec![
            vec!["a".to_string(), "b".into()],
            vec!["a".into(), "c".into(), "D".into()],
            vec!["a".into(), "c".into(), "E".into()]
        ]
    );
    assert_eq!(
        expand_named("a::{self, c::E as F}"),
        vec![
            (vec!["a".to_string()], "a".to_string()),
            (vec!["a".into(), "c".into(), "E".into()], "F".into())
        ]
    );
    let edges = graph();
    let targets = |from: &str| -> BTreeSet<PathBuf> {
        edges
            .iter()
            .filter(|e| e.from == Path::new(from))
            .map(|e| e.to.clone())
            .collect()
    };
    // `super::` paths count: validation uses the authoring checks through `super::lint`.
    let validate = targets("scenario/validate/mod.rs");
    assert!(
        validate.contains(Path::new("scenario/lint.rs")),
        "{validate:?}"
    );
    // `crate::spec::Scenario` is defined in spec/scenario.rs, re-exported by the spec façade.
    let world = targets("world/mod.rs");
    assert!(
        world.contains(Path::new("spec/scenario.rs")),
        "world/mod.rs should depend on spec/scenario.rs: {world:?}"
    );
    // Through two façades (`scenario` re-exports `spec`, which re-exports `vocab`): a path
    // written as `crate::scenario::Object` lands on the leaf that defines it.
    let cont = targets("destination/continuation.rs");
    assert!(cont.contains(Path::new("vocab.rs")), "{cont:?}");
    // Test files declared by `#[cfg(test)] mod tests;` are not architecture.
    assert!(targets("world/tests.rs").is_empty());
}

#[test]
fn every_module_says_what_it_owns() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let undocumented: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("main.rs") && !f.ends_with("tests.rs"))
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        undocumented.is_empty(),
        "files without a `//!` module doc: {undocumented:?}"
    );
}
