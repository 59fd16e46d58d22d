#!/usr/bin/env python3
"""Example plug-in compactor for compaction-eval (standard library only).

Reads the interrupted state (compaction-eval/state/4) on stdin and writes a checkpoint
(compaction-eval/handoff/1) on stdout. In a compaction chain (run --cycles N) the state holds its
previous handoff (`previous_handoff`) and only the events since: it carries the previous
checkpoint forward as it was and adds what the new events say (carry_forward). It is deliberately simple: it keeps every user message and
agent message with its kind and origin, every write operation with its status and idempotency key,
every observed resource with a short excerpt, and records what it shortens in derivation.omissions.
The state holds only what the source agent saw: a call's outcome is ok, error or timed_out (a
timeout never says whether it committed), and no tool says which tool reconciles it, so the tool to
reconcile a timed-out write through is inferred from the tool definitions (reconciling_tool).
Use it as a template for your own compactor.
"""
import json
import sys

EXCERPT = 300
NEGATIVE = (" do not ", " don't ", " never ", " must not ", " only ", " no ", " not ", " without ")


def kind_of_user(text):
    padded = " " + text.lower() + " "
    return "constraint" if any(cue in padded for cue in NEGATIVE) else "instruction"


def sentences(text):
    """Splits on ., ! or ? followed by white space (so "4.2" and "a.example" stay whole)."""
    out, cur = [], ""
    flat = " ".join(text.split())
    for i, ch in enumerate(flat):
        cur += ch
        at_end = i + 1 == len(flat) or flat[i + 1] == " "
        if ch in ".!?" and at_end and not cur.rstrip().endswith(("e.g.", "i.e.", "P.S.")):
            if cur.strip():
                out.append(cur.strip())
            cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out


VERBS = {"find", "get", "list", "lookup", "look", "search", "read", "by", "key", "status", "create",
         "open", "issue", "run", "send", "update", "delete", "add", "set", "make", "new"}


def related(a, b):
    """Two tool names share a word, or one word is a stem (4+ letters) of the other."""
    wa = [w for w in a.split("_") if w and w not in VERBS]
    wb = [w for w in b.split("_") if w and w not in VERBS]
    return any(x == y or (len(x) >= 4 and y.startswith(x)) or (len(y) >= 4 and x.startswith(y))
               for x in wa for y in wb)


def reconciling_tool(tools, name):
    """The read-only tool the write tool's description names; else the one read-only tool taking
    the write tool's idempotency-key parameter whose name is related to the write tool's."""
    w = tools.get(name)
    if w is None:
        return None
    reads = [t for t in tools.values() if t["read_only"] and t["name"] != name]
    words = set("".join(c if c.isalnum() or c == "_" else " " for c in w["description"]).split())
    named = [t["name"] for t in reads if t["name"] in words]
    if len(named) == 1:
        return named[0]
    param = w.get("idempotency_key_param")
    if not param:
        return None
    keyed = [t["name"] for t in reads
             if param in (t["parameters"].get("properties") or {}) and related(t["name"], name)]
    return keyed[0] if len(keyed) == 1 else None


