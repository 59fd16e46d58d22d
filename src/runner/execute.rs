//! Executing a plan: workers on the process's runtime, the journal of finished cells, and
//! `results.jsonl` in cell order whatever the scheduling.
//!
//! Owns: concurrency, the order records reach `results.jsonl`, and turning a panicking cell into
//! an errored record. Must not: print (it emits [`RunEvent`]s) or build shared work (the plan
//! did).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::cell::{self, run_cell};
use super::error::io;
use super::journal::{JOURNAL, Journal, repair_tail};
use super::resume::Kept;
use super::{
    Counts, Matrix, Plan, PointKey, Reporter, RunConfig, RunError, RunEvent, RunRecord, Status,
};
use crate::destination::live::{LiveClient, RetryNotice};

enum Msg {
    Started(usize),
    Finished(usize, Box<RunRecord>),
    Retry(RetryNotice),
}

/// Drops what the cells memoised on the runtime's workers (verdicts, token counts, the last
/// handoff read) and the tokeniser's tables: a run's cells are over, and its report reads the
/// saved files and counts nothing. All are bounded, not growing, but without this they stay
/// resident under the report (the tables alone are 46 MiB).
pub fn forget_memos() {
    crate::tokens::release();
    crate::runtime::on_each_worker(|| {
        crate::tokens::forget();
        crate::provenance::forget();
        crate::destination::forget();
    });
}

