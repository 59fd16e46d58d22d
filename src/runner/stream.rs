//! What the cells of a run read of the shared work, while it is built: restore points and
//! handoffs arrive point by point from a builder thread, in matrix order, a bounded number
//! ahead of the cells, and each point's share is dropped when its last cell has finished. A
//! run holds the points in flight, never the matrix: memory is flat in the number of cells.
//!
//! Owns: [`Stream`] (the points built and not yet done, what each cell waits for), the builder
//! thread ([`Stream::spawn`]) and the continuity rows and governed documents it writes as each
//! point is built. Must not: run a cell, choose the order of points (the plan's), or decide a
//! record.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use serde_json::json;

use super::RunError;
use super::build::{Builder, Built, Group};
use super::matrix::{HandoffKey, PointKey};
use super::prepare::Prepared;
use crate::state::RestorePoint;
use crate::tokens;

/// One point's share, as cells read it.
struct Point {
    at: Arc<RestorePoint>,
    history: u64,
}

#[derive(Default)]
struct Live {
    points: BTreeMap<PointKey, Point>,
    handoffs: BTreeMap<HandoffKey, Arc<Prepared>>,
    /// Fixed context tokens (system prompt + tool definitions) per handoff.
    context: BTreeMap<HandoffKey, u64>,
}

/// What a cell starts from.
pub struct Start {
    pub at: Arc<RestorePoint>,
    pub history: u64,
    pub prepared: Arc<Prepared>,
    pub context: u64,
}

/// The shared work of a run's cells, point by point.
pub struct Stream {
    live: Mutex<Live>,
    /// Each point's place in matrix order.
    ordinal: BTreeMap<PointKey, usize>,
    /// Cells of each point not yet finished (by ordinal).
    remaining: Vec<AtomicUsize>,
    /// Points built so far (`usize::MAX` once the builder failed or stopped).
    built: tokio::sync::watch::Sender<usize>,
    /// Points built and not yet done, and the builder's wait for room.
    held: (Mutex<usize>, Condvar),
    /// Points held at most: the builder waits for room beyond it.
    cap: usize,
    failure: Mutex<Option<RunError>>,
    cancelled: AtomicBool,
    /// Tokens of the destinations' system prompt (part of every handoff's fixed context).
    prompt_tokens: u64,
}

