//! The plug-in's private view of the file system, set up inside its mount namespace before the
//! program starts: the run's folders hidden under empty tmpfs, the plug-in's own folder bound
//! back read-only, a private writable scratch folder as its working directory and `TMPDIR`, a
//! private `/tmp`, every other mount read-only, and the plug-in started without the privilege to
//! undo any of it.
//!
//! Owns: the shell prologue ([`PROLOGUE`]) and its arguments (paths are positional parameters,
//! never interpolated into the script), the once-per-process probe of which protections work here
//! ([`Protections`]). Must not: spawn or supervise the plug-in (`plugin::run` does) or know what a
//! run's folders are (the strategy registry and the runner pass them in).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The prologue, run as `sh -c PROLOGUE sandbox MODE LOCK LOCKBIN OWN CWD N HIDE… PROGRAM ARGS…`
/// inside the new mount namespace.
///
/// `MODE` is `run` or `probe` (print the protections that applied and exit); `LOCK` is `userns`
/// (start the program in a nested user namespace: it then holds no capability over this mount
/// namespace, whose mounts it sees locked), `setpriv` (drop every capability) or `none`, with
/// `LOCKBIN` the `unshare` or `setpriv` to do it; `OWN` is the plug-in's own file or folder to
/// keep visible read-only (empty: none); `CWD` becomes a private writable tmpfs, the working
/// directory and `TMPDIR`; the `N` `HIDE` folders (ancestors first) are covered by empty tmpfs.
/// Every step that fails is skipped: the plug-in still runs, with the protections that applied.
pub const PROLOGUE: &str = r#"
mode=$1 lock=$2 lockbin=$3 own=$4 cwd=$5 n=$6
shift 6
applied=
owndir=0
[ -d "$own" ] && owndir=1
if [ -n "$own" ] && [ -e "$own" ] && command exec 3<"$own"; then :; else own=; fi 2>/dev/null
hide=1 i=0
for h do
  [ "$i" -lt "$n" ] || break
  i=$((i + 1))
  if [ -d "$h" ]; then
    mount -t tmpfs -o size=1m,mode=0755 sandbox-hidden "$h" 2>/dev/null || hide=0
  fi
done
[ "$hide" = 1 ] && applied="$applied hide"
mount -t tmpfs -o size=256m,mode=1777 sandbox-tmp /tmp 2>/dev/null && applied="$applied tmp"
if mkdir -p "$cwd" 2>/dev/null && mount -t tmpfs -o size=256m,mode=0755 sandbox-scratch "$cwd" 2>/dev/null; then
  applied="$applied scratch"
fi
if [ -n "$own" ]; then
  if [ "$owndir" = 1 ]; then mkdir -p "$own"; else mkdir -p "${own%/*}" && { [ -e "$own" ] || : >"$own"; }; fi 2>/dev/null
  mount --bind -c /proc/self/fd/3 "$own" 2>/dev/null && applied="$applied own"
  exec 3<&-
