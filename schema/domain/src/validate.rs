//! Short validation helpers the rules share: names, bounded text, ranges, reasons.

use crate::error::UserError;

/// Kubernetes-style names: lowercase alphanumerics and `-`, starting and ending
/// alphanumeric, at most `max` long (63 for namespaces, which are DNS labels).
pub fn dns_label(field: &str, value: &str, max: usize, errors: &mut Vec<UserError>) {
    let ok = !value.is_empty()
        && value.len() <= max
        && value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !value.starts_with('-')
        && !value.ends_with('-');
    if !ok {
        errors.push(UserError::invalid(
            field,
            format!("`{value}` is not a valid name: use 1–{max} lowercase letters, digits and `-`, starting and ending with a letter or digit"),
        ));
    }
}

/// Free text that must be present and bounded.
pub fn text(field: &str, value: &str, max: usize, errors: &mut Vec<UserError>) {
    if value.trim().is_empty() {
        errors.push(UserError::invalid(field, "must not be empty"));
    } else if value.chars().count() > max {
        errors.push(UserError::invalid(field, format!("must be at most {max} characters")));
    }
}

/// A name someone else's screen shows (a node, a GPU model, a pod, reported by an agent):
/// [`text`], and no control characters, which would drive a terminal (escape sequences)
/// or forge lines in a log or a CSV file.
pub fn name(field: &str, value: &str, max: usize, errors: &mut Vec<UserError>) {
    text(field, value, max, errors);
    if value.chars().any(char::is_control) {
        errors.push(UserError::invalid(field, "must not contain control characters (tabs, line breaks, escapes)"));
    }
}

pub fn range(field: &str, value: i64, min: i64, max: i64, errors: &mut Vec<UserError>) {
    if !(min..=max).contains(&value) {
        errors.push(UserError::invalid(field, format!("must be between {min} and {max}, got {value}")));
    }
}

/// A reason someone else reads (an eviction, a cordon, a rejection): 1 to 500 characters,
/// no control characters but line breaks; trimmed.
pub fn reason(field: &str, value: &str, who_reads: &str) -> crate::error::Result<String> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > 500 || value.chars().any(|c| c.is_control() && c != '\n') {
        return Err(crate::error::Error::invalid(field, format!("say why in 1 to 500 characters: {who_reads} reads it")));
    }
    Ok(value.to_owned())
}

/// Fails with all collected problems at once.
pub fn finish(errors: Vec<UserError>) -> crate::error::Result<()> {
    if errors.is_empty() { Ok(()) } else { Err(crate::error::Error::User(errors)) }
}
