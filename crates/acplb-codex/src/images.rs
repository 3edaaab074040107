//! Prompt images as temporary files for Codex (`codex exec --image`, or local-image input on
//! the app-server), removed when the turn ends. Writing and removing them is file I/O, so both
//! run on tokio's blocking pool, never on the runtime thread the sessions share.

use std::path::PathBuf;

use acplb_core::error::ProviderError;
use acplb_core::provider::ImageInput;

/// The image files of one turn; dropping this removes them.
#[derive(Debug)]
pub(crate) struct ImageFiles {
    dir: Option<tempfile::TempDir>,
    paths: Vec<PathBuf>,
}

impl ImageFiles {
    /// Writes each image to its own file with an extension matching its MIME type, off the
    /// runtime thread.
    pub(crate) async fn write(images: &[ImageInput]) -> Result<Self, ProviderError> {
        if images.is_empty() {
            return Ok(Self {
                dir: None,
                paths: Vec::new(),
            });
        }
        let images = images.to_vec();
        tokio::task::spawn_blocking(move || Self::write_now(&images))
            .await
            .map_err(|e| ProviderError::Prepare(format!("writing prompt images stopped: {e}")))?
    }

    /// Writes the images here, blocking.
    fn write_now(images: &[ImageInput]) -> Result<Self, ProviderError> {
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
            dir: Some(dir),
            paths,
        })
    }

    /// The files, in prompt order.
    pub(crate) fn paths(&self) -> &[PathBuf] {
        &self.paths
    }
}

impl Drop for ImageFiles {
    /// Removes the folder on the blocking pool when a runtime is there to take it.
    fn drop(&mut self) {
        let Some(dir) = self.dir.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(move || drop(dir));
            }
            Err(_) => drop(dir),
        }
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

    fn jpeg() -> Vec<ImageInput> {
        vec![ImageInput {
            mime_type: "image/jpeg".into(),
            bytes: vec![1, 2, 3],
        }]
    }

    #[test]
    fn files_exist_during_the_turn_and_vanish_after() {
        let files = ImageFiles::write_now(&jpeg()).unwrap();
        let p = files.paths()[0].clone();
        assert!(p.to_string_lossy().ends_with(".jpg"));
        assert_eq!(std::fs::read(&p).unwrap(), vec![1, 2, 3]);
        drop(files);
        assert!(!p.exists());
    }

    #[tokio::test]
    async fn on_a_runtime_they_are_written_and_removed_on_the_blocking_pool() {
        let files = ImageFiles::write(&jpeg()).await.unwrap();
        let p = files.paths()[0].clone();
        assert_eq!(std::fs::read(&p).unwrap(), vec![1, 2, 3]);
        let dir = p.parent().unwrap().to_path_buf();
        drop(files);
        // The removal was handed to the blocking pool: wait for it, bounded.
        let gone = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while dir.exists() {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        })
        .await;
        assert!(gone.is_ok(), "the image folder was never removed");
    }
}
