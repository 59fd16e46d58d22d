//! The gate's JUnit XML file: one test case per rule, a failure element for each rule that
//! failed. It only formats verdicts; it never judges a rule.
//!
//! Hand-written rather than with `quick-junit`: the document is one suite of flat test cases,
//! and `quick-junit` would bring chrono, uuid, indexmap and a second quick-xml into the build.

use std::fmt::Write as _;

use super::RuleResult;
use crate::text::escape_markup;

/// A JUnit XML document with one test case per rule.
pub fn junit(results: &[RuleResult]) -> String {
    // An inconclusive comparison is a failure of its test case: it was not shown to hold.
    let failures = results.iter().filter(|r| !r.held()).count();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"compaction-eval gate\" tests=\"{}\" failures=\"{failures}\">",
        results.len()
    );
    let _ = writeln!(
        x,
        "  <testsuite name=\"gate\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        results.len()
    );
    for r in results {
        let _ = write!(
            x,
            "    <testcase classname=\"compaction-eval.gate\" name=\"{}\"",
            escape_markup(&r.name)
        );
        if r.held() {
            let _ = writeln!(
                x,
                "><system-out>{}</system-out></testcase>",
                escape_markup(&r.detail)
            );
        } else {
            let _ = writeln!(
                x,
                "><failure message=\"{}: {}\">{}</failure></testcase>",
                r.verdict.label().trim(),
                escape_markup(&r.detail),
                escape_markup(&r.detail)
            );
        }
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    crate::secrets::redact(&x).into_owned()
}
