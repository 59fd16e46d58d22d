//! `report.html` and the plots, re-rendered from saved records by `compaction-eval report`.

use assert_cmd::Command;
use compaction_eval::record::{Omission, OmissionEvidence};
use compaction_eval::runner::{RunConfig, Silent, Status, read_records};

#[test]
fn model_written_text_is_escaped_and_plots_are_inlined() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let cfg = RunConfig {
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        strategies: vec!["B".into(), "C".into()],
        reps: 1,
        out: out.clone(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let plan = compaction_eval::runner::plan(&cfg).expect("plan");
    compaction_eval::runner::write_manifest(&cfg, &plan).expect("manifest");
    compaction_eval::runner::execute(&cfg, &plan, &mut Silent).expect("run");
    // A plug-in's strategy name and a model's error text, as hostile as they come.
    let mut recs = read_records(&out.join("results.jsonl")).expect("records");
    recs[0].strategy = "<script>alert(1)</script>".into();
    std::sync::Arc::make_mut(&mut recs[0].diagnostics)
        .omitted
        .push(Omission {
            fact: "<script>fact()</script> & co".into(),
            evidence: OmissionEvidence::NeverDid {
                target: "lost".into(),
            },
        });
    recs[2].model = "sim:a&b <i>".into();
    recs[1].status = Status::Errored;
    recs[1].error =
        Some("endpoint said <script>alert(1)</script> | and <img src=x onerror=alert(2)>".into());
    let text: String = recs
        .iter()
        .map(|r| serde_json::to_string(r).expect("json") + "\n")
        .collect();
    std::fs::write(out.join("results.jsonl"), text).expect("write");

    let mut c = Command::cargo_bin("compaction-eval").expect("binary");
    c.env_remove("RUST_BACKTRACE")
        .args(["report", out.to_str().unwrap_or_default()])
        .assert()
        .success();

    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(!html.contains("<script>alert(1)"), "raw script in the HTML");
    assert!(!html.contains("<img src=x"), "raw tag in the HTML");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        !html.contains("src=\"http") && !html.contains("<link"),
        "the page fetches nothing"
    );
    assert!(
        !html.contains("<script>fact()"),
        "raw fact text in the HTML"
    );
    assert!(
        html.contains("&lt;script&gt;fact()&lt;&#x2f;script&gt; &amp; co")
            || html.contains("&lt;script&gt;fact()&lt;/script&gt; &amp; co")
    );
    assert!(!html.contains("sim:a&b <i>") && html.contains("sim:a&amp;b &lt;i&gt;"));
    assert_eq!(html.matches("<svg").count(), 7, "seven inlined plots");
    // A reader sees the answer first (summary, ranking, paired differences), then the plots,
    // then the appendix with the findings and the full tables; long tables are collapsible.
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("no {needle:?}"));
    assert!(at("<h2 id=\"summary\">") < at("<h2 id=\"ranking\">"));
    assert!(at("<h2 id=\"ranking\">") < at("<h2 id=\"paired\">"));
    assert!(at("<h2 id=\"paired\">") < at("<h2 id=\"plots\">"));
    assert!(at("<h2 id=\"plots\">") < at("<h2 id=\"appendix\">"));
    assert!(at("<h2 id=\"appendix\">") < at("Manifest digest"));
    assert!(at("<h2 id=\"appendix\">") < at("Facts most often omitted"));
    assert!(at("Facts most often omitted") < at("<h3 id=\"tables\">"));
    assert!(
        at("<details><summary>Per strategy × destination model × interrupt point")
            > at("<h3 id=\"tables\">")
    );
    assert!(html.contains("These conclusions rest on <strong>1 scenario</strong>"));
    assert!(!html.contains("<script"), "no script at all");
    for name in [
        "task_success",
        "cost_quality",
        "safety_heatmap",
        "total_tokens",
    ] {
        let png = std::fs::read(out.join("plots").join(format!("{name}.png"))).expect("png");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let svg =
            std::fs::read_to_string(out.join("plots").join(format!("{name}.svg"))).expect("svg");
        assert!(svg.contains("<svg"));
    }
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("Errored cells (1)"));
    assert!(md.contains("## Paired differences against C"));
    assert!(md.find("## Summary") < md.find("## Ranking"));
    assert!(md.find("## Ranking") < md.find("# Appendix"));
    // The manifest names each scenario's domain: the appendix has the per-domain table.
    assert!(md.contains("## Per scenario domain"), "{md}");
    assert!(md.contains("| support | C | sim:careful | 1 |"), "{md}");
}

/// The report leads with its answer: at most six tables before the appendix, in both formats,
/// on a run with every strategy (governed ones included) of the record fixture.
#[test]
fn at_most_six_tables_come_before_the_appendix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/records-v2/results.jsonl"),
        out.join("results.jsonl"),
    )
    .expect("copy");
    compaction_eval::report::render_dir(&out).expect("report");
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    let (main, appendix) = md.split_once("\n# Appendix").expect("an appendix");
    let tables = |text: &str| text.lines().filter(|l| l.starts_with("| ---")).count();
    assert!(
        tables(main) <= 6,
        "{} tables before the appendix",
        tables(main)
    );
    assert!(tables(appendix) > 0);
    assert!(
        main.starts_with("# compaction-eval report\n\n## Summary"),
        "{main}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let (main, _) = html
        .split_once("<h2 id=\"appendix\">")
        .expect("an appendix");
    assert!(main.matches("<table").count() <= 6);
    // No cell-level Wilson interval is left anywhere.
    assert!(!md.contains("Wilson 95%") && !html.contains("Wilson 95%"));
}
