//! Messages for people and bounded work on scenario files: a corpus of mutations of the shipped
//! scenarios (wrong types, nulls, negative numbers, duplicate keys, unknown and missing fields),
//! drawn from a fixed seed, must be rejected with the field's path in the document's own terms
//! (never a Rust type or a parser option); a scenario string or volume entry over the limits is
//! rejected at load, naming file and field, before anything is expanded.

use std::path::{Path, PathBuf};

use compaction_eval::scenario::{self, ScenarioError, limits};
use serde_json::Value;

/// Deterministic draws (SplitMix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

fn show(path: &[Seg]) -> String {
    let mut s = String::new();
    for p in path {
        match p {
            Seg::Key(k) if s.is_empty() => s.push_str(k),
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Every node below the root, with its path.
fn nodes(v: &Value, path: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(Seg::Key(k.clone()));
                out.push(path.clone());
                nodes(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(Seg::Index(i));
                out.push(path.clone());
                nodes(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Seg]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Seg::Key(k) => &mut v[k.as_str()],
        Seg::Index(i) => &mut v[*i],
    })
}

/// One mutation: the YAML text and the path the message must name.
struct Mutation {
    kind: &'static str,
    yaml: String,
    field: String,
}

/// Mutates a node of the parsed document (not the duplicate key: see [`duplicate`]).
fn mutate(doc: &Value, rng: &mut Rng) -> Option<Mutation> {
    let mut all = Vec::new();
    nodes(doc, &mut Vec::new(), &mut all);
    let path = all[rng.below(all.len())].clone();
    let mut d = doc.clone();
    let kind = ["type", "null", "negative", "unknown", "missing"][rng.below(5)];
    let target = at(&mut d, &path).clone();
    let mut field = show(&path);
    match kind {
        "type" => {
            *at(&mut d, &path) = match target {
                Value::String(_) => serde_json::json!({"unexpected": 1}),
                Value::Number(_) => Value::String("many".into()),
                Value::Bool(_) => Value::String("perhaps".into()),
                Value::Array(_) => Value::String("none".into()),
                Value::Object(_) => Value::from(7),
                Value::Null => Value::from(true),
            }
        }
        "null" => *at(&mut d, &path) = Value::Null,
        "negative" => {
            if !target.is_number() {
                return None;
            }
            *at(&mut d, &path) = Value::from(-5);
        }
        "unknown" => {
            let Value::Object(m) = at(&mut d, &path) else {
                return None;
            };
            m.insert("surprise_field".into(), Value::from(1));
            field = format!("{field}.surprise_field");
        }
        _ => {
            let (Some(Seg::Key(k)), parent) = (path.last(), &path[..path.len() - 1]) else {
                return None;
            };
            let Value::Object(m) = at(&mut d, parent) else {
                return None;
            };
            m.remove(k);
        }
    }
    Some(Mutation {
        kind,
        yaml: serde_saphyr::to_string(&d).ok()?,
        field,
    })
}

/// Repeats a `key: value` line of the file (a duplicate key); the message must name the key.
fn duplicate(text: &str, rng: &mut Rng) -> Option<Mutation> {
    let lines: Vec<&str> = text.lines().collect();
    let candidates: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let t = lines[i].trim_start();
            let t = t.strip_prefix("- ").unwrap_or(t);
            t.split_once(": ").is_some_and(|(k, v)| {
                !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !v.trim().is_empty()
                    && !v.trim_start().starts_with(['|', '>', '#'])
            }) && !lines[i].trim_start().starts_with("- ")
        })
        .collect();
    let i = candidates[rng.below(candidates.len())];
    let key = lines[i].trim_start().split_once(':')?.0.to_string();
    let mut out: Vec<&str> = lines.clone();
    out.insert(i + 1, lines[i]);
    Some(Mutation {
        kind: "duplicate",
        yaml: out.join("\n") + "\n",
        field: key,
    })
}

/// Words of Rust and of the YAML library that a message for people must never carry.
const RUST_TERMS: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "i32",
    "i64",
    "usize",
    "f64",
    "Option<",
    "Vec<",
    "String",
    "DuplicateKeyPolicy",
    "Options",
    "struct ",
    "variant",
    "serde",
    "deserialize",
    "enum",
    "scalar",
];

fn shipped() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("scenarios")
        .expect("scenarios")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    v.sort();
    v
}

fn load(dir: &Path, name: &str, yaml: &str) -> Result<(), ScenarioError> {
    let f = dir.join(name);
    std::fs::write(&f, yaml).expect("write");
    scenario::load_file(&f).map(|_| ())
}

/// Whether the rejection names `field` (the mutated path; for a duplicate, the key) as the file
/// does: the whole dotted path, or a problem list from validation whose every line has a path.
fn names_field(e: &ScenarioError, field: &str) -> bool {
    let text = e.to_string();
    if text.contains(field) {
        return true;
    }
    matches!(e, ScenarioError::Invalid { problems, .. } if problems.iter().all(|p| !p.path.is_empty()))
}

