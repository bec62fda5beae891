//! What a technique says, before it is worded: a key naming the sentence and the figures it
//! quotes, in base units.
//!
//! Question: how does a technique conclude something without owning the sentence that says it?
//! Method: its analysis returns [`Text`] (a key and typed arguments: bytes, seconds, numbers,
//! names, a paired comparison's id); the guide holds the words for every key and converts
//! every unit. Answer: a change of wording is a change to the guide and a re-render.

use serde::Serialize;

/// A figure or name a sentence quotes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Arg {
    /// A byte count.
    Bytes(f64),
    /// A duration in seconds.
    Seconds(f64),
    /// A plain number (a count, a ratio, a percentage): the words choose its precision.
    Number(f64),
    /// The name of a configuration or part (`layer norm`, `bf16`).
    Name(String),
    /// The id of one of the record's paired comparisons: the words quote its outcome.
    Paired(String),
    /// Another text, worded in place.
    Text(Box<Text>),
    /// Texts worded in turn and listed.
    List(Vec<Text>),
}

/// Something a technique says: a fixed label, or a sentence the guide words from its key and
/// arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Text {
    /// A short fixed name the technique gives a chart's axis, line or row (`batch size`).
    Label(&'static str),
    /// The sentence the guide keeps under `key`, quoting `args`.
    Said {
        /// Which sentence: unique within the technique (`case-saving`).
        key: &'static str,
        /// The figures and names it quotes, by name.
        args: Vec<(&'static str, Arg)>,
    },
}

impl From<&'static str> for Text {
    fn from(label: &'static str) -> Self {
        Text::Label(label)
    }
}

impl Text {
    /// The sentence `key`, with no arguments yet.
    pub fn said(key: &'static str) -> Self {
        Text::Said {
            key,
            args: Vec::new(),
        }
    }

    fn arg(mut self, name: &'static str, value: Arg) -> Self {
        if let Text::Said { args, .. } = &mut self {
            args.push((name, value));
        }
        self
    }

    /// Quotes `bytes` as `name`.
    pub fn bytes(self, name: &'static str, bytes: f64) -> Self {
        self.arg(name, Arg::Bytes(bytes))
    }

    /// Quotes `seconds` as `name`.
    pub fn seconds(self, name: &'static str, seconds: f64) -> Self {
        self.arg(name, Arg::Seconds(seconds))
    }

    /// Quotes the number `value` as `name`.
    pub fn number(self, name: &'static str, value: impl Into<f64>) -> Self {
        self.arg(name, Arg::Number(value.into()))
    }

    /// Quotes a count as `name`.
    pub fn count(self, name: &'static str, value: impl TryInto<u64>) -> Self {
        let value = value.try_into().map_or(f64::NAN, |v| v as f64);
        self.arg(name, Arg::Number(value))
    }

    /// Quotes the name `value` as `name`.
    pub fn name(self, name: &'static str, value: impl Into<String>) -> Self {
        self.arg(name, Arg::Name(value.into()))
    }

    /// Quotes the serialised name of `variant` (an enum's kebab-case id) as `name`.
    pub fn variant(self, name: &'static str, variant: impl Serialize) -> Self {
        let id = serde_json::to_value(variant)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        self.arg(name, Arg::Name(id))
    }

    /// Quotes the outcome of the paired comparison `id` as `name`.
    pub fn paired(self, name: &'static str, id: impl Into<String>) -> Self {
        self.arg(name, Arg::Paired(id.into()))
    }

    /// Quotes another text as `name`.
    pub fn text(self, name: &'static str, text: impl Into<Text>) -> Self {
        self.arg(name, Arg::Text(Box::new(text.into())))
    }

    /// Quotes the texts `items` as `name`, a list.
    pub fn list(self, name: &'static str, items: Vec<Text>) -> Self {
        self.arg(name, Arg::List(items))
    }

    /// The argument `name`, where given.
    pub fn get(&self, name: &str) -> Option<&Arg> {
        match self {
            Text::Label(_) => None,
            Text::Said { args, .. } => args.iter().find(|(n, _)| *n == name).map(|(_, a)| a),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_said_text_keeps_its_arguments_by_name() {
        let t = Text::said("saving")
            .bytes("saved", 1024.0)
            .name("case", "chain");
        assert_eq!(t.get("saved"), Some(&Arg::Bytes(1024.0)));
        assert_eq!(t.get("case"), Some(&Arg::Name("chain".into())));
        assert_eq!(t.get("other"), None);
        assert_eq!(Text::from("batch size").get("saved"), None);
    }
}
