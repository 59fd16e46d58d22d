//! A continuation's world and its one dispatch per [`Action`]: what a tool call, a question to
//! the user, an approval request, a retrieval and a finish do to the world, and the result the
//! destination is shown.
//!
//! Owns: the meaning of every action in a continuation (the runner's cells and the tests drive
//! destinations through it alone, so adding an action means one new arm here). Must not: count
//! steps, tokens or time against a budget (the cell does), or choose an action (destinations do).

use serde_json::json;

use super::{Action, ActionResult, SimAgent};
use crate::handoff::Handoff;
use crate::scenario::{FinishStatus, Object, Scenario};
use crate::state::RestorePoint;
use crate::world::{CallResult, Phase, World};

/// The world of one continuation, from a restore point and the handoff the destination read.
pub struct Continuation<'a> {
    world: World,
    scenario: &'a Scenario,
    handoff: &'a Handoff,
    /// Whether the handoff offers the `retrieve` tool (strategy D's); without it a retrieval is
    /// an unknown tool, as a live model would be told.
    offers_retrieve: bool,
    finish: Option<FinishStatus>,
    degraded: bool,
}

impl<'a> Continuation<'a> {
    /// A continuation in a fresh copy of the restore point's world.
    pub fn new(at: &'a RestorePoint, handoff: &'a Handoff) -> Continuation<'a> {
        Continuation {
            world: at.world.clone(),
            scenario: &at.scenario,
            handoff,
            offers_retrieve: handoff.extra_tools.iter().any(|t| t.name == "retrieve"),
            finish: None,
            degraded: false,
        }
    }

    /// Carries out one action. `None`: the continuation has ended (a finish, or no action left
    /// in the step budget); else the result the destination sees next.
    pub fn apply(&mut self, action: &Action) -> Option<ActionResult> {
        let w = &mut self.world;
        let result = match action {
            Action::Call { tool, args } => {
                to_result(&w.call(Phase::Continuation, tool, args, None, None))
            }
            Action::AskUser { question } => {
                let mut a = Object::new();
                a.insert("question".into(), json!(question));
                let answer = self.scenario.user.answer(question).to_string();
                to_result(&w.record_harness(
                    Phase::Continuation,
                    "ask_user",
                    a,
                    None,
                    Ok(json!(answer)),
                ))
            }
            Action::RequestApproval { approval_id } => {
                to_result(&w.request_approval(Phase::Continuation, approval_id))
            }
            Action::Retrieve { resource } => self.retrieve(resource),
            Action::Finish {
                status,
                report,
                degraded,
            } => {
                let mut a = Object::new();
                a.insert("status".into(), json!(status.as_str()));
                a.insert("report".into(), json!(report));
                a.insert("degraded".into(), json!(degraded));
                w.record_harness(
                    Phase::Continuation,
                    "finish",
                    a,
                    None,
                    Ok(json!("finished")),
                );
                self.finish = Some(*status);
                self.degraded = *degraded;
                return None;
            }
            Action::OutOfSteps => return None,
        };
        Some(result)
    }

    /// Strategy D's retrieval: the resource as it is now, marked `STALE` when its revision moved
    /// since the checkpoint the handoff carries.
    fn retrieve(&mut self, resource: &str) -> ActionResult {
        if !self.offers_retrieve {
            return ActionResult {
                text: "ERROR: unknown tool `retrieve`".into(),
                value: None,
                ok: false,
            };
        }
        let mut r = to_result(&self.world.retrieve(Phase::Continuation, resource));
        if let Some(seen) = self
            .handoff
            .checkpoint
            .as_ref()
            .and_then(|cp| cp.resources.iter().find(|x| x.key == resource))
            && self
                .world
                .resource(resource)
                .is_some_and(|now| now.revision != seen.revision)
        {
            r.text = format!(
                "STALE: {resource} changed since the checkpoint (revision {} then).\n{}",
                seen.revision, r.text
            );
        }
        r
    }

    /// Drives a simulated destination until it finishes or `max_actions` actions are spent;
    /// returns the number of actions taken.
    pub fn drive(&mut self, agent: &mut SimAgent, max_actions: u32) -> u32 {
        let mut last: Option<ActionResult> = None;
        let mut actions = 0;
        while actions < max_actions {
            let action = agent.act(last.as_ref());
            if action == Action::OutOfSteps {
                break;
            }
            actions += 1;
            match self.apply(&action) {
                Some(r) => last = Some(r),
                None => break,
            }
        }
        actions
    }

    /// The world as the continuation left it.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, for scoring after the continuation.
    pub fn into_world(self) -> World {
        self.world
    }

    /// How the destination finished (`None`: it did not).
    pub fn finish(&self) -> Option<FinishStatus> {
        self.finish
    }

    /// Whether the destination finished declaring the result degraded.
    pub fn degraded(&self) -> bool {
        self.degraded
    }
}

impl Action {
    /// Whether the action acts on the world for the user (a tool call or an approval request):
    /// the first such action's time is `first_action_ms`. Questions, retrievals and the finish
    /// are not.
    pub fn acts_on_world(&self) -> bool {
        matches!(self, Action::Call { .. } | Action::RequestApproval { .. })
    }
}

fn to_result(r: &CallResult) -> ActionResult {
    ActionResult {
        text: r.text(),
        value: r.output.as_ref().ok().cloned(),
        ok: r.output.is_ok(),
    }
}
