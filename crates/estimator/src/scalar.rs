//! The numbers the decoder rules compute with: `f64`, or [`Sym`], which records the same
//! arithmetic as a [`Program`] the guide's calculator runs in the reader's browser.
//!
//! Question: how does the page compute the estimator's rules for a reader's own shape without a
//! second, hand-written copy of them?
//! Method: the rules ([`crate::decoder`]) are written once, generic over [`Scalar`]; run on
//! `f64` they are the estimator, run on [`Sym`] they emit every operation in order, as data: a
//! list of nodes, each an operation on earlier ones. The page's evaluator is a loop over those
//! nodes (a dozen lines that know no rule).
//! Answer: the estimator and the calculator compute the same operations in the same order, so
//! their doubles agree to the bit (a test runs the programs in Rust; the browser test runs them
//! in the page).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::ops::{Add, Div, Mul, Sub};

use serde::Serialize;
use serde_json::{json, Value};

/// A number the rules compute with.
pub trait Scalar:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + Div<f64, Output = Self>
{
    /// A constant.
    fn num(x: f64) -> Self;
    /// The larger of the two.
    fn max(self, other: Self) -> Self;
    /// Rounded down.
    fn floor(self) -> Self;
    /// `then` where this is above zero, else `otherwise`.
    fn positive_or(self, then: Self, otherwise: Self) -> Self;
}

impl Scalar for f64 {
    fn num(x: f64) -> Self {
        x
    }

    fn max(self, other: Self) -> Self {
        f64::max(self, other)
    }

    fn floor(self) -> Self {
        f64::floor(self)
    }

    fn positive_or(self, then: Self, otherwise: Self) -> Self {
        if self > 0.0 {
            then
        } else {
            otherwise
        }
    }
}

/// One recorded operation.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Constant(f64),
    Input(&'static str),
    Binary(&'static str, u32, u32),
    Floor(u32),
    PositiveOr(u32, u32, u32),
}

impl Node {
    /// The node as the page reads it: `["c", 2]`, `["in", "d_model"]`, `["+", 3, 4]`,
    /// `["floor", 5]`, `["pos", 6, 7, 8]`.
    fn to_json(&self) -> Value {
        match self {
            Node::Constant(x) => json!(["c", x]),
            Node::Input(name) => json!(["in", name]),
            Node::Binary(op, a, b) => json!([op, a, b]),
            Node::Floor(a) => json!(["floor", a]),
            Node::PositiveOr(c, a, b) => json!(["pos", c, a, b]),
        }
    }
}

#[derive(Default)]
struct Tape {
    nodes: Vec<Node>,
    inputs: HashMap<&'static str, u32>,
}

thread_local! {
    static TAPE: RefCell<Tape> = RefCell::new(Tape::default());
}

/// A number the rules compute symbolically: the index of its node on this thread's tape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sym(u32);

impl Sym {
    fn push(node: Node) -> Self {
        TAPE.with(|t| {
            let mut t = t.borrow_mut();
            t.nodes.push(node);
            Sym(t.nodes.len() as u32 - 1)
        })
    }

    /// The program's input `name` (one node however often it is asked for).
    pub fn input(name: &'static str) -> Self {
        if let Some(i) = TAPE.with(|t| t.borrow().inputs.get(name).copied()) {
            return Sym(i);
        }
        let s = Self::push(Node::Input(name));
        TAPE.with(|t| t.borrow_mut().inputs.insert(name, s.0));
        s
    }

    fn binary(op: &'static str, a: Sym, b: Sym) -> Self {
        Self::push(Node::Binary(op, a.0, b.0))
    }
}

macro_rules! sym_op {
    ($trait:ident, $method:ident, $op:literal) => {
        impl $trait for Sym {
            type Output = Sym;
            fn $method(self, other: Sym) -> Sym {
                Sym::binary($op, self, other)
            }
        }
        impl $trait<f64> for Sym {
            type Output = Sym;
            fn $method(self, other: f64) -> Sym {
                Sym::binary($op, self, Sym::num(other))
            }
        }
    };
}

sym_op!(Add, add, "+");
sym_op!(Sub, sub, "-");
sym_op!(Mul, mul, "*");
sym_op!(Div, div, "/");

impl Scalar for Sym {
    fn num(x: f64) -> Self {
        Self::push(Node::Constant(x))
    }

    fn max(self, other: Self) -> Self {
        Sym::binary("max", self, other)
    }

    fn floor(self) -> Self {
        Self::push(Node::Floor(self.0))
    }

    fn positive_or(self, then: Self, otherwise: Self) -> Self {
        Self::push(Node::PositiveOr(self.0, then.0, otherwise.0))
    }
}

/// A rule recorded as data: nodes in the order they are computed (each an operation on
/// earlier nodes, a constant or a named input) and the nodes that are the rule's outputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Program {
    /// The nodes: `["c", 2]` a constant, `["in", "d_model"]` an input, `["+", 3, 4]` (`-`, `*`,
    /// `/`, `max`) an operation on earlier nodes, `["floor", 5]`, `["pos", 6, 7, 8]` (7 where 6 is
    /// above zero, else 8).
    pub nodes: Vec<Value>,
    /// The outputs by name: their nodes' indices.
    pub outputs: BTreeMap<&'static str, u32>,
}