fi
ro=1
while read -r _ _ _ _ mp _; do
  case $mp in /proc|/proc/*|/tmp) continue ;; esac
  [ "$mp" = "$cwd" ] && continue
  # A mount covered by one of ours has no path any more (and is out of reach).
  [ -e "$mp" ] || continue
  mount -o remount,bind,ro "$mp" 2>/dev/null || { ro=0; [ "$mode" = probe ] && echo "ro-failed:$mp" >&2; }
done </proc/self/mountinfo
[ "$ro" = 1 ] && applied="$applied ro"
cd "$cwd" 2>/dev/null || cd /tmp 2>/dev/null || cd /
export TMPDIR="$PWD"
shift "$n"
if [ "$mode" = probe ]; then
  [ -n "$own" ] && [ -r "$own/file" ] && applied="$applied own-readable"
  [ -e "$1" ] || [ "$n" = 0 ] || applied="$applied hidden-gone"
fi
case $lock in
  userns) "$lockbin" --user --map-root-user -- true 2>/dev/null && set -- "$lockbin" --user --map-root-user -- "$@" && applied="$applied lock" ;;
  setpriv) "$lockbin" --bounding-set=-all --inh-caps=-all --no-new-privs -- true 2>/dev/null && set -- "$lockbin" --bounding-set=-all --inh-caps=-all --no-new-privs -- "$@" && applied="$applied lock" ;;
esac
if [ "$mode" = probe ]; then
  echo "$applied"
  exit 0
fi
exec "$@"
"#;

/// Which protections apply to plug-ins on this machine (probed once per process by running the
/// prologue on a scratch layout).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protections {
    /// `sh` to run the prologue with; `None`: no private view at all (namespaces only).
    pub sh: Option<PathBuf>,
    /// The run's folders are covered by empty tmpfs.
    pub hide: bool,
    /// `/tmp` is a private tmpfs.
    pub private_tmp: bool,
    /// The working directory is a private writable tmpfs.
    pub scratch: bool,
    /// The plug-in's own folder is bound back, read-only.
    pub own_folder: bool,
    /// Every other mount is read-only.
    pub read_only: bool,
    /// How the plug-in is kept from undoing the view: `userns` or `setpriv`.
    pub lock: Option<(&'static str, PathBuf)>,
}

impl Protections {
    /// The protections as words, for messages and the documentation (empty: none).
    pub fn words(&self) -> Vec<&'static str> {
        let mut w = Vec::new();
        for (on, word) in [
            (self.hide, "run folders hidden"),
            (self.private_tmp, "private /tmp"),
            (self.scratch, "private scratch folder"),
            (self.own_folder, "own folder read-only"),
            (self.read_only, "file system read-only"),
            (self.lock.is_some(), "cannot unmount"),
        ] {
            if on {
                w.push(word);
            }
        }
        w
    }
}

/// Runs the prologue in probe mode under `unshare_cmd` (the namespace command line without the
/// program) on a scratch layout in the temp folder, and reads which protections applied.
pub fn probe(
    unshare_cmd: Option<(&Path, &[&str])>,
    user_ns: bool,
    resolve: impl Fn(&str) -> Option<PathBuf>,
) -> Protections {
    let (Some((unshare, flags)), Some(sh)) = (unshare_cmd, resolve("sh")) else {
        return Protections::default();
    };
    let base = std::env::temp_dir().join(format!(
        "compaction-eval-probe-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    let (hidden, cwd) = (base.join("hidden"), base.join("strategies"));
    let own = cwd.join("own");
    let made = std::fs::create_dir_all(&hidden)
        .and_then(|_| std::fs::create_dir_all(&own))
        .and_then(|_| std::fs::write(hidden.join("secret"), "x"))
        .and_then(|_| std::fs::write(own.join("file"), "x"));
    let lock = if user_ns {
        Some(("userns", unshare.to_path_buf()))
    } else {
        resolve("setpriv").map(|p| ("setpriv", p))
    };
    let out = made.ok().and_then(|_| {
        let mut cmd = Command::new(unshare);
        cmd.args(flags).arg(&sh).arg("-c").arg(PROLOGUE);
        cmd.args(prologue_args(
            "probe",
            lock.as_ref(),
            Some(&own),
            &cwd,
            std::slice::from_ref(&hidden),
        ));
        cmd.arg(hidden.join("secret"))
            .env_clear()
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
    });
    let _ = std::fs::remove_dir_all(&base);
    let Some(out) = out.filter(|o| o.status.success()) else {
        return Protections::default();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let has = |w: &str| text.split_whitespace().any(|x| x == w);
    Protections {
        sh: Some(sh),
        hide: has("hide") && has("hidden-gone"),
        private_tmp: has("tmp"),
        scratch: has("scratch"),
        own_folder: has("own") && has("own-readable"),
        read_only: has("ro"),
        lock: lock.filter(|_| has("lock")),
    }
}

/// The prologue's positional parameters before the program: `sandbox MODE LOCK LOCKBIN OWN CWD N
/// HIDE…`.
fn prologue_args(
    mode: &str,
    lock: Option<&(&'static str, PathBuf)>,
    own: Option<&Path>,
    cwd: &Path,
    hide: &[PathBuf],
) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["sandbox".into(), mode.into()];
    match lock {
        Some((kind, bin)) => {
            a.push((*kind).into());
            a.push(bin.into());
        }
        None => {
            a.push("none".into());
            a.push("".into());
        }
    }
    a.push(own.map(OsString::from).unwrap_or_default());
    a.push(cwd.into());
    a.push(hide.len().to_string().into());
    a.extend(hide.iter().map(OsString::from));
    a
}

/// The folders a plug-in must keep: its program and the tools the prologue needs. A folder to hide
/// that holds one of them (or is `/`) is left visible, read-only.
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/dev", "/proc",
];

fn canonical(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// The plug-in's own file or folder: its script (the program when it is a path, else the first
/// argument naming a file in `dir`); the folder holding it, unless that is the strategy folder
/// itself (then the script file alone, not the other strategies' files).
fn own_of(program: &str, resolved: &Path, args: &[String], dir: &Path) -> Option<PathBuf> {
    let script = if program.contains('/') {
        canonical(resolved)
    } else {
        args.iter()
            .filter(|a| !a.starts_with('-'))
            .map(|a| dir.join(a))
            .find(|p| p.is_file())
            .and_then(|p| canonical(&p))
    }?;
    let parent = script.parent()?;
    if parent == dir {
        Some(script)
    } else {
        Some(parent.to_path_buf())
    }
}

/// The command line that runs `program` (resolved to `resolved`) with `args` behind the prologue:
/// everything after the namespace flags, or `None` when this machine gives no private view.
pub fn command_line(
    p: &Protections,
    program: &str,
    resolved: &Path,
    args: &[String],
    dir: &Path,
    hide: &[PathBuf],
) -> Option<Vec<OsString>> {
    let sh = p.sh.as_ref()?;
    let dir = canonical(dir).unwrap_or_else(|| dir.to_path_buf());
    let own = own_of(program, resolved, args, &dir);
    let mut keep: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
    keep.push(sh.clone());
    keep.extend(p.lock.as_ref().map(|(_, b)| b.clone()));
    let prog = canonical(resolved).unwrap_or_else(|| resolved.to_path_buf());
    if !own.as_ref().is_some_and(|o| prog.starts_with(o)) {
        keep.push(prog.clone());
        keep.push(resolved.to_path_buf());
    }
    // The scratch covers the working directory: a strategy folder holding the system (`/`) gets
    // no private view rather than a broken one.
    if keep.iter().any(|k| k.starts_with(&dir)) {
        return None;
    }
    let mut folders: Vec<PathBuf> = hide
        .iter()
        .filter_map(|h| canonical(h))
        .filter(|h| h.is_dir() && *h != dir && !keep.iter().any(|k| k.starts_with(h)))
        .collect();
    folders.sort_by_key(|h| (h.components().count(), h.clone()));
    folders.dedup();
    let mut line: Vec<OsString> = vec![sh.into(), "-c".into(), PROLOGUE.into()];
    line.extend(prologue_args(
        "run",
        p.lock.as_ref(),
        own.as_deref(),
        &dir,
        &folders,
    ));
    line.push(if resolved.is_absolute() {
        resolved.into()
    } else {
        OsString::from(&prog)
    });
    line.extend(args.iter().map(OsString::from));
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protections() -> Protections {
        Protections {
            sh: Some("/bin/sh".into()),
            ..Protections::default()
        }
    }

    #[test]
    fn the_own_folder_is_the_scripts_folder_or_the_script_alone_beside_the_strategies() {
        let dir = std::env::temp_dir().join(format!("ce-sandbox-own-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("mine")).expect("mkdir");
        std::fs::write(dir.join("mine/a.py"), "").expect("script");
        std::fs::write(dir.join("b.sh"), "").expect("script");
        let dir = canonical(&dir).expect("canonical");
        let py = Path::new("/usr/bin/python3");
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            own_of("python3", py, &args(&["-u", "mine/a.py"]), &dir),
            Some(dir.join("mine"))
        );
        assert_eq!(
            own_of("./b.sh", &dir.join("b.sh"), &[], &dir),
            Some(dir.join("b.sh"))
        );
        assert_eq!(own_of("sh", py, &args(&["-c", "echo"]), &dir), None);
        // `/` and folders holding the system or the program are never covered; the folder to
        // hide is passed after the count, ancestors first.
        let line = command_line(
            &protections(),
            "sh",
            Path::new("/bin/sh"),
            &args(&["-c", "true"]),
            &dir.join("mine"),
            &[PathBuf::from("/"), PathBuf::from("/usr"), dir.clone()],
        )
        .expect("a line");
        let n = line.iter().position(|a| a == "1").expect("one folder");
        assert_eq!(line[n + 1], OsString::from(&dir));
        assert_eq!(line[n + 2], "/bin/sh");
        // The scratch never covers `/`.
        assert!(
            command_line(
                &protections(),
                "sh",
                Path::new("/bin/sh"),
                &[],
                Path::new("/"),
                &[]
            )
            .is_none()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
