//! Flattening ACP prompt content blocks into the text and images a provider takes.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use base64::Engine as _;

use crate::provider::{ImageInput, PromptInput};

/// Why a prompt could not be turned into provider input (an invalid-params error).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PromptError {
    /// An image's data was not valid base64.
    #[error("image {index} is not valid base64: {reason}")]
    BadImage {
        /// Position of the block in the prompt.
        index: usize,
        /// The decoder's message.
        reason: String,
    },
    /// A content type this agent did not advertise.
    #[error("content block {index} has type `{kind}`, which acplb does not accept")]
    Unsupported {
        /// Position of the block in the prompt.
        index: usize,
        /// The block's type.
        kind: &'static str,
    },
    /// The prompt has no text, resource or image at all.
    #[error("the prompt is empty")]
    Empty,
}

/// Renders the blocks in order: text as is, resource links as references, embedded text
/// resources as delimited context blocks, images as separate inputs.
pub fn flatten(blocks: &[ContentBlock]) -> Result<PromptInput, PromptError> {
    let mut input = PromptInput::default();
    let mut parts: Vec<String> = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::ResourceLink(link) => {
                let title = link.title.as_deref().unwrap_or(&link.name);
                parts.push(format!("[@{title}]({})", link.uri));
            }
            ContentBlock::Resource(res) => parts.push(render_resource(&res.resource)),
            ContentBlock::Image(img) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(img.data.trim())
                    .map_err(|e| PromptError::BadImage {
                        index,
                        reason: e.to_string(),
                    })?;
                input.images.push(ImageInput {
                    mime_type: img.mime_type.clone(),
                    bytes,
                });
            }
            ContentBlock::Audio(_) => return Err(PromptError::Unsupported { index, kind: "audio" }),
            _ => {
                return Err(PromptError::Unsupported {
                    index,
                    kind: "unknown",
                });
            }
        }
    }
    input.text = join_parts(&parts);
    if input.text.trim().is_empty() && input.images.is_empty() {
        return Err(PromptError::Empty);
    }
    Ok(input)
}

/// Text and references are joined the way an editor lays them out: inline text runs together,
/// context blocks stand on their own lines.
fn join_parts(parts: &[String]) -> String {
    let mut text = String::new();
    for part in parts {
        let block = part.starts_with("<context ");
        if !text.is_empty() && (block || text.ends_with("</context>")) && !text.ends_with('\n') {
            text.push('\n');
        } else if !text.is_empty()
            && !text.ends_with(char::is_whitespace)
            && !part.starts_with(char::is_whitespace)
        {
            text.push(' ');
        }
        text.push_str(part);
    }
    text
}

fn render_resource(resource: &EmbeddedResourceResource) -> String {
    match resource {
        EmbeddedResourceResource::TextResourceContents(t) => {
            let mime = t
                .mime_type
                .as_deref()
                .map(|m| format!(" mime=\"{m}\""))
                .unwrap_or_default();
            let body = t.text.strip_suffix('\n').unwrap_or(&t.text);
            format!("<context ref=\"{}\"{mime}>\n{body}\n</context>", t.uri)
        }
        EmbeddedResourceResource::BlobResourceContents(b) => {
            format!("<context ref=\"{}\">(binary content omitted)</context>", b.uri)
        }
        _ => "<context>(unsupported resource omitted)</context>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ImageContent, ResourceLink, TextContent, TextResourceContents,
    };

    use super::*;

    fn text(s: &str) -> ContentBlock {
        ContentBlock::Text(TextContent::new(s))
    }

    #[test]
    fn text_links_and_context_blocks_in_order() {
        let blocks = vec![
            text("Explain"),
            ContentBlock::ResourceLink(ResourceLink::new("main.rs", "file:///w/src/main.rs")),
            text("using"),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}\n",
                    "file:///w/src/main.rs",
                )),
            )),
            text("please."),
        ];
        let got = flatten(&blocks).unwrap();
        assert_eq!(
            got.text,
            "Explain [@main.rs](file:///w/src/main.rs) using\n<context ref=\"file:///w/src/main.rs\">\nfn main() {}\n</context>\nplease."
        );
        assert!(got.images.is_empty());
    }

    #[test]
    fn images_are_decoded() {
        let blocks = vec![
            text("what is this"),
            ContentBlock::Image(ImageContent::new("aGk=", "image/png")),
        ];
        let got = flatten(&blocks).unwrap();
        assert_eq!(
            got.images,
            vec![ImageInput {
                mime_type: "image/png".into(),
                bytes: b"hi".to_vec()
            }]
        );
    }

    #[test]
    fn bad_base64_and_empty_prompts_are_errors() {
        let bad = vec![ContentBlock::Image(ImageContent::new("%%%", "image/png"))];
        assert!(matches!(
            flatten(&bad),
            Err(PromptError::BadImage { index: 0, .. })
        ));
        assert_eq!(flatten(&[text("  ")]), Err(PromptError::Empty));
        assert_eq!(flatten(&[]), Err(PromptError::Empty));
    }

    #[test]
    fn a_megabyte_prompt_is_kept_whole() {
        let big = "y".repeat(1 << 20);
        assert_eq!(flatten(&[text(&big)]).unwrap().text.len(), 1 << 20);
    }
}
