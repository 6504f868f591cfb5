//! Aligned columns for people (`--output table`).

/// Prints `header` and `rows` as left-aligned columns two spaces apart; an empty cell is `-`.
pub fn print(header: &[&str], rows: &[Vec<String>]) {
    print!("{}", render(header, rows));
}

pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let cell = |s: &str| if s.is_empty() { "-".to_owned() } else { super::printable(s) };
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, value) in row.iter().enumerate().take(widths.len()) {
            widths[i] = widths[i].max(cell(value).chars().count());
        }
    }
    let line = |values: Vec<String>| {
        let last = values.len().saturating_sub(1);
        let mut out = String::new();
        for (i, value) in values.into_iter().enumerate() {
            if i == last {
                out.push_str(&value);
            } else {
                out.push_str(&format!("{value:<width$}  ", width = widths[i]));
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(header.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        out.push_str(&line(row.iter().map(|v| cell(v)).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up_and_empty_cells_show_a_dash() {
        let out = super::render(&["ID", "NAME"], &[vec!["1".into(), "train".into()], vec!["22".into(), String::new()]]);
        assert_eq!(out, "ID  NAME\n1   train\n22  -\n");
        // An agent's name cannot drive the terminal.
        let hostile = super::render(&["NODE"], &[vec!["n1\u{1b}]8;;http://evil\u{7}x\u{1b}[2J".into()]]);
        assert!(!hostile.chars().any(|c| c.is_control() && c != '\n'), "{hostile:?}");
    }
}
