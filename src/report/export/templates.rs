//! The two report templates (`templates/report.md.j2`, `templates/report.html.j2`) and their one
//! minijinja environment: Markdown without escaping (strings go through the `cell` filter) and
//! HTML with minijinja's HTML auto-escaping.
//!
//! Owns: the environment, its filters and [`render`]. Must not: build the view (the view module
//! does) or choose what a report shows.

use super::ExportError;
use crate::report::view::View;

/// The Markdown report's template.
pub const MARKDOWN: &str = "report.md.j2";
/// The HTML report's template.
pub const HTML: &str = "report.html.j2";

fn environment() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("default delimiters"),
    );
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html.j2") {
            minijinja::AutoEscape::Html
        } else {
            minijinja::AutoEscape::None
        }
    });
    // Markdown table cells must not break the table (model- or plug-in-written text may appear).
    env.add_filter("cell", |s: String| s.replace('|', "\\|").replace('\n', " "));
    env.add_template(MARKDOWN, include_str!("../templates/report.md.j2"))
        .expect("report.md.j2 parses");
    env.add_template(HTML, include_str!("../templates/report.html.j2"))
        .expect("report.html.j2 parses");
    env
}

/// Renders `template` ([`MARKDOWN`] or [`HTML`]) with the view and any extra context.
pub fn render(
    template: &'static str,
    view: &View,
    extra: minijinja::Value,
) -> Result<String, ExportError> {
    let env = environment();
    let failed = |source| ExportError::Template { template, source };
    let tmpl = env.get_template(template).map_err(failed)?;
    tmpl.render(
        minijinja::context! { ..extra, ..minijinja::Value::from(minijinja::value::Serde(view)) },
    )
    .map_err(failed)
}
