//! `cache stats | clear`: the live models' response cache.
//!
//! Owns: the two lines it prints. Must not: know the cache's layout
//! ([`crate::destination::live::Cache`] does).

use crate::cli::args::CacheCmd;
use crate::destination::live::Cache;
use crate::error::Error;
use crate::exit;

pub fn run(cmd: CacheCmd) -> Result<i32, Error> {
    let (dir, clear) = match cmd {
        CacheCmd::Stats { cache_dir } => (cache_dir, false),
        CacheCmd::Clear { cache_dir } => (cache_dir, true),
    };
    let cache = Cache {
        dir: dir.unwrap_or_else(Cache::default_dir),
    };
    let (n, bytes) = cache.stats();
    if clear {
        cache.clear().map_err(Error::write_to(&cache.dir))?;
        say!("removed {n} cached responses from {}", cache.dir.display());
    } else {
        say!(
            "{}: {n} cached responses, {:.1} MiB",
            cache.dir.display(),
            bytes as f64 / 1048576.0
        );
    }
    Ok(exit::OK)
}
