//! `acplb config check`: the plugin pipeline a session would get (which composer file, its
//! plugins in order, every value and where it came from), a workspace file ignored because the
//! workspace is not trusted, or the error with file, line and hint.

use std::io::Write;
use std::path::Path;

use acplb_core::plugin::composer::{ComposerConfig, ComposerError, Source};
use acplb_core::plugin::registry::{BuildContext, Resolved};
use acplb_core::plugin::{ComposerPipelines, Ignored};
use anyhow::Context as _;

use crate::cli::Cli;
use crate::pipelines;

/// Keys and values longer than this do not widen their column.
const MAX_COLUMN: usize = 40;

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
        let lookup = p.lookup(&cwd)?;
        Ok((p, lookup))
    });
    let (plugins, lookup) = match loaded {
        Ok(found) => found,
        Err(e) => return refuse(&e),
    };
    if let Some(ignored) = &lookup.ignored
        && !report_ignored(&mut out, &plugins, ignored, &cwd)?
    {
        return Ok(false);
    }
    let Some(config) = lookup.config else {
        if lookup.ignored.is_some() {
            writeln!(
                out,
                "composer.toml: none in use, so sessions here run without plugins"
            )?;
        } else {
            writeln!(out, "composer.toml: none found, so sessions run without plugins")?;
        }
        writeln!(
            out,
            "  looked for: --composer, $ACPLB_COMPOSER, {}{}, {}",
            cwd.join("composer.toml").display(),
            if lookup.ignored.is_some() {
                " (ignored)"
            } else {
                ""
            },
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

/// Says that the workspace's file is ignored and how to trust it, and checks it as it would
/// run once trusted; `false` when it would be refused then.
fn report_ignored(
    out: &mut impl Write,
    plugins: &ComposerPipelines,
    ignored: &Ignored,
    cwd: &Path,
) -> anyhow::Result<bool> {
    let notice = ignored.notice();
    writeln!(
        out,
        "composer.toml: {} (found in the workspace): IGNORED, the workspace is not trusted",
        ignored.file.display()
    )?;
    if let Some(e) = &ignored.trust_error {
        writeln!(out, "  the trust list could not be read: {e}")?;
    }
    writeln!(out, "  {}", notice.detail)?;
    match plugins.workspace_config(cwd) {
        Ok(Some(config)) => writeln!(
            out,
            "  once trusted it is valid: {} plugin(s): {}",
            config.plugins.len(),
            config
                .plugins
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )?,
        Ok(None) => {}
        Err(e) => {
            writeln!(std::io::stderr(), "error: once trusted, it would be refused: {e}")?;
            return Ok(false);
        }
    }
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
        Source::Workspace(_) => "found in the workspace, which is trusted",
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
        // Resolutions come in pipeline order, one per plugin (a plugin that cannot be built
        // refuses the whole file).
        let Some((_, values)) = built.next_if(|(id, _)| *id == plugin.id) else {
            continue;
        };
        let width =
            |len: &dyn Fn(&Resolved) -> usize| values.iter().map(len).max().unwrap_or(0).min(MAX_COLUMN);
        let key_width = width(&|r| r.key.chars().count());
        let value_width = width(&|r| r.value.chars().count());
        for r in values {
            writeln!(
                out,
                "       {} = {}  [{}]",
                padded(&r.key, key_width),
                padded(&r.value, value_width),
                r.origin
            )?;
        }
    }
    Ok(())
}

/// `text` padded with spaces to `width` characters. Padding is done here rather than with a
/// `{:<width$}` format argument, which panics past 65,535 ("Formatting argument out of range").
fn padded(text: &str, width: usize) -> String {
    let mut out = text.to_owned();
    out.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(text.chars().count()),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_any_length_never_panics() {
        assert_eq!(padded("ab", 4), "ab  ");
        assert_eq!(padded("abcdef", 4), "abcdef");
        assert_eq!(padded("é", 2), "é ");
        let long = "x".repeat(70_000);
        assert_eq!(padded(&long, 100_000).len(), 100_000);
    }
}