/// Runs the plan. Each finished cell goes to `OUT/journal.jsonl` at once; `OUT/results.jsonl`
/// gets the records in cell order, and at the end holds every record (those `--resume` kept
/// included) in cell order, and the journal is removed. Returns the number of records written by
/// this call.
///
/// Every cell of the plan ends as a record: a cell that panics is an errored record
/// (`error_class: harness`). With `resume`, a torn last line of `results.jsonl` or the journal is
/// removed first ([`RunEvent::TornTail`]).
pub fn execute(
    cfg: &RunConfig,
    plan: &Plan,
    reporter: &mut dyn Reporter,
) -> Result<usize, RunError> {
    std::fs::create_dir_all(&cfg.out).map_err(io(&cfg.out))?;
    let results = cfg.out.join("results.jsonl");
    let journal = cfg.out.join(JOURNAL);
    // What a resume keeps of the records already written: where each is, not the record.
    let mut kept: Option<Kept> = None;
    if cfg.resume {
        // The records of the last run: results.jsonl, and the journal of cells that finished
        // after its last in-order write (an interrupted run). A torn last line (a write cut
        // short) is removed first.
        for p in [&results, &journal] {
            if p.exists() {
                let bytes = repair_tail(p)?;
                if bytes > 0 {
                    reporter.event(RunEvent::TornTail { bytes });
                }
            }
        }
        let k = Kept::read(plan, &[&results, &journal], |r| {
            !cfg.rerun_errored || r.status == Status::Ok
        })?;
        // Rewritten only if that changes it: records parsed and written again may differ in a
        // timing's last digit, and a resume with nothing to do must change no byte.
        if !k.in_order() || journal.exists() {
            k.write(&results)?;
        }
        kept = Some(k);
    } else if results.exists() {
        std::fs::remove_file(&results).map_err(io(&results))?;
    }
    if journal.exists() {
        std::fs::remove_file(&journal).map_err(io(&journal))?;
    }
    // Indices into the lazy matrix, not copies of cells.
    let cells: Arc<Matrix> = plan.cells.clone();
    let todo: Vec<usize> = match &kept {
        Some(k) if !k.is_empty() => plan
            .selected
            .iter()
            .copied()
            .filter(|&i| cells.id(i).is_some() && !k.has(i))
            .collect(),
        _ => plan.selected.to_vec(),
    };
    reporter.event(RunEvent::Planned {
        total: todo.len(),
        skipped: plan.selected.len() - todo.len(),
    });
    let mut file = std::io::BufWriter::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&results)
            .map_err(io(&results))?,
    );
    let mut journal_file = Journal::open(&journal)?;

    // Cells of live models mostly wait on the network: `concurrency` cells run at once on the
    // process's runtime (one worker per core).
    let runtime = crate::runtime::runtime().map_err(io(&cfg.out))?;
    let next = Arc::new(AtomicUsize::new(0));
    // Unbounded: a retry hook is a plain function and must not wait.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    // The hooks hold weak senders: the channel closes when the last worker ends, even if a
    // worker ends without sending its record.
    for client in plan.live.values() {
        let weak = tx.downgrade();
        let hook: crate::destination::live::RetryHook = Arc::new(move |n: RetryNotice| {
            if let Some(tx) = weak.upgrade() {
                let _ = tx.send(Msg::Retry(n));
            }
        });
        client.set_retry_hook(Some(hook));
    }
    let todo_owned: Arc<Vec<usize>> = Arc::new(todo);
    let total = todo_owned.len();
    // Each point's cells still to run: a point is dropped after its last.
    let mut per_point: BTreeMap<PointKey, usize> = BTreeMap::new();
    for &ci in todo_owned.iter() {
        if let Some(c) = cells.get(ci) {
            *per_point
                .entry(PointKey {
                    scenario: c.scenario,
                    point: c.point.clone(),
                })
                .or_default() += 1;
        }
    }
    let shared = Arc::new(cell::Shared::new(plan, cfg, per_point));
    // The points not built yet are built on a thread of their own while cells run.
    let builder = (!plan.pending.is_empty()).then(|| {
        shared.stream.spawn(
            plan.builder.clone(),
            plan.pending.clone(),
            cfg.concurrency,
            cfg.out.clone(),
        )
    });
    let mut written = 0usize;
    let mut write_err: Option<RunError> = None;
    let mut counts = Counts {
        total,
        ..Counts::default()
    };
    // Only a resumed run needs its new records again (to merge them with the kept ones).
    // Only a resumed run puts its file in cell order again at the end (kept and new records).
    let reorder = kept.as_ref().is_some_and(|k| !k.is_empty());
    drop(kept);
    let live: Vec<Arc<LiveClient>> = plan.live.values().cloned().collect();
    let retrying = || {
        live.iter()
            .map(|c| c.retrying.load(Ordering::Relaxed))
            .sum::<u64>()
    };
    let units = Arc::new(units(
        todo_owned.iter().map(|&ci| {
            cells
                .get(ci)
                .map(|c| (c.scenario, c.point.clone(), c.strategy.clone()))
        }),
        plan.live.is_empty(),
    ));
    runtime.block_on(async {
        for _ in 0..cfg.concurrency.max(1) {
            let (tx, next, todo, shared, cells, units) = (
                tx.clone(),
                next.clone(),
                todo_owned.clone(),
                shared.clone(),
                cells.clone(),
                units.clone(),
            );
            tokio::spawn(async move {
                'units: loop {
                    let u = next.fetch_add(1, Ordering::Relaxed);
                    let Some(unit) = units.get(u) else { break };
                    for i in unit.clone() {
                        let Some(&ci) = todo.get(i) else { break 'units };
                        let Some(spec) = cells.get(ci) else {
                            break 'units;
                        };
                        let pk = PointKey {
                            scenario: spec.scenario,
                            point: spec.point.clone(),
                        };
                        // A point that will never be built (the builder failed) ends the worker.
                        if !shared.stream.ready(&pk).await {
                            break 'units;
                        }
                        if tx.send(Msg::Started(i)).is_err() {
                            break 'units;
                        }
                        // Each cell is its own task, so a panic in it is caught and recorded.
                        let task = tokio::spawn({
                            let (shared, spec) = (shared.clone(), spec.clone());
                            async move { run_cell(&shared, &spec, ci).await }
                        });
                        let rec = match task.await {
                            Ok(rec) => rec,
                            Err(e) => {
                                let payload: Box<dyn std::any::Any + Send> = if e.is_panic() {
                                    e.into_panic()
                                } else {
                                    Box::new("the cell's task was cancelled")
                                };
                                shared.panicked(&spec, payload)
                            }
                        };
                        shared.stream.finished(&pk);
                        if tx.send(Msg::Finished(i, Box::new(rec))).is_err() {
                            break 'units;
                        }
                    }
                }
            });
        }
        drop(tx);
        // Reorder into cell order so the file does not depend on scheduling.
        let mut pending: BTreeMap<usize, (String, RunRecord)> = BTreeMap::new();
        let mut expected = 0usize;
        while counts.finished < total {
            let Some(msg) = rx.recv().await else { break };
            match msg {
                Msg::Started(i) => {
                    counts.in_flight += 1;
                    counts.retrying = retrying();
                    reporter.event(RunEvent::CellStarted {
                        index: todo_owned[i],
                        counts,
                    });
                }
                Msg::Retry(n) => {
                    counts.retries += 1;
                    counts.retrying = retrying();
                    reporter.event(RunEvent::Retrying { notice: &n, counts });
                }
                Msg::Finished(i, rec) => {
                    // Durable first: the journal line is written before anything else happens.
                    let mut line = crate::secrets::json_line(&rec);
                    line.push('\n');
                    if write_err.is_none()
                        && let Err(e) = journal_file.append(line.as_bytes())
                    {
                        write_err = Some(RunError::Io {
                            path: journal.clone(),
                            source: e,
                        });
                    }
                    counts.finished += 1;
                    counts.in_flight = counts.in_flight.saturating_sub(1);
                    if rec.status == Status::Errored {
                        counts.errored += 1;
                    }
                    counts.retrying = retrying();
                    reporter.event(RunEvent::CellFinished {
                        index: todo_owned[i],
                        record: &rec,
                        counts,
                    });
                    pending.insert(i, (line, *rec));
                    while let Some((line, _)) = pending.remove(&expected) {
                        expected += 1;
                        if write_err.is_none() {
                            if let Err(e) =
                                file.write_all(line.as_bytes()).and_then(|_| file.flush())
                            {
                                write_err = Some(RunError::Io {
                                    path: results.clone(),
                                    source: e,
                                });
                            } else {
                                written += 1;
                            }
                        }
                    }
                }
            }
        }
    });
    for client in plan.live.values() {
        client.set_retry_hook(None);
    }
    // A run that ended early stops the builder; one that ran every cell lets it finish the
    // points no cell of this run needed (their continuity rows), as the whole plan would.
    if counts.finished < total {
        shared.stream.cancel();
    }
    if let Some(b) = builder
        && b.join().is_err()
    {
        return Err(RunError::Harness(
            "the thread building handoffs panicked".into(),
        ));
    }
    if let Some(e) = shared.stream.failure() {
        return Err(e);
    }
    if let Some(e) = write_err {
        return Err(e);
    }
    // On disk before the journal goes: a power cut after this point loses no finished cell.
    let file = file
        .into_inner()
        .map_err(|e| io(&results)(e.into_error()))?;
    file.sync_all().map_err(io(&results))?;
    drop(file);
    journal_file.sync().map_err(io(&journal))?;
    if reorder && written > 0 {
        Kept::read(plan, &[&results], |_| true)?.write(&results)?;
    }
    std::fs::remove_file(&journal).map_err(io(&journal))?;
    debug_assert_eq!(written, total);
    counts.retrying = 0;
    reporter.event(RunEvent::RunFinished { written, counts });
    Ok(written)
}

