//! `acplb trust` and `acplb untrust`: the user's list of workspaces whose own `composer.toml`
//! sessions honour (see ADR 0007).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use acplb_core::plugin::trust::TrustList;
use anyhow::{Context as _, bail};

use crate::cli::TrustArgs;
use crate::pipelines;

fn trust_file() -> anyhow::Result<PathBuf> {
    match pipelines::user_config_dir() {
        Some(dir) => Ok(TrustList::file(&dir)),
        None => bail!("no user config dir to keep the trust list in: set HOME or XDG_CONFIG_HOME"),
    }
}

/// `acplb trust [DIR]` and `acplb trust --list`.
pub(crate) fn trust(args: &TrustArgs) -> anyhow::Result<bool> {
    let file = trust_file()?;
    let mut list = TrustList::load(&file)?;
    let mut out = std::io::stdout().lock();
    if args.list {
        for w in list.workspaces() {
            writeln!(out, "{}", w.display())?;
        }
        if list.workspaces().is_empty() {
            writeln!(std::io::stderr(), "no trusted workspaces ({})", file.display())?;
        }
        return Ok(true);
    }
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    let real = std::fs::canonicalize(&dir).with_context(|| format!("workspace `{}`", dir.display()))?;
    if !real.is_dir() {
        bail!("`{}` is not a directory", real.display());
    }
    if list.add(real.clone())? {
        list.save(&file)?;
        writeln!(
            out,
            "trusted {}: new sessions there run its composer.toml",
            real.display()
        )?;
    } else {
        writeln!(out, "{} is already trusted", real.display())?;
    }
    writeln!(
        out,
        "see what it runs: acplb config check --workspace {}",
        real.display()
    )?;
    Ok(true)
}

/// `acplb untrust DIR`; exit 1 when it was not trusted.
pub(crate) fn untrust(dir: &Path) -> anyhow::Result<bool> {
    let file = trust_file()?;
    let mut list = TrustList::load(&file)?;
    // A workspace that is gone can still be taken off the list by the path it had.
    let real = std::fs::canonicalize(dir).or_else(|_| std::path::absolute(dir))?;
    if !list.remove(&real) {
        writeln!(
            std::io::stderr(),
            "{} is not trusted (see `acplb trust --list`)",
            real.display()
        )?;
        return Ok(false);
    }
    list.save(&file)?;
    writeln!(
        std::io::stdout(),
        "no longer trusted: {} (its composer.toml is ignored from the next session on)",
        real.display()
    )?;
    Ok(true)
}
