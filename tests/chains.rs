//! Compaction chains (`--cycles`): a chain of one is today's handoff; each next compaction sees
//! only the previous handoff and the events since, so what one drops stays dropped, and what C
//! keeps (provenance, omissions, uncertain operations, hypotheses, quoted outside text) survives
//! every rebuild.

use std::path::Path;
use std::sync::Arc;

use compaction_eval::scenario;
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::{Registry, chain};

fn scenario(id: &str) -> Arc<scenario::Scenario> {
    Arc::new(scenario::load_file(&Path::new("scenarios").join(format!("{id}.yaml"))).expect("loads"))
}

fn last_point(s: &Arc<scenario::Scenario>) -> Arc<RestorePoint> {
    let p = s.interrupts.last().expect("a point");
    Arc::new(RestorePoint::build(s.clone(), &p.point).expect("state"))
}

#[test]
fn debug_continuity() {
    let s = scenario("support-ticket-timeout");
    let reg = Registry::builtin();
    for p in &s.interrupts {
        let at = Arc::new(RestorePoint::build(s.clone(), &p.point).unwrap());
        let single = reg.handoff("C", &at).unwrap();
        let full: String = at.state.events.iter().map(|e| e.text.as_str()).collect::<Vec<_>>().join("\n");
        let a = compaction_eval::continuity::evaluate(&at, &single, &full);
        let ch = reg.chain("C", &at, 1).unwrap();
        let b = compaction_eval::continuity::evaluate(&at, &ch[0], &full);
        eprintln!("{} {} {} {:?}", p.point, a.passed, b.passed, a.violations);
    }
}