/// The runs of `todo` (positions into it) a worker takes at once, from each position's handoff
/// (`None`: a cell the matrix does not have). With simulated destinations only (`batch`), the
/// consecutive cells that continue one handoff (same scenario, point and strategy; the matrix
/// puts models and repetitions innermost), so its second reader finds the first's reading in the
/// worker's per-thread memos instead of judging the handoff again on the other worker; with a
/// live model, one cell each (its cells wait on the network and run at once).
fn units<K: PartialEq>(
    handoffs: impl IntoIterator<Item = Option<K>>,
    batch: bool,
) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut last: Option<K> = None;
    for (i, key) in handoffs.into_iter().enumerate() {
        match out.last_mut() {
            Some(r) if batch && key.is_some() && key == last => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
        last = key;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::units;

    #[test]
    fn a_worker_takes_a_handoffs_cells_together_only_when_every_destination_is_simulated() {
        let keys = [
            Some(1),
            Some(1),
            Some(2),
            None,
            None,
            Some(2),
            Some(3),
            Some(3),
        ];
        assert_eq!(units(keys, true), vec![0..2, 2..3, 3..4, 4..5, 5..6, 6..8]);
        assert_eq!(
            units(keys, false),
            (0..8).map(|i| i..i + 1).collect::<Vec<_>>()
        );
        assert!(units(Vec::<Option<u8>>::new(), true).is_empty());
    }
}
