//! The protocol loader: any text (as TOML and as JSON) is a protocol or a
//! message naming its problems; an accepted protocol can never carry text
//! that changes the SQL rendered from it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quarry::review::Protocol;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for json in [false, true] {
        match Protocol::parse(&text, json) {
            Ok(p) => {
                for f in &p.fields {
                    assert!(
                        !f.name.is_empty()
                            && f.name
                                .chars()
                                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                        "an accepted field name that is not a column name: {:?}",
                        f.name
                    );
                }
                // The same text gives the same protocol and the same hash.
                let again = Protocol::parse(&text, json).expect("it parsed once");
                assert_eq!(p.hash(), again.hash());
                let all = serde_json::to_string(&p).expect("a protocol serialises");
                assert!(
                    !all.contains("{{") && !all.contains("}}"),
                    "a template slot in an accepted protocol"
                );
            }
            Err(msg) => assert!(!msg.trim().is_empty(), "a refusal without a message"),
        }
    }
});