def main():
    state = json.load(sys.stdin)
    events = state["events"]
    tools = {t["name"]: t for t in state["tools"]}
    statements, operations, omissions, stops, questions = [], [], [], [], []
    focus = state["task"]["objective"]
    for e in events:
        kind, origin, ref, text = e["kind"], e["origin"], e["id"], e["text"]
        if kind == "user":
            for s in sentences(text):
                statements.append({"kind": kind_of_user(s), "text": s, "origin": "user", "ref": ref,
                                   "verification": {"state": "verified"}})
        elif kind in ("plan", "decision"):
            statements.append({"kind": "decision", "text": text, "origin": "agent", "ref": ref,
                               "verification": {"state": "verified"}})
            focus = text
        elif kind == "hypothesis":
            statements.append({"kind": "hypothesis", "text": text, "origin": "agent", "ref": ref,
                               "verification": {"state": "unverified", "revalidate": "before_use"}})
            questions.append("Unverified: " + text)
        elif kind == "report":
            statements.append({"kind": "observation", "text": text, "origin": "agent", "ref": ref,
                               "verification": {"state": "unverified"}})
        elif kind == "approval":
            statements.append({"kind": "observation", "text": text, "origin": origin, "ref": ref,
                               "verification": {"state": "verified"}})
        elif kind == "call":
            call = e["call"]
            tool = tools.get(call["tool"], {"read_only": True, "effect": ""})
            writes = not tool["read_only"]
            if writes and call["outcome"] != "error":
                unknown = call["outcome"] == "timed_out"
                via = reconciling_tool(tools, call["tool"])
                operations.append({
                    "ref": ref, "tool": call["tool"], "effect": tool["effect"],
                    "status": "unknown" if unknown else "committed",
                    "idempotency_key": call.get("idempotency_key"),
                    "args": call["args"],
                    "resume": "reconcile_first" if unknown else "do_not_repeat",
                    "reconcile_with": via,
                })
                if unknown:
                    stops.append("%s (key %s) timed out: its outcome is unknown; reconcile through %s before any retry."
                                 % (call["tool"], call.get("idempotency_key"), via))
            elif call.get("resource") is None:
                omissions.append({"what": "output of %s (%s)" % (call["tool"], ref),
                                  "reason": "tool output not carried",
                                  "recoverable_from": "call %s %s" % (call["tool"], json.dumps(call["args"]))})
    resources = []
    for r in state["resources"]:
        excerpt = r["text"][:EXCERPT]
        resources.append({"key": r["key"], "revision": r["revision"], "digest": r["digest"],
                          "observed_at": r["observed_at"], "external": r["external"], "source": r.get("source"),
                          "excerpt": excerpt, "verification": {"state": "verified"}})
        if len(r["text"]) > EXCERPT:
            omissions.append({"what": "the rest of %s" % r["key"], "reason": "excerpt of %d characters" % EXCERPT,
                              "recoverable_from": "%s@%d" % (r["key"], r["revision"])})
        if r["external"]:
            statements.append({"kind": "external", "text": r["text"][-EXCERPT:], "origin": "external:" + (r.get("source") or r["key"]),
                               "ref": "%s@%d" % (r["key"], r["revision"]), "verification": {"state": "unverified"}})
    for r in resources:
        if r["source"] is None:
            del r["source"]
    for op in operations:
        for k in ("idempotency_key", "reconcile_with"):
            if op[k] is None:
                del op[k]
    g = state["task"]["governed"]
    envelope = {k: g[k] for k in ("tenant_id", "principal_id", "authorization_mode", "policy_version") if k in g}
    for k in ("delegated_principal_id", "delegated_scope"):
        if g.get(k):
            envelope[k] = g[k]
    envelope["capabilities"] = g.get("capabilities", {})
    envelope["source_event_range"] = [events[0]["id"], events[-1]["id"]] if events else ["", ""]
    checkpoint = {
        "format": "compaction-eval/handoff/1",
        "objective": state["task"]["objective"],
        "envelope": envelope,
        "stop_conditions": stops,
        "open_questions": questions,
        "statements": statements,
        "operations": operations,
        "resources": resources,
        "success_criteria": [state["task"]["objective"]],
        "focus": focus,
        "next_steps": [s.replace(": its outcome is unknown; reconcile", "; reconcile") for s in stops] + ["Continue from the focus."],
        "derivation": {"transformations": [], "omissions": omissions},
    }
    previous = (state.get("previous_handoff") or {}).get("checkpoint")
    if previous:
        checkpoint = carry_forward(previous, checkpoint)
    json.dump(checkpoint, sys.stdout)


def carry_forward(prev, new):
    """The previous checkpoint as it was (statements with their kind and origin, operations with
    their status, omissions), the new events' checkpoint added; a resource read again replaces
    the older reading, and the focus moves only with a new decision."""
    out = dict(prev)
    out["envelope"] = dict(new["envelope"])
    out["envelope"]["source_event_range"] = [prev["envelope"]["source_event_range"][0],
                                             new["envelope"]["source_event_range"][1]
                                             or prev["envelope"]["source_event_range"][1]]
    for key in ("stop_conditions", "open_questions", "statements", "operations"):
        out[key] = prev.get(key, []) + [x for x in new.get(key, []) if x not in prev.get(key, [])]
    keys = [r["key"] for r in new["resources"]]
    out["resources"] = [r for r in prev.get("resources", []) if r["key"] not in keys] + new["resources"]
    if new["focus"] != new["objective"]:
        out["focus"] = new["focus"]
    out["next_steps"] = [s for s in prev.get("next_steps", []) if s != "Continue from the focus."] + new["next_steps"]
    derivation = prev.get("derivation", {})
    out["derivation"] = {
        "transformations": derivation.get("transformations", []) + new["derivation"]["transformations"],
        "omissions": derivation.get("omissions", []) + new["derivation"]["omissions"],
    }
    return out


if __name__ == "__main__":
    main()
