//! The `calculate` tool's arithmetic: the reference evaluates the expression with Python's
//! `eval` (after allowing only `0123456789+-*/(). `), then answers `str(round(float(result), 2))`.
//!
//! So this is a small Python expression evaluator: integer and float literals, `+ - * / // **`,
//! unary signs, parentheses, `()` (an empty tuple), `...` (Ellipsis) and calls (`2(3)`, which
//! fail as Python's do), with Python's precedence, its division, floor division and power rules
//! (a negative base to a fractional power is complex), its `ZeroDivisionError` and
//! `OverflowError` texts, and its syntax-error texts for the usual mistakes (`invalid syntax`,
//! `'(' was never closed`, `unmatched ')'`, `Perhaps you forgot a comma?`, leading zeros).
//! Integers are exact to 128 bits; beyond that they are carried as floats (Python's are exact).
//! Owns: that evaluator. Must not: touch the database.

use serde_json::Value;

use super::py::{PyError, PyResult, not_iterable, type_name};
use super::pyfmt::float_repr;

const ALLOWED: &str = "0123456789+-*/(). ";

/// The reference tool: the observation for `expression`, or the exception it raises.
pub fn calculate(expression: &Value) -> PyResult<String> {
    match expression {
        Value::String(s) => {
            if !s.chars().all(|c| ALLOWED.contains(c)) {
                return Ok("Error: invalid characters in expression".into());
            }
            Ok(match evaluate(s) {
                Ok(x) => x,
                Err(e) => format!("Error: {e}"),
            })
        }
        // `for char in expression` visits a list's items and a dict's keys; `char in ALLOWED`
        // is a substring test for text and a TypeError otherwise; `eval` then refuses the value.
        Value::Array(_) | Value::Object(_) => {
            let items: Vec<&Value> = match expression {
                Value::Array(items) => items.iter().collect(),
                _ => Vec::new(),
            };
            for item in items {
                match item {
                    Value::String(s) if ALLOWED.contains(s.as_str()) => {}
                    Value::String(_) => return Ok("Error: invalid characters in expression".into()),
                    other => {
                        return Err(PyError::Type(format!(
                            "'in <string>' requires string as left operand, not {}",
                            type_name(other)
                        )));
                    }
                }
            }
            if let Value::Object(map) = expression
                && map.keys().any(|k| !ALLOWED.contains(k.as_str()))
            {
                return Ok("Error: invalid characters in expression".into());
            }
            Ok("Error: eval() arg 1 must be a string, bytes or code object".into())
        }
        other => Err(not_iterable(other)),
    }
}

