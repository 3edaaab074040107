//! `acplb config check`: the plugin pipeline a session would get (which composer file, its
//! plugins in order, every value and where it came from), or the error with file, line and hint.

use std::io::Write;
use std::path::Path;

use acplb_core::plugin::composer::{ComposerConfig, ComposerError, Source};
use acplb_core::plugin::registry::{BuildContext, Resolved};
use anyhow::Context as _;

use crate::cli::Cli;
use crate::pipelines;

/// Prints the configuration; `Ok(false)` (exit 1) when it is invalid.
pub(crate) fn run(cli: &Cli, workspace: Option<&Path>) -> anyhow::Result<bool> {
    let cwd = match workspace {
        Some(dir) => dir.to_owned(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd).with_context(|| format!("workspace `{}`", cwd.display()))?;
    let mut out = std::io::stdout().lock();
    let explicit = pipelines::explicit_source(cli.composer.as_deref());
    let loaded = pipelines::load(explicit).and_then(|p| {
        let config = p.config_for(&cwd)?;
        Ok((p, config))
    });
    let (plugins, config) = match loaded {
        Ok(found) => found,
        Err(e) => return refuse(&e),
    };
    let Some(config) = config else {
        writeln!(out, "composer.toml: none found, so sessions run without plugins")?;
        writeln!(
            out,
            "  looked for: --composer, $ACPLB_COMPOSER, {}, {}",
            cwd.join("composer.toml").display(),
            pipelines::user_config_dir().map_or_else(
                || "(no user config dir)".to_owned(),
                |d| d.join("acplb/composer.toml").display().to_string()
            )
        )?;
        return Ok(true);
    };
    let resolutions = match plugins.build(&config, &BuildContext::new(&cwd, "")) {
        Ok((_pipeline, resolutions)) => resolutions,
        Err(e) => return refuse(&e),
    };
    print_config(&mut out, &config, &cwd, &resolutions)?;
    Ok(true)
}

fn refuse(error: &ComposerError) -> anyhow::Result<bool> {
    writeln!(std::io::stderr(), "error: {error}")?;
    Ok(false)
}

fn print_config(
    out: &mut impl Write,
    config: &ComposerConfig,
    cwd: &Path,
    resolutions: &[(String, Vec<Resolved>)],
) -> std::io::Result<()> {
    let how = match &config.source {
        Source::Flag(_) => "named by --composer",
        Source::Env(_) => "named by $ACPLB_COMPOSER",
        Source::Workspace(_) => "found in the workspace",
        Source::UserConfig(_) => "found in the user config dir",
    };
    writeln!(out, "composer.toml: {} ({how})", config.source.path().display())?;
    writeln!(out, "workspace:     {}", cwd.display())?;
    if config.plugins.is_empty() {
        return writeln!(out, "plugins:       none");
    }
    writeln!(out, "plugins, in the order they run:")?;
    let mut built = resolutions.iter().peekable();
    for (n, plugin) in config.plugins.iter().enumerate() {
        let required = if plugin.required { "required" } else { "optional" };
        writeln!(
            out,
            "  {}. {}  ({required}; {}:{})",
            n + 1,
            plugin.id,
            config.source.path().display(),
            plugin.line
        )?;
        // Resolutions come in pipeline order, without the optional plugins that failed to build.
        let Some((_, values)) = built.next_if(|(id, _)| *id == plugin.id) else {
            writeln!(out, "       skipped: it could not start (see the warning above)")?;
            continue;
        };
        let key_width = values.iter().map(|r| r.key.len()).max().unwrap_or(0);
        let value_width = values.iter().map(|r| r.value.chars().count()).max().unwrap_or(0);
        for r in values {
            writeln!(
                out,
                "       {:<key_width$} = {:<value_width$}  [{}]",
                r.key, r.value, r.origin
            )?;
        }
    }
    Ok(())
}
