//! The run's live clients and strategy instances: destination models, summarisers, the probe,
//! and the secrets to redact.
//!
//! Owns: resolving a destination or summariser name to its configuration and client, and one
//! set of strategy instances per usable context. Must not: build handoffs or run cells.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{RunConfig, RunError};
use crate::delivery::GovSpec;
use crate::destination::is_simulated;
use crate::destination::live::{Cache, LiveClient, ModelConfig};
use crate::destination::profile::{Profile, Rates, fitted_path};
use crate::strategy::{Registry, Strategy};

/// The configuration of a live destination named on the command line, if it is one.
pub fn live_model(cfg: &RunConfig, name: &str) -> Option<ModelConfig> {
    if let Some(m) = cfg.model_defs.get(name) {
        let mut m = m.clone();
        m.name = name.to_string();
        return Some(m);
    }
    // `openai:MODEL` and the local servers' prefixes have no table to set a limit in: they run
    // as many requests as cells.
    ModelConfig::from_prefix(name).map(|mut c| {
        c.max_concurrency = cfg.concurrency.max(1);
        c
    })
}

/// Checks a live model's durations and request fields; the error names the model.
fn check(name: &str, mc: &ModelConfig) -> Result<(), RunError> {
    mc.check_durations()
        .map_err(|e| RunError::Config(format!("model `{name}`: {e}")))?;
    mc.check_request()
        .map_err(|e| RunError::Config(format!("model `{name}`: {e}")))
}

/// The response cache of a run (`None` with `--no-cache`).
pub(super) fn cache(cfg: &RunConfig) -> Option<Cache> {
    (!cfg.no_cache).then(|| Cache {
        dir: cfg.cache_dir.clone().unwrap_or_else(Cache::default_dir),
    })
}

/// The run's strategy instances and the live models they and the destinations use.
pub(super) struct Instances {
    /// One set of strategy instances (in `cfg.strategies` order) per distinct usable context
    /// among the run's destinations, smallest first.
    pub by_budget: Vec<(u64, Vec<Box<dyn Strategy>>)>,
    /// Every live model of the run (destinations, then summarisers), as it runs.
    pub live_models: Vec<ModelConfig>,
}

/// Builds the strategy instances for every usable context of `windows`, then probes every live
/// model once (unless `--no-probe`).
pub(super) fn instances(
    cfg: &RunConfig,
    registry: &Registry,
    live: &BTreeMap<String, Arc<LiveClient>>,
    cache: &Option<Cache>,
    windows: &BTreeMap<String, u64>,
) -> Result<Instances, RunError> {
    let mut budgets: Vec<u64> = windows
        .values()
        .map(|w| crate::strategy::usable_context(*w))
        .collect();
    budgets.sort_unstable();
    budgets.dedup();
    let mut by_budget = Vec::new();
    let mut summarisers: Vec<Arc<LiveClient>> = Vec::new();
    for &b in &budgets {
        let (insts, sums) = strategies(cfg, registry, live, cache, b)?;
        if summarisers.is_empty() {
            summarisers = sums;
        }
        by_budget.push((b, insts));
    }
    let mut clients: Vec<Arc<LiveClient>> = live.values().cloned().collect();
    // A model that is both a destination and a summariser is one client: probed and announced
    // once.
    for s in &summarisers {
        if !clients.iter().any(|c| Arc::ptr_eq(c, s)) {
            clients.push(s.clone());
        }
    }
    if cfg.probe {
        preflight(&clients)?;
    }
    Ok(Instances {
        by_budget,
        live_models: clients.iter().map(|c| c.config.clone()).collect(),
    })
}

/// The live clients of the run's destination models, by name.
pub(super) fn live_clients(
    cfg: &RunConfig,
    cache: &Option<Cache>,
) -> Result<BTreeMap<String, Arc<LiveClient>>, RunError> {
    let mut live = BTreeMap::new();
    for m in &cfg.models {
        if is_simulated(m) {
            continue;
        }
        let Some(mc) = live_model(cfg, m) else {
            let mut known: Vec<String> = crate::destination::SIM_MODELS
                .iter()
                .map(|s| s.to_string())
                .collect();
            known.push("sim:fitted:PATH".into());
            known.extend(cfg.model_defs.keys().cloned());
            known.push("openai:MODEL".into());
            known.extend(
                crate::destination::live::LOCAL_SERVERS
                    .iter()
                    .map(|(p, _, _)| format!("{p}MODEL")),
            );
            return Err(RunError::Unknown {
                what: "destination model",
                id: m.clone(),
                known: known.join(", "),
            });
        };
        check(m, &mc)?;
        let client = LiveClient::new(mc, cache.clone()).map_err(|e| RunError::Config(e.message))?;
        live.insert(m.clone(), Arc::new(client));
    }
    Ok(live)
}

