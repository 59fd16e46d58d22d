//! The architecture's one rule, checked on the source: data flows one way, so no file of `src/`
//! depends, through `crate::` paths, on a file that depends back on it.
//!
//! How it reads the code (text only, no compiler): every `crate::a::b::Name` and `super::…` path
//! (in `use` statements, grouped or not, and inline) outside `#[cfg(test)]` code is resolved to the file that
//! *defines* `Name`, following `pub use` re-exports (so `crate::scenario::Object` lands on
//! `scenario/types.rs`, not on the `scenario/mod.rs` façade). A file's use of its own ancestor
//! `mod.rs` (a module's façade, seen from inside the module) is not an edge. Then every cycle of
//! the resulting file graph is reported with its files. Limits: a path written through a local
//! alias (`use crate::x as y; y::z`) counts at the alias's `use`; macros that expand to paths are
//! not seen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// `a::{b, c::{D, E}}` → [[a, b], [a, c, D], [a, c, E]].
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        let segs: Vec<String> = tree
            .split("::")
            .filter(|s| !s.is_empty())
            .map(|s| s.split(" as ").next().unwrap_or(s).to_string())
            .collect();
        return vec![segs];
    };
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
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
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        for mut rest in expand(part) {
            if rest.first().is_some_and(|s| s == "self") {
                rest.remove(0);
            }
            let mut p = prefix.clone();
            p.extend(rest);
            out.push(p);
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

    /// The file that defines the item `segs` names, following re-exports.
    fn resolve(&self, segs: &[String], depth: usize) -> Option<PathBuf> {
        if depth > 8 {
            return None;
        }
        // The longest prefix that is a module.
        let mut k = segs.len();
        while k > 0 && self.module_file(&segs[..k]).is_none() {
            k -= 1;
        }
        let module = self.module_file(&segs[..k])?;
        let Some(item) = segs.get(k) else {
            return Some(module);
        };
        if item == "*" {
            return Some(module);
        }
        let code = &self.code[&module];
        let defines = [
            "fn", "struct", "enum", "trait", "type", "const", "static", "mod",
        ]
        .iter()
        .any(|kw| {
            code.contains(&format!("{kw} {item}("))
                || code.contains(&format!("{kw} {item} "))
                || code.contains(&format!("{kw} {item}<"))
                || code.contains(&format!("{kw} {item}:"))
                || code.contains(&format!("{kw} {item};"))
        });
        if defines {
            return Some(module);
        }
        // A re-export: `pub use PATH::item` or `pub use PATH::*` (relative or `crate::`).
        let here = self.module_of(&module);
        for stmt in code.split("pub use ").skip(1) {
            let tree: String = stmt.split(';').next().unwrap_or("").to_string();
            for p in expand(&tree) {
                let names_it = p.last().is_some_and(|l| l == item || l == "*")
                    || p.last()
                        .is_some_and(|l| l.ends_with(&format!(" as {item}")));
                if !names_it {
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
                if abs.last().is_some_and(|l| l == "*") {
                    abs.pop();
                    abs.push(item.clone());
                }
                if let Some(last) = abs.last_mut()
                    && let Some((name, _)) = last.split_once(" as ")
                {
                    *last = name.to_string();
                }
                if let Some(f) = self.resolve(&abs, depth + 1)
                    && (f != module)
                {
                    return Some(f);
                }
            }
        }
        Some(module)
    }
}

fn graph() -> (BTreeMap<PathBuf, BTreeSet<PathBuf>>, PathBuf) {
    let root = src_dir();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let code = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("source is UTF-8");
            (f.clone(), code_of(&text))
        })
        .collect();
    let krate = Crate {
        root: root.clone(),
        code,
    };
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (file, code) in &krate.code {
        let mine = krate.module_of(file);
        // `super::x` from a file is the sibling module `x` (or an item of the parent module).
        let parent: Vec<String> = mine
            .iter()
            .take(mine.len().saturating_sub(1))
            .cloned()
            .collect();
        let supers = prefixed_paths(code, "super::").into_iter().map(|p| {
            let mut abs = parent.clone();
            abs.extend(p);
            abs
        });
        for p in crate_paths(code).into_iter().chain(supers) {
            let Some(target) = krate.resolve(&p, 0) else {
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
            edges.entry(file.clone()).or_default().insert(target);
        }
    }
    (edges, root)
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

#[test]
fn no_file_depends_on_a_file_that_depends_back_on_it() {
    let (edges, root) = graph();
    let found = cycles(&edges);
    let show = |p: &PathBuf| p.strip_prefix(&root).unwrap_or(p).display().to_string();
    let report: Vec<String> = found
        .iter()
        .map(|c| {
            let names: BTreeSet<&PathBuf> = c.iter().collect();
            let ties: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    edges[a]
                        .iter()
                        .filter(|b| names.contains(b))
                        .map(move |b| format!("{} -> {}", show(a), show(b)))
                })
                .collect();
            ties.join("; ")
        })
        .collect();
    assert!(report.is_empty(), "import cycles:\n{}", report.join("\n"));
}

#[test]
fn the_checker_sees_a_cycle_and_resolves_re_exports() {
    // A cycle written in the shape the checker reads, to prove it can fail.
    let mut e: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    e.entry("a.rs".into()).or_default().insert("b.rs".into());
    e.entry("b.rs".into()).or_default().insert("a.rs".into());
    e.entry("c.rs".into()).or_default().insert("a.rs".into());
    assert_eq!(
        cycles(&e),
        vec![vec![PathBuf::from("a.rs"), PathBuf::from("b.rs")]]
    );
    assert_eq!(
        expand("a::{b, c::{D, E}}"),
        vec![
            vec!["a".to_string(), "b".into()],
            vec!["a".into(), "c".into(), "D".into()],
            vec!["a".into(), "c".into(), "E".into()]
        ]
    );
    // On the real crate: `scenario::Object` is defined in scenario/types.rs, re-exported.
    let (edges, root) = graph();
    // `super::` paths count: validation uses the authoring checks through `super::lint`.
    let validate = root.join("scenario").join("validate.rs");
    assert!(
        edges[&validate].contains(&root.join("scenario").join("lint.rs")),
        "{:?}",
        edges[&validate]
    );
    let world = root.join("world").join("mod.rs");
    assert!(
        edges[&world].contains(&root.join("scenario").join("types.rs")),
        "world/mod.rs should depend on scenario/types.rs: {:?}",
        edges[&world]
    );
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
