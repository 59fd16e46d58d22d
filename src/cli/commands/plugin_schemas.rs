//! `plugin-schemas`: write the plug-in protocol's JSON Schemas into a folder.
//!
//! Owns: the folder and one line per file written. Must not: define the schemas
//! ([`crate::plugin::protocol::schemas`] does).

use crate::cli::args::PluginSchemasArgs;
use crate::error::Error;
use crate::exit;

pub fn run(args: &PluginSchemasArgs) -> Result<i32, Error> {
    let out_dir = &args.out_dir;
    std::fs::create_dir_all(out_dir).map_err(Error::write_to(out_dir))?;
    for (name, text) in crate::plugin::protocol::schemas() {
        let p = out_dir.join(name);
        std::fs::write(&p, text).map_err(Error::write_to(&p))?;
        say!("wrote {}", p.display());
    }
    Ok(exit::OK)
}