/// The behavioural rates of every `sim:fitted:PATH` destination of the run, by id: each file
/// read and checked (`crate::destination::profile`), so a bad one stops the run before it starts.
pub fn profiles(cfg: &RunConfig) -> Result<BTreeMap<String, Rates>, RunError> {
    let mut out = BTreeMap::new();
    for m in &cfg.models {
        if let Some(path) = fitted_path(m) {
            let p = Profile::load(std::path::Path::new(path))
                .map_err(|e| RunError::Config(format!("destination `{m}`: {e}")))?;
            out.insert(m.clone(), p.rates);
        }
    }
    Ok(out)
}

/// The run's strategies, and the live clients of their summarisers.
type Strategies = (Vec<Box<dyn Strategy>>, Vec<Arc<LiveClient>>);

/// The run's strategies; `llm_summary` strategies get their summariser model's client.
fn strategies(
    cfg: &RunConfig,
    registry: &Registry,
    live: &BTreeMap<String, Arc<LiveClient>>,
    cache: &Option<Cache>,
    window_budget: u64,
) -> Result<Strategies, RunError> {
    let mut out = Vec::new();
    let mut summarisers: Vec<Arc<LiveClient>> = Vec::new();
    for id in &cfg.strategies {
        // `gov:X` builds X; the plan wraps its handoff (`crate::delivery`).
        let id = &build_id(id)?;
        let summariser = match registry
            .config(id)
            .filter(|c| c.kind == crate::strategy::StrategyKind::LlmSummary)
        {
            None => None,
            Some(c) => {
                let name = c.summarizer.clone().unwrap_or_default();
                let client = match live.get(&name) {
                    Some(cl) => cl.clone(),
                    None => {
                        let mc = live_model(cfg, &name).ok_or_else(|| {
                            RunError::Config(format!(
                                "strategy `{id}`: summarizer `{name}` is not a configured model (add [model.{name}] to the configuration, or use openai:MODEL)"
                            ))
                        })?;
                        check(&name, &mc)?;
                        Arc::new(
                            LiveClient::new(mc, cache.clone())
                                .map_err(|e| RunError::Config(e.message))?,
                        )
                    }
                };
                if !summarisers.iter().any(|s| Arc::ptr_eq(s, &client)) {
                    summarisers.push(client.clone());
                }
                Some(client as Arc<dyn crate::strategy::Summariser>)
            }
        };
        out.push(registry.get_for(id, summariser, window_budget)?);
    }
    Ok((out, summarisers))
}

/// The strategy a run id builds: X for a governed `gov:X` and for a chain `X×N` (or
/// `gov:X×N`), else the id itself.
pub(super) fn build_id(id: &str) -> Result<String, RunError> {
    let (id, _) = crate::strategy::chain::parse(id).map_err(RunError::Usage)?;
    match GovSpec::parse(id) {
        None => Ok(id.to_string()),
        Some(Ok(g)) => Ok(g.inner),
        Some(Err(e)) => Err(crate::delivery::GovSpecError::Strategy(Box::new(e)).into()),
    }
}

/// Probes every live model once (concurrently): the key variable is set, the base URL answers,
/// the key is not refused. Every failure is reported, each naming its model's table.
pub fn preflight(clients: &[Arc<LiveClient>]) -> Result<(), RunError> {
    if clients.is_empty() {
        return Ok(());
    }
    let results = crate::runtime::block_on(async {
        let tasks: Vec<_> = clients
            .iter()
            .map(|c| {
                let c = c.clone();
                tokio::spawn(async move { c.probe().await })
            })
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(
                t.await
                    .unwrap_or_else(|e| Err(format!("the probe failed: {e}"))),
            );
        }
        out
    })
    .map_err(|e| RunError::Harness(format!("the async runtime: {e}")))?;
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(RunError::Preflight(failures))
    }
}

/// The secrets of a run (`OPENAI_API_KEY` and every configured `api_key_env`), registered for
/// redaction ([`crate::secrets`]).
pub fn load_secrets(cfg: &RunConfig) {
    crate::secrets::load_run(
        cfg.model_defs
            .values()
            .filter_map(|m| m.api_key_env.as_deref()),
    );
}
