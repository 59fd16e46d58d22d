//! What a call's arguments must be before it acts: every argument a parameter of the tool, every
//! required one present, each of its declared JSON type, and the string id that names the record
//! an update or delete targets. It reads arguments only; it changes no world.

use crate::spec::{Object, ToolSpec};

/// The record an update or delete names: its id parameter and the id argument.
pub(super) fn target_id(tool: &ToolSpec, args: &Object) -> Result<(String, String), String> {
    let id_param = tool.id_param().to_string();
    let id = args
        .get(&id_param)
        .and_then(|v| v.as_str())
        .ok_or_else(|| format!("missing string argument `{id_param}`"))?
        .to_string();
    Ok((id_param, id))
}

pub(super) fn check_args(tool: &ToolSpec, args: &Object) -> Result<(), String> {
    for k in args.keys() {
        if !tool.params.contains_key(k) {
            return Err(format!("unknown argument `{k}` for `{}`", tool.name));
        }
    }
    for (name, p) in &tool.params {
        match args.get(name) {
            None if p.required() => {
                return Err(format!(
                    "missing required argument `{name}` for `{}`",
                    tool.name
                ));
            }
            None => {}
            Some(v) => {
                let ok = match p.ty() {
                    "string" => v.is_string(),
                    "integer" => v.is_i64() || v.is_u64(),
                    "number" => v.is_number(),
                    "boolean" => v.is_boolean(),
                    "object" => v.is_object(),
                    "array" => v.is_array(),
                    _ => true,
                };
                if !ok {
                    return Err(format!(
                        "argument `{name}` of `{}` must be a {}",
                        tool.name,
                        p.ty()
                    ));
                }
            }
        }
    }
    Ok(())
}
