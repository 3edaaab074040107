//! Prompt images as temporary files for `codex exec --image`, removed when the turn ends.

use std::path::PathBuf;

use acplb_core::error::ProviderError;
use acplb_core::provider::ImageInput;

/// The image files of one turn; dropping this removes them.
#[derive(Debug)]
pub(crate) struct ImageFiles {
    _dir: Option<tempfile::TempDir>,
    paths: Vec<PathBuf>,
}

impl ImageFiles {
    /// Writes each image to its own file with an extension matching its MIME type.
    pub(crate) fn write(images: &[ImageInput]) -> Result<Self, ProviderError> {
        if images.is_empty() {
            return Ok(Self {
                _dir: None,
                paths: Vec::new(),
            });
        }
        let dir = tempfile::Builder::new()
            .prefix("acplb-images-")
            .tempdir()
            .map_err(|e| ProviderError::Prepare(format!("cannot create a folder for prompt images: {e}")))?;
        let mut paths = Vec::with_capacity(images.len());
        for (i, image) in images.iter().enumerate() {
            let path = dir
                .path()
                .join(format!("image-{}.{}", i + 1, extension(&image.mime_type)));
            std::fs::write(&path, &image.bytes)
                .map_err(|e| ProviderError::Prepare(format!("cannot write prompt image {}: {e}", i + 1)))?;
            paths.push(path);
        }
        Ok(Self {
            _dir: Some(dir),
            paths,
        })
    }

    /// The files, in prompt order.
    pub(crate) fn paths(&self) -> &[PathBuf] {
        &self.paths
    }
}

fn extension(mime: &str) -> &'static str {
    match mime {
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "png",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_exist_during_the_turn_and_vanish_after() {
        let imgs = vec![ImageInput {
            mime_type: "image/jpeg".into(),
            bytes: vec![1, 2, 3],
        }];
        let files = ImageFiles::write(&imgs).unwrap();
        let p = files.paths()[0].clone();
        assert!(p.to_string_lossy().ends_with(".jpg"));
        assert_eq!(std::fs::read(&p).unwrap(), vec![1, 2, 3]);
        drop(files);
        assert!(!p.exists());
    }
}
