//! The template language of `plugins.toml`: literal text with `{variable}` slots.

/// One template line split into literal text and `{variable}` slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Var(String),
}

impl Template {
    pub(crate) fn parse(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| format!("unclosed '{{' in {text:?}"))?;
            let name = &after[..close];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                return Err(format!("bad variable {{{name}}} in {text:?}"));
            }
            parts.push(Part::Var(name.to_string()));
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return Err(format!("stray '}}' in {text:?}"));
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_string()));
        }
        Ok(Template {
            source: text.to_string(),
            parts,
        })
    }

    /// The template split on whitespace, each token its own template: how exec platforms
    /// build an argument vector in which a value can never add an argument.
    pub fn source_tokens(&self) -> Vec<Template> {
        self.source
            .split_whitespace()
            .filter_map(|t| Template::parse(t).ok())
            .collect()
    }

    /// The variables this template uses.
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v.as_str()),
            Part::Text(_) => None,
        })
    }

    /// Renders with `lookup`; a variable it does not know yields `Err(name)`.
    pub fn render(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Var(v) => out.push_str(&lookup(v).ok_or_else(|| v.clone())?),
            }
        }
        Ok(out)
    }
}