#[test]
fn mutated_scenarios_are_rejected_naming_the_field_in_the_documents_terms() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut rng = Rng(0x00c0_ffee);
    let (mut rejected, mut named) = (0usize, 0usize);
    let mut unnamed = Vec::new();
    let mut rusty = Vec::new();
    let mut by_kind: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for file in shipped() {
        let text = std::fs::read_to_string(&file).expect("read");
        let doc: Value = serde_saphyr::from_str(&text).expect("the shipped file parses");
        // The unmutated document, written back, is a valid scenario: the corpus starts valid.
        let round = serde_saphyr::to_string(&doc).expect("yaml");
        if let Err(e) = load(dir.path(), "round.yaml", &round) {
            panic!("{}: does not survive a round trip: {e}", file.display());
        }
        for n in 0..24 {
            let m = if n % 6 == 5 {
                duplicate(&text, &mut rng)
            } else {
                mutate(&doc, &mut rng)
            };
            let Some(m) = m else { continue };
            // To measure another build's messages on the same corpus (the "before").
            if let Ok(keep) = std::env::var("SCENARIO_CORPUS_DIR") {
                let name = format!(
                    "{}-{n:02}",
                    file.file_stem().and_then(|s| s.to_str()).unwrap_or("s")
                );
                let _ = std::fs::create_dir_all(&keep);
                let _ = std::fs::write(Path::new(&keep).join(format!("{name}.yaml")), &m.yaml);
                let _ = std::fs::write(Path::new(&keep).join(format!("{name}.field")), &m.field);
            }
            let Err(e) = load(dir.path(), "mutant.yaml", &m.yaml) else {
                continue;
            };
            rejected += 1;
            let entry = by_kind.entry(m.kind).or_default();
            entry.0 += 1;
            let message = e.to_string();
            if names_field(&e, &m.field) {
                named += 1;
                entry.1 += 1;
            } else {
                unnamed.push(format!("[{}] {}: {message}", m.kind, m.field));
            }
            for t in RUST_TERMS {
                // Only whole words: `String` inside a quoted value of the file is the user's.
                let hit = message.match_indices(t).any(|(i, _)| {
                    let before = message[..i].chars().next_back();
                    let after = message[i + t.len()..].chars().next();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                        && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if hit {
                    rusty.push(format!("[{}] `{t}` in: {message}", m.kind));
                }
            }
        }
    }
    let share = named as f64 / rejected.max(1) as f64;
    eprintln!(
        "{rejected} rejected mutations, {named} name the field ({:.1}%); by kind: {by_kind:?}",
        share * 100.0
    );
    assert!(rejected >= 100, "too few rejections to judge: {rejected}");
    assert!(
        share >= 0.95,
        "{:.1}% of rejections name the field; without it:\n{}",
        share * 100.0,
        unnamed.join("\n")
    );
    assert!(
        rusty.is_empty(),
        "messages in Rust's terms:\n{}",
        rusty.join("\n")
    );
}

#[test]
fn a_ten_megabyte_volume_entry_is_rejected_at_load_naming_file_and_field() {
    let dir = tempfile::tempdir().expect("tmp");
    // A shipped scenario with volume, one word-list entry made 10 MB long.
    let file = shipped()
        .into_iter()
        .find(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .contains("\n  vocab:")
        })
        .expect("a shipped scenario with a volume vocabulary");
    let text = std::fs::read_to_string(&file).expect("read");
    let mut doc: Value = serde_saphyr::from_str(&text).expect("parses");
    let vocab = doc["volume"]["vocab"].as_object_mut().expect("vocab");
    let name = vocab.keys().next().expect("a list").clone();
    vocab[&name][0] = Value::String("x".repeat(10_000_000));
    let yaml = serde_saphyr::to_string(&doc).expect("yaml");
    let path = dir.path().join("huge.yaml");
    std::fs::write(&path, yaml).expect("write");
    let e = scenario::load_file(&path).expect_err("over the limit");
    let message = e.to_string();
    assert!(message.contains("huge.yaml"), "{message}");
    assert!(
        message.contains(&format!("volume.vocab.{name}[0]")),
        "{message}"
    );
    assert!(message.contains("at most"), "{message}");
    // A file over the file limit is refused from its size, before it is read.
    let big = dir.path().join("big.yaml");
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(limits::MAX_FILE_BYTES + 1).expect("sparse file");
    let e = scenario::load_file(&big).expect_err("too large");
    assert!(e.to_string().contains("at most 16.0 MiB"), "{e}");
}

#[test]
fn a_volume_that_would_generate_too_much_is_rejected_before_generating() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = shipped()
        .into_iter()
        .find(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .contains("\n  collections:")
        })
        .expect("a shipped scenario with volume collections");
    let text = std::fs::read_to_string(&file).expect("read");
    let mut doc: Value = serde_saphyr::from_str(&text).expect("parses");
    let colls = doc["volume"]["collections"]
        .as_object_mut()
        .expect("collections");
    let name = colls.keys().next().expect("one").clone();
    // 100,000 records (the most one collection may have) of ~1 KiB each: ~100 MB.
    colls[&name]["records"] = Value::from(limits::MAX_GENERATED_ITEMS);
    colls[&name]["record"]["note"] = Value::String("y".repeat(1000));
    let path = dir.path().join("much.yaml");
    std::fs::write(&path, serde_saphyr::to_string(&doc).expect("yaml")).expect("write");
    let e = scenario::load_file(&path).expect_err("over the volume limit");
    let message = e.to_string();
    assert!(
        message.contains(&format!("volume.collections.{name}")),
        "{message}"
    );
    assert!(
        message.contains("may generate at most 64.0 MiB"),
        "{message}"
    );
}
