//! What a technique says, before it is worded: a key naming the sentence and the figures it
//! quotes, in base units.
//!
//! Question: how does a technique conclude something without owning the sentence that says it?
//! Method: its analysis returns [`Text`] (a key and typed arguments: bytes, seconds, numbers,
//! names, a paired comparison's id); the guide holds the words for every key and converts
//! every unit. Answer: a change of wording is a change to the guide and a re-render.

use serde::Serialize;

use crate::keys::Key;

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

/// Something a technique says: a key, typed by its section ([`Key`]), and the figures and
/// names it quotes. The guide holds the words of every key.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    /// Which sentence, label or name.
    pub key: Key,
    /// The figures and names it quotes, by name.
    pub args: Vec<(&'static str, Arg)>,
}

impl Serialize for Text {
    fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        use serde::ser::SerializeStruct;
        let mut text = serializer.serialize_struct("Text", 2)?;
        text.serialize_field("key", self.key.id())?;
        text.serialize_field("args", &self.args)?;
        text.end()
    }
}

impl<K: Into<Key>> From<K> for Text {
    fn from(key: K) -> Self {
        Text::said(key)
    }
}

impl Text {
    /// The sentence `key`, with no arguments yet.
    pub fn said(key: impl Into<Key>) -> Self {
        Text {
            key: key.into(),
            args: Vec::new(),
        }
    }

    /// A name given by the measurement (a configuration's label, a precision's name): the
    /// guide prints it as it is.
    pub fn named(name: impl Into<String>) -> Self {
        Text::said(crate::keys::CommonKey::Name).name("name", name)
    }

    fn arg(mut self, name: &'static str, value: Arg) -> Self {
        self.args.push((name, value));
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
        self.args.iter().find(|(n, _)| *n == name).map(|(_, a)| a)
    }
}

/// The analysis types with their texts put through a function: how the guide words a
/// technique's [`crate::words::Text`] into sentences, the figures unchanged.
pub trait MapText<S> {
    /// The same value of type `T`-texted.
    type Out<T>;
    /// The same value with every text `word`ed.
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> Self::Out<T>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::CommonKey;

    #[test]
    fn a_said_text_keeps_its_arguments_by_name() {
        let t = Text::said(CommonKey::Number)
            .bytes("saved", 1024.0)
            .name("case", "chain");
        assert_eq!(t.get("saved"), Some(&Arg::Bytes(1024.0)));
        assert_eq!(t.get("case"), Some(&Arg::Name("chain".into())));
        assert_eq!(t.get("other"), None);
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.starts_with(r#"{"key":"number","args":"#), "{json}");
    }
}