/// Records what `rule` computes from its inputs ([`Sym::input`]) as a program.
pub fn record(rule: impl FnOnce() -> Vec<(&'static str, Sym)>) -> Program {
    TAPE.with(|t| *t.borrow_mut() = Tape::default());
    let outputs = rule().into_iter().map(|(name, s)| (name, s.0)).collect();
    let nodes = TAPE.with(|t| std::mem::take(&mut *t.borrow_mut()).nodes);
    Program {
        nodes: nodes.iter().map(Node::to_json).collect(),
        outputs,
    }
}

#[cfg(test)]
impl Program {
    /// Runs the program on `inputs` as the page's evaluator does (for the tests that hold the
    /// programs to the estimator): `None` where an input is missing or a node is malformed.
    pub fn run(&self, inputs: &BTreeMap<&str, f64>) -> Option<BTreeMap<&'static str, f64>> {
        let mut values: Vec<f64> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let at = |i: usize| {
                node.get(i)
                    .and_then(Value::as_u64)
                    .map(|j| values[j as usize])
            };
            let op = node.get(0)?.as_str()?;
            let value = match op {
                "c" => node.get(1)?.as_f64()?,
                "in" => *inputs.get(node.get(1)?.as_str()?)?,
                "floor" => at(1)?.floor(),
                "pos" => at(1)?.positive_or(at(2)?, at(3)?),
                _ => {
                    let (a, b) = (at(1)?, at(2)?);
                    match op {
                        "+" => a + b,
                        "-" => a - b,
                        "*" => a * b,
                        "/" => a / b,
                        "max" => a.max(b),
                        _ => return None,
                    }
                }
            };
            values.push(value);
        }
        Some(
            self.outputs
                .iter()
                .map(|(&name, &i)| (name, values[i as usize]))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule<T: Scalar>(a: T, b: T) -> T {
        (a * 2.0 + b).max(b - a).floor() + (a - b).positive_or(a, b) / 4.0
    }

    #[test]
    fn a_recorded_rule_computes_what_the_rule_computes() {
        let program = record(|| vec![("out", rule(Sym::input("a"), Sym::input("b")))]);
        for (a, b) in [(1.5, 2.0), (7.0, -3.25), (0.0, 0.0), (1e12, 3.0)] {
            let inputs = BTreeMap::from([("a", a), ("b", b)]);
            let out = program.run(&inputs).unwrap()["out"];
            assert_eq!(out.to_bits(), rule(a, b).to_bits(), "{a} {b}");
        }
        assert!(program.run(&BTreeMap::from([("a", 1.0)])).is_none());
    }
}
