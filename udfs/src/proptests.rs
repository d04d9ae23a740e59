//! Property tests: random Unicode (CJK, Cyrillic, Greek, Arabic, combining
//! marks, emoji, controls) fed to every kernel. Nothing panics, every span
//! is a valid char range of its text, and exact quotations are found.

use proptest::prelude::*;

use crate::locate_quote::locate_quote;
use crate::numbers_in::{numbers_in, Lang};
use crate::parse_value::{parse_value, FieldType};
use crate::quote_match::quote_match;
use crate::same_value::same_value;
use crate::sentences::sentence_spans;
use crate::token_count::Tokenizer;
use crate::verify_quote::verify_quote;

fn mixed_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "The dose was 240 mg. ",
        "患者は240人。",
        "Исследование. ",
        "Ελληνικά; ",
        "شارك 240 شخصا. ",
        "e\u{301}",
        "😀",
        "👩‍🔬 ",
        "\u{200B}",
        "\n\n",
        "\t",
        " ",
        "et al. ",
        "Fig. 3. ",
        "“quoted” ",
        "—",
        "1,204",
        "0·84",
        "...",
        "?! ",
        "\u{0}",
        "İ",
    ]);
    prop::collection::vec(
        prop_oneof![
            pieces.prop_map(String::from),
            any::<char>().prop_map(String::from)
        ],
        0..40,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn sentences_are_ordered_char_boundary_spans(t in mixed_text()) {
        let spans = sentence_spans(&t);
        let mut last = 0;
        for (a, b) in spans {
            prop_assert!(a >= last && a < b && b <= t.len());
            prop_assert!(t.is_char_boundary(a) && t.is_char_boundary(b));
            last = b;
        }
    }

    #[test]
    fn token_counts_and_prefixes_hold(t in mixed_text(), n in 0usize..50) {
        for tk in [Tokenizer::O200k, Tokenizer::Heuristic] {
            let p = tk.prefix_len(&t, n);
            prop_assert!(t.is_char_boundary(p));
            // The whole text fits in its own count.
            prop_assert_eq!(tk.prefix_len(&t, tk.count(&t)), t.len());
            let s = tk.suffix_start(&t, n);
            prop_assert!(t.is_char_boundary(s));
        }
    }

    #[test]
    fn a_quote_cut_from_the_text_is_found_exactly(t in mixed_text(), a in 0usize..200, len in 1usize..60) {
        let chars: Vec<char> = t.chars().collect();
        prop_assume!(!chars.is_empty());
        let a = a % chars.len();
        let b = (a + len).min(chars.len());
        let quote: String = chars[a..b].iter().collect();
        prop_assume!(quote.chars().any(|c| c.is_alphanumeric()));
        prop_assert_eq!(quote_match(&quote, &t), 1.0);
        let l = locate_quote(&quote, &t, 0.9);
        prop_assert!(l.is_some(), "{:?} in {:?}", quote, t);
        let l = l.unwrap_or_else(|| unreachable!());
        prop_assert!(l.exact);
        prop_assert!(l.char_start <= l.match_start && l.match_start < l.match_end && l.match_end <= l.char_end);
        prop_assert!(l.char_end <= chars.len());
        prop_assert!(same_value(&quote, &quote));
        let v = verify_quote(&quote, &t, "1", None);
        prop_assert!(v.char_start.is_none_or(|s| v.char_end.is_some_and(|e| s < e && e <= chars.len())));
    }

    #[test]
    fn numbers_are_finite_in_every_language(t in mixed_text()) {
        for lang in [None, Some(Lang::En), Some(Lang::Fr), Some(Lang::De)] {
            prop_assert!(numbers_in(&t, lang).iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn every_type_parses_or_says_why(t in mixed_text()) {
        for ty in ["integer", "number", "boolean", "date", "string", "list", "enum(a, b)"] {
            let ty = FieldType::parse(ty).unwrap_or(FieldType::String);
            if let Err(reason) = parse_value(&t, &ty) {
                prop_assert!(!reason.is_empty());
            }
        }
    }

    #[test]
    fn any_pair_scores_in_range(q in mixed_text(), t in mixed_text()) {
        let s = quote_match(&q, &t);
        prop_assert!((0.0..=1.0).contains(&s));
        if let Some(l) = locate_quote(&q, &t, 0.5) {
            prop_assert!(l.char_start <= l.char_end && l.char_end <= t.chars().count());
            prop_assert!((0.5..=1.0).contains(&l.ratio));
        }
    }

    #[test]
    fn any_reply_is_read_or_its_problems_named(t in mixed_text(), fence in 0usize..3) {
        let text = match fence { 0 => t.clone(), 1 => format!("```json\n{t}\n```"), _ => format!("```yaml\n{t}") };
        let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let r = crate::parse_reply::parse_reply(&text, &schema);
        prop_assert!(r.value.is_some() || !r.problems.is_empty());
        prop_assert!(r.problems.iter().all(|p| !p.problem.is_empty() && (p.severity == "error" || p.severity == "warning")));
    }
}