/// `str(round(float(eval(text)), 2))`, or the exception's text.
fn evaluate(text: &str) -> PyResult<String> {
    let source = text.trim_start_matches([' ', '\t']);
    let syntax = |msg: &str| {
        let line = if source.trim().is_empty() { 0 } else { 1 };
        PyError::Syntax(format!("{msg} (<string>, line {line})"))
    };
    let tokens = tokenize(source).map_err(|m| syntax(&m))?;
    let mut p = Parser {
        tokens: &tokens,
        at: 0,
    };
    let parsed = p
        .expr()
        .and_then(|e| match p.peek() {
            Tok::End => Ok(e),
            _ => Err(Fail::Invalid),
        })
        .map_err(|f| {
            let unclosed = paren_depth(&tokens) > 0;
            match f {
                Fail::Comma { open } if closes(&tokens, open) => {
                    syntax("invalid syntax. Perhaps you forgot a comma?")
                }
                _ if unclosed => syntax("'(' was never closed"),
                _ => syntax("invalid syntax"),
            }
        })?;
    let x = to_float(eval(&parsed)?)?;
    let rounded = if x.is_finite() {
        format!("{x:.2}").parse().unwrap_or(x)
    } else {
        x
    };
    Ok(float_repr(rounded))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(String),
    Float(String),
    Ellipsis,
    Dot,
    Op(&'static str),
    Open,
    Close,
    End,
}

/// Python's tokenizer on the allowed characters; its own errors (`unmatched ')'`, leading zeros)
/// come before any parse error, as in Python.
fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = s.chars().collect();
    let (mut out, mut i, mut depth) = (Vec::new(), 0, 0usize);
    let digits = |mut j: usize| {
        while j < c.len() && c[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    while i < c.len() {
        match c[i] {
            ' ' => i += 1,
            d if d.is_ascii_digit()
                || (d == '.' && c.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                let int_end = digits(i);
                if c.get(int_end) == Some(&'.') {
                    let end = digits(int_end + 1);
                    out.push(Tok::Float(c[i..end].iter().collect()));
                    i = end;
                } else {
                    let lit: String = c[i..int_end].iter().collect();
                    if lit.len() > 1 && lit.starts_with('0') && lit.chars().any(|d| d != '0') {
                        return Err("leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers".into());
                    }
                    out.push(Tok::Int(lit));
                    i = int_end;
                }
            }
            '.' if c.get(i + 1) == Some(&'.') && c.get(i + 2) == Some(&'.') => {
                out.push(Tok::Ellipsis);
                i += 3;
            }
            '.' => {
                out.push(Tok::Dot);
                i += 1;
            }
            '*' | '/' if c.get(i + 1) == Some(&c[i]) => {
                out.push(Tok::Op(if c[i] == '*' { "**" } else { "//" }));
                i += 2;
            }
            '*' => (out.push(Tok::Op("*")), i += 1).1,
            '/' => (out.push(Tok::Op("/")), i += 1).1,
            '+' => (out.push(Tok::Op("+")), i += 1).1,
            '-' => (out.push(Tok::Op("-")), i += 1).1,
            '(' => {
                depth += 1;
                out.push(Tok::Open);
                i += 1;
            }
            ')' => {
                if depth == 0 {
                    return Err("unmatched ')'".into());
                }
                depth -= 1;
                out.push(Tok::Close);
                i += 1;
            }
            _ => return Err("invalid syntax".into()),
        }
    }
    out.push(Tok::End);
    Ok(out)
}

fn paren_depth(tokens: &[Tok]) -> i64 {
    tokens.iter().fold(0, |d, t| match t {
        Tok::Open => d + 1,
        Tok::Close => d - 1,
        _ => d,
    })
}

/// Whether the `(` at token `open` has its `)`.
fn closes(tokens: &[Tok], open: usize) -> bool {
    let mut d = 0i64;
    for t in &tokens[open..] {
        match t {
            Tok::Open => d += 1,
            Tok::Close => {
                d -= 1;
                if d == 0 {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

#[derive(Debug)]
enum Expr {
    Int(String),
    Float(String),
    Tuple,
    Ellipsis,
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Call(Box<Expr>, Option<Box<Expr>>),
}

/// Why parsing stopped: plain invalid syntax, or two operands side by side inside the
/// parenthesis opened at token `open` (Python's "Perhaps you forgot a comma?").
enum Fail {
    Invalid,
    Comma { open: usize },
}

struct Parser<'t> {
    tokens: &'t [Tok],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        self.tokens.get(self.at).unwrap_or(&Tok::End)
    }

    fn bump(&mut self) -> Tok {
        let t = self.peek().clone();
        self.at += 1;
        t
    }

    fn expr(&mut self) -> Result<Expr, Fail> {
        let mut left = self.term()?;
        while let Tok::Op(op @ ("+" | "-")) = *self.peek() {
            self.bump();
            left = Expr::Binary(op, Box::new(left), Box::new(self.term()?));
        }
        Ok(left)
    }

    fn term(&mut self) -> Result<Expr, Fail> {
        let mut left = self.factor()?;
        while let Tok::Op(op @ ("*" | "/" | "//")) = *self.peek() {
            self.bump();
            left = Expr::Binary(op, Box::new(left), Box::new(self.factor()?));
        }
        Ok(left)
    }

    fn factor(&mut self) -> Result<Expr, Fail> {
        if let Tok::Op(op @ ("+" | "-")) = *self.peek() {
            self.bump();
            return Ok(Expr::Unary(op, Box::new(self.factor()?)));
        }
        let base = self.primary()?;
        if *self.peek() == Tok::Op("**") {
            self.bump();
            return Ok(Expr::Binary("**", Box::new(base), Box::new(self.factor()?)));
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Expr, Fail> {
        let mut e = self.atom()?;
        while *self.peek() == Tok::Open {
            let open = self.at;
            self.bump();
            let arg = self.inner(open)?;
            e = Expr::Call(Box::new(e), arg.map(Box::new));
        }
        Ok(e)
    }

    /// After a `(` at `open`: nothing or one expression, then `)`.
    fn inner(&mut self, open: usize) -> Result<Option<Expr>, Fail> {
        if *self.peek() == Tok::Close {
            self.bump();
            return Ok(None);
        }
        let e = self.expr()?;
        match self.bump() {
            Tok::Close => Ok(Some(e)),
            Tok::Int(_) | Tok::Float(_) | Tok::Ellipsis => Err(Fail::Comma { open }),
            _ => Err(Fail::Invalid),
        }
    }

    fn atom(&mut self) -> Result<Expr, Fail> {
        let open = self.at;
        match self.bump() {
            Tok::Int(s) => Ok(Expr::Int(s)),
            Tok::Float(s) => Ok(Expr::Float(s)),
            Tok::Ellipsis => Ok(Expr::Ellipsis),
            Tok::Open => Ok(self.inner(open)?.unwrap_or(Expr::Tuple)),
            _ => Err(Fail::Invalid),
        }
    }
}

/// A Python value an expression can produce. `Big` is an integer beyond 128 bits, carried as a
/// float.
#[derive(Debug, Clone, Copy)]
enum V {
    Int(i128),
    Big(f64),
    Float(f64),
    Complex(f64, f64),
    Tuple,
    Ellipsis,
}

impl V {
    fn name(self) -> &'static str {
        match self {
            V::Int(_) | V::Big(_) => "int",
            V::Float(_) => "float",
            V::Complex(..) => "complex",
            V::Tuple => "tuple",
            V::Ellipsis => "ellipsis",
        }
    }

    fn is_int(self) -> bool {
        matches!(self, V::Int(_) | V::Big(_))
    }

    /// Numeric rank: 0 int, 1 float, 2 complex; `None` for non-numbers.
    fn rank(self) -> Option<u8> {
        match self {
            V::Int(_) | V::Big(_) => Some(0),
            V::Float(_) => Some(1),
            V::Complex(..) => Some(2),
            _ => None,
        }
    }

    /// The value as a float, as Python converts an int (an int too large fails).
    fn float(self) -> PyResult<f64> {
        match self {
            V::Int(i) => Ok(i as f64),
            V::Big(f) if !f.is_finite() => Err(PyError::Overflow(
                "int too large to convert to float".into(),
            )),
            V::Big(f) | V::Float(f) => Ok(f),
            V::Complex(re, _) => Ok(re),
            _ => Ok(f64::NAN),
        }
    }

    fn complex(self) -> PyResult<(f64, f64)> {
        match self {
            V::Complex(re, im) => Ok((re, im)),
            other => Ok((other.float()?, 0.0)),
        }
    }
}

fn to_float(v: V) -> PyResult<f64> {
    match v {
        V::Int(_) | V::Big(_) | V::Float(_) => v.float(),
        other => Err(PyError::Type(format!(
            "float() argument must be a string or a real number, not '{}'",
            other.name()
        ))),
    }
}

fn eval(e: &Expr) -> PyResult<V> {
    match e {
        Expr::Int(s) => Ok(s
            .parse::<i128>()
            .map(V::Int)
            .unwrap_or_else(|_| V::Big(s.parse().unwrap_or(f64::INFINITY)))),
        Expr::Float(s) => Ok(V::Float(s.parse().unwrap_or(f64::NAN))),
        Expr::Tuple => Ok(V::Tuple),
        Expr::Ellipsis => Ok(V::Ellipsis),
        Expr::Unary(op, x) => {
            let v = eval(x)?;
            let minus = *op == "-";
            match v {
                V::Int(i) if minus => {
                    Ok(i.checked_neg().map(V::Int).unwrap_or(V::Big(-(i as f64))))
                }
                V::Big(f) if minus => Ok(V::Big(-f)),
                V::Float(f) if minus => Ok(V::Float(-f)),
                V::Complex(re, im) if minus => Ok(V::Complex(-re, -im)),
                V::Tuple | V::Ellipsis => Err(PyError::Type(format!(
                    "bad operand type for unary {op}: '{}'",
                    v.name()
                ))),
                v => Ok(v),
            }
        }
        Expr::Binary(op, a, b) => {
            let a = eval(a)?;
            let b = eval(b)?;
            binary(op, a, b)
        }
        Expr::Call(f, arg) => {
            let f = eval(f)?;
            if let Some(arg) = arg {
                eval(arg)?;
            }
            Err(PyError::Type(format!(
                "'{}' object is not callable",
                f.name()
            )))
        }
    }
}

fn binary(op: &str, a: V, b: V) -> PyResult<V> {
    let (Some(ra), Some(rb)) = (a.rank(), b.rank()) else {
        return sequence_op(op, a, b);
    };
    let rank = ra.max(rb);
    match op {
        "+" | "-" | "*" => {
            if rank == 2 {
                let ((x, y), (u, w)) = (a.complex()?, b.complex()?);
                return Ok(match op {
                    "+" => V::Complex(x + u, y + w),
                    "-" => V::Complex(x - u, y - w),
                    _ => V::Complex(x * u - y * w, x * w + y * u),
                });
            }
            if let (V::Int(x), V::Int(y)) = (a, b) {
                let r = match op {
                    "+" => x.checked_add(y),
                    "-" => x.checked_sub(y),
                    _ => x.checked_mul(y),
                };
                if let Some(r) = r {
                    return Ok(V::Int(r));
                }
            }
            let (x, y) = if rank == 0 {
                (big(a), big(b))
            } else {
                (a.float()?, b.float()?)
            };
            let r = match op {
                "+" => x + y,
                "-" => x - y,
                _ => x * y,
            };
            Ok(if rank == 0 { V::Big(r) } else { V::Float(r) })
        }
        "/" => {
            if rank == 2 {
                return complex_div(a.complex()?, b.complex()?);
            }
            if rank == 0 {
                if big(b) == 0.0 {
                    return Err(PyError::ZeroDivision("division by zero".into()));
                }
                return Ok(V::Float(big(a) / big(b)));
            }
            let (x, y) = (a.float()?, b.float()?);
            if y == 0.0 {
                return Err(PyError::ZeroDivision("float division by zero".into()));
            }
            Ok(V::Float(x / y))
        }
        "//" => {
            if rank == 2 {
                return Err(PyError::Type(format!(
                    "unsupported operand type(s) for //: '{}' and '{}'",
                    a.name(),
                    b.name()
                )));
            }
            if let (V::Int(x), V::Int(y)) = (a, b) {
                if y == 0 {
                    return Err(PyError::ZeroDivision(
                        "integer division or modulo by zero".into(),
                    ));
                }
                if let Some(q) = x.checked_div(y) {
                    let q = if (x % y != 0) && ((x < 0) != (y < 0)) {
                        q - 1
                    } else {
                        q
                    };
                    return Ok(V::Int(q));
                }
            }
            if rank == 0 {
                if big(b) == 0.0 {
                    return Err(PyError::ZeroDivision(
                        "integer division or modulo by zero".into(),
                    ));
                }
                return Ok(V::Big((big(a) / big(b)).floor()));
            }
            let (x, y) = (a.float()?, b.float()?);
            if y == 0.0 {
                return Err(PyError::ZeroDivision("float floor division by zero".into()));
            }
            Ok(V::Float(float_floor_div(x, y)))
        }
        _ => power(a, b, rank),
    }
}

/// An integer as a float, for arithmetic beyond 128 bits.
fn big(v: V) -> f64 {
    match v {
        V::Int(i) => i as f64,
        V::Big(f) => f,
        _ => f64::NAN,
    }
}

/// CPython's `float // float` (the floor of the exact quotient, via fmod).
fn float_floor_div(vx: f64, wx: f64) -> f64 {
    let m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 && ((wx < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div != 0.0 {
        let mut floordiv = div.floor();
        if div - floordiv > 0.5 {
            floordiv += 1.0;
        }
        floordiv
    } else {
        0.0_f64.copysign(vx / wx)
    }
}

fn complex_div((a, b): (f64, f64), (c, d): (f64, f64)) -> PyResult<V> {
    if c == 0.0 && d == 0.0 {
        return Err(PyError::ZeroDivision("complex division by zero".into()));
    }
    let den = c * c + d * d;
    Ok(V::Complex((a * c + b * d) / den, (b * c - a * d) / den))
}

fn power(a: V, b: V, rank: u8) -> PyResult<V> {
    if rank == 2 {
        return complex_pow(a.complex()?, b.complex()?);
    }
    if a.is_int() && b.is_int() {
        match (a, b) {
            (V::Int(x), V::Int(y)) if y >= 0 => {
                let exact = u32::try_from(y).ok().and_then(|y| x.checked_pow(y));
                return Ok(exact
                    .map(V::Int)
                    .unwrap_or_else(|| V::Big(big(a).powf(big(b)))));
            }
            _ if big(b) >= 0.0 => return Ok(V::Big(big(a).powf(big(b)))),
            _ => {}
        }
    }
    let (x, y) = (a.float()?, b.float()?);
    if y == 0.0 {
        return Ok(V::Float(1.0));
    }
    if x == 0.0 && y < 0.0 {
        return Err(PyError::ZeroDivision(
            "0.0 cannot be raised to a negative power".into(),
        ));
    }
    if x < 0.0 && y.is_finite() && y != y.floor() {
        return complex_pow((x, 0.0), (y, 0.0));
    }
    let r = x.powf(y);
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(PyError::Overflow(
            "(34, 'Numerical result out of range')".into(),
        ));
    }
    Ok(V::Float(r))
}

fn complex_pow(a: (f64, f64), b: (f64, f64)) -> PyResult<V> {
    let zero_power = || PyError::ZeroDivision("0.0 to a negative or complex power".into());
    let mul = |(x, y): (f64, f64), (u, w): (f64, f64)| (x * u - y * w, x * w + y * u);
    let r = if b.1 == 0.0 && b.0 == b.0.floor() && b.0.abs() <= 100.0 {
        // CPython multiplies out small integral powers.
        let n = b.0 as i64;
        let mut acc = (1.0, 0.0);
        let mut base = a;
        let mut k = n.unsigned_abs();
        while k > 0 {
            if k & 1 == 1 {
                acc = mul(acc, base);
            }
            base = mul(base, base);
            k >>= 1;
        }
        if n < 0 {
            match complex_div((1.0, 0.0), acc) {
                Ok(V::Complex(re, im)) => (re, im),
                _ => return Err(zero_power()),
            }
        } else {
            acc
        }
    } else if b == (0.0, 0.0) {
        (1.0, 0.0)
    } else if a == (0.0, 0.0) {
        if b.1 != 0.0 || b.0 < 0.0 {
            return Err(zero_power());
        }
        (0.0, 0.0)
    } else {
        let vabs = a.0.hypot(a.1);
        let mut len = vabs.powf(b.0);
        let at = a.1.atan2(a.0);
        let mut phase = at * b.0;
        if b.1 != 0.0 {
            len /= (at * b.1).exp();
            phase += b.1 * vabs.ln();
        }
        (len * phase.cos(), len * phase.sin())
    };
    if !(r.0.is_finite() && r.1.is_finite()) {
        return Err(PyError::Overflow("complex exponentiation".into()));
    }
    Ok(V::Complex(r.0, r.1))
}

/// Operators with a tuple or Ellipsis operand: tuples concatenate and repeat; the rest fail.
fn sequence_op(op: &str, a: V, b: V) -> PyResult<V> {
    match (op, a, b) {
        ("+", V::Tuple, V::Tuple) => Ok(V::Tuple),
        ("*", V::Tuple, n) | ("*", n, V::Tuple) if n.is_int() => Ok(V::Tuple),
        ("*", V::Tuple, other) | ("*", other, V::Tuple) => Err(PyError::Type(format!(
            "can't multiply sequence by non-int of type '{}'",
            other.name()
        ))),
        _ => {
            let op = if op == "**" { "** or pow()" } else { op };
            Err(PyError::Type(format!(
                "unsupported operand type(s) for {op}: '{}' and '{}'",
                a.name(),
                b.name()
            )))
        }
    }
}