impl Stream {
    /// The stream of a plan whose first points are built (`built`, in matrix order as `order`
    /// lists every point); `todo` holds each point's cells still to run; `prompt_tokens` are the
    /// system prompt's.
    pub fn new(
        order: &[PointKey],
        built: Vec<Built>,
        todo: BTreeMap<PointKey, usize>,
        cap: usize,
        prompt_tokens: u64,
    ) -> Stream {
        let ordinal: BTreeMap<PointKey, usize> = order
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), i))
            .collect();
        let remaining = order
            .iter()
            .map(|k| AtomicUsize::new(todo.get(k).copied().unwrap_or(0)))
            .collect();
        let n = built.len();
        let s = Stream {
            live: Mutex::new(Live::default()),
            ordinal,
            remaining,
            built: tokio::sync::watch::Sender::new(n),
            held: (Mutex::new(0), Condvar::new()),
            cap: cap.max(1),
            failure: Mutex::new(None),
            cancelled: AtomicBool::new(false),
            prompt_tokens,
        };
        for b in built {
            s.insert(b);
        }
        s
    }

    /// Adds a built point, unless none of its cells is left to run.
    fn insert(&self, b: Built) {
        let Some(&ord) = self.ordinal.get(&b.key) else {
            return;
        };
        if self.remaining[ord].load(Ordering::SeqCst) == 0 {
            return;
        }
        // The tool definitions are the scenario's, the same for every handoff of the point.
        let tools = json!(b.at.scenario
            .world
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.params}))
            .collect::<Vec<_>>());
        let fixed = self.prompt_tokens + tokens::count_cached(&tools.to_string());
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        for (key, p) in b.handoffs {
            if let Prepared::Ready { handoff: h, .. } = &p {
                let tokens = fixed
                    + h.extra_tools
                        .iter()
                        .map(|t| {
                            tokens::count_cached(&t.parameters.to_string())
                                + tokens::count_cached(&t.description)
                        })
                        .sum::<u64>();
                live.context.insert(key.clone(), tokens);
            }
            live.handoffs.insert(key, Arc::new(p));
        }
        live.points.insert(
            b.key,
            Point {
                at: b.at,
                history: b.history,
            },
        );
        drop(live);
        *self.held.0.lock().unwrap_or_else(|p| p.into_inner()) += 1;
    }

    /// Waits until the point of `pk` is built; `false` when it never will be (the builder
    /// failed or the run stopped).
    pub async fn ready(&self, pk: &PointKey) -> bool {
        let Some(&ord) = self.ordinal.get(pk) else {
            return false;
        };
        let mut rx = self.built.subscribe();
        match rx.wait_for(|&n| n > ord).await {
            Ok(n) => *n != usize::MAX || self.live_has(pk),
            Err(_) => false,
        }
    }

    fn live_has(&self, pk: &PointKey) -> bool {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.points.contains_key(pk)
    }

    /// What a cell of `pk` starting from `key` reads; `None` when its point is not held.
    pub fn start(&self, pk: &PointKey, key: &HandoffKey) -> Option<Result<Start, Arc<Prepared>>> {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let prepared = live.handoffs.get(key)?.clone();
        let Some(point) = live.points.get(pk) else {
            return Some(Err(prepared));
        };
        Some(Ok(Start {
            at: point.at.clone(),
            history: point.history,
            context: live.context.get(key).copied().unwrap_or(0),
            prepared,
        }))
    }

    /// A cell of `pk` finished: its point is dropped after its last cell, and the builder gets
    /// room for the next.
    pub fn finished(&self, pk: &PointKey) {
        let Some(&ord) = self.ordinal.get(pk) else {
            return;
        };
        if self.remaining[ord].fetch_sub(1, Ordering::SeqCst) != 1 {
            return;
        }
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.points.remove(pk);
        let keys: Vec<HandoffKey> = live
            .handoffs
            .keys()
            .filter(|k| k.scenario == pk.scenario && k.point == pk.point)
            .cloned()
            .collect();
        for k in keys {
            live.handoffs.remove(&k);
            live.context.remove(&k);
        }
        drop(live);
        let (held, room) = &self.held;
        let mut n = held.lock().unwrap_or_else(|p| p.into_inner());
        *n = n.saturating_sub(1);
        room.notify_all();
    }

    /// The builder's failure, if it failed.
    pub fn failure(&self) -> Option<RunError> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Stops the builder (the run ended); cells waiting for a point are woken and told none
    /// comes.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.held.1.notify_all();
        self.built.send_replace(usize::MAX);
    }

    /// Builds `pending` (the points after the built ones, in matrix order) on a thread of its
    /// own, at most `cap` points held at once; each point's continuity rows are appended to
    /// `continuity` and its governed documents written under `out` as it is built.
    pub fn spawn(
        self: &Arc<Stream>,
        builder: Arc<Builder>,
        pending: Vec<Group>,
        concurrency: usize,
        out: PathBuf,
    ) -> std::thread::JoinHandle<()> {
        let stream = self.clone();
        std::thread::spawn(move || {
            let first = *stream.built.borrow();
            let result = stream.produce(&builder, &pending, concurrency, &out, first);
            if let Err(e) = result {
                *stream.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                stream.built.send_replace(usize::MAX);
            }
        })
    }

    fn produce(
        &self,
        builder: &Arc<Builder>,
        pending: &[Group],
        concurrency: usize,
        out: &std::path::Path,
        first: usize,
    ) -> Result<(), RunError> {
        let path = out.join("continuity.jsonl");
        let mut continuity = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(super::error::io(&path))?;
        for (i, g) in pending.iter().enumerate() {
            {
                let (held, room) = &self.held;
                let mut n = held.lock().unwrap_or_else(|p| p.into_inner());
                while *n >= self.cap && !self.cancelled.load(Ordering::SeqCst) {
                    n = room.wait(n).unwrap_or_else(|p| p.into_inner());
                }
            }
            if self.cancelled.load(Ordering::SeqCst) {
                return Ok(());
            }
            let built = builder.build(std::slice::from_ref(g), concurrency, false)?;
            for b in built {
                let mut text = String::new();
                for c in &b.continuity {
                    text.push_str(&crate::secrets::json_line(c));
                    text.push('\n');
                }
                continuity
                    .write_all(text.as_bytes())
                    .map_err(super::error::io(&path))?;
                super::folder::write_governed_of(out, b.handoffs.iter().map(|(_, p)| p))?;
                self.insert(b);
            }
            self.built.send_replace(first + i + 1);
        }
        continuity.sync_all().map_err(super::error::io(&path))
    }
}
