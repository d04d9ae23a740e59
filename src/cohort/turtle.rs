//! The cohort knowledge graph as Turtle, in the patterns of the Study Cohort
//! Ontology's hand-made Table 1 graph
//! (`../shared/data/sco/ontology-repo__KnowledgeGraph_Table1KG.ttl`):
//!
//! - a study: `owl:NamedIndividual, sco:ClinicalTrial`, `sio:hasParticipant`
//!   each arm;
//! - an arm (column template): an `owl:Class, sco:StudyArm` (or
//!   `sco:ControlArm` / `sco:InterventionArm`), `rdfs:subClassOf
//!   sio:StudySubject`, `sio:isParticipantIn` the study, `sio:hasAttribute
//!   [a sco:PopulationSize; sio:hasValue N]`;
//! - a continuous characteristic (row template): `sio:hasAttribute [a
//!   sco:SubjectCharacteristic (and sio:Age, sio:Weight, cmo:… when
//!   known); rdfs:label …; sio:hasUnit […]; sio:hasAttribute [a sio:Mean;
//!   sio:hasValue 56.7], [a sio:StandardDeviation; …]]`, an interval as
//!   `[a obo:STATO_0000164; sio:hasAttribute [a sio:MinimalValue …],
//!   [a sio:MaximalValue …]]`;
//! - a category (sub-population): an `owl:Class` that is `rdfs:subClassOf`
//!   the arm and an `owl:Restriction` on `sio:hasAttribute`, with
//!   `sco:PopulationSize` and `sio:Percentage … sio:inRelationTo` the arm.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::tokens::Measure;
use super::Item;

/// The prefixes of the SCO graph.
pub const PREFIXES: &str = "\
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix dct: <http://purl.org/dc/terms/> .
@prefix sio: <http://semanticscience.org/resource/> .
@prefix sco: <https://purl.org/heals/sco/> .
@prefix sco-i: <https://idea.tw.rpi.edu/projects/heals/studycohort_individuals/> .
@prefix cmo: <http://purl.org/twc/ontologies/cmo.owl/#> .
@prefix ncit: <http://purl.obolibrary.org/obo/NCIT_> .
@prefix obo: <http://purl.obolibrary.org/obo/> .
@prefix quarry: <https://quarry.invalid/ns#> .
";

/// A Turtle string literal.
fn lit(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A number as a Turtle decimal literal (always with a point, so it is
/// `xsd:decimal` and compares as a number in SPARQL).
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{:.1}", v)
    } else {
        format!("{v}")
    }
}

/// A local name for `sco-i:`: letters, digits and underscores.
fn slug(s: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            if up {
                out.push(c.to_ascii_uppercase());
            } else {
                out.push(c);
            }
            up = false;
        } else {
            up = true;
        }
    }
    if out.is_empty() {
        out.push('X');
    }
    out
}

fn measure_class(m: Measure) -> &'static str {
    match m {
        Measure::Mean => "sio:Mean",
        Measure::Sd => "sio:StandardDeviation",
        Measure::Se => "sio:StandardError",
        Measure::Median => "sio:Median",
        Measure::GeometricMean => "sio:GeometricMean",
        Measure::Count | Measure::PopulationSize => "sco:PopulationSize",
        Measure::Percent => "sio:Percentage",
        _ => "sio:Attribute",
    }
}

/// Classes for characteristics the SCO graph names, by keyword.
fn characteristic_class(label: &str) -> Option<&'static str> {
    let l = label.to_lowercase();
    let words: Vec<&str> = l
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    Some(if has("age") {
        "sio:Age"
    } else if has("weight") && !l.contains("birth") {
        "sio:Weight"
    } else if has("bmi") || l.contains("body mass index") {
        "cmo:0000105"
    } else if l.contains("systolic") {
        "cmo:0000004"
    } else if l.contains("diastolic") {
        "cmo:0000005"
    } else if has("hba1c") || l.contains("glycated") {
        "ncit:C64849"
    } else {
        return None;
    })
}

/// Writes the graph of one document's items.
pub fn write_document(out: &mut String, document_id: &str, title: &str, items: &[Item]) {
    let doc = &document_id[..document_id.len().min(16)];
    let study = format!("sco-i:Study_{doc}");
    // Arms in order of first appearance, per table.
    let mut arms: Vec<(String, String)> = Vec::new(); // (table, arm)
    for it in items {
        if let Some(a) = &it.arm {
            let k = (it.table_id.clone(), a.clone());
            if !arms.contains(&k) {
                arms.push(k);
            }
        }
    }
    let arm_iri = |t: &str, a: &str| format!("sco-i:Arm_{doc}_{}_{}", slug(t), slug(a));
    let _ = writeln!(
        out,
        "{study}\n    a owl:NamedIndividual, sco:ClinicalTrial ;"
    );
    let _ = writeln!(out, "    rdfs:label {} ;", lit(title));
    let _ = writeln!(out, "    dct:identifier {} ;", lit(document_id));
    if arms.is_empty() {
        let _ = writeln!(
            out,
            "    rdfs:comment \"no baseline table was interpreted\" .\n"
        );
        return;
    }
    let parts: Vec<String> = arms.iter().map(|(t, a)| arm_iri(t, a)).collect();
    let _ = writeln!(out, "    sio:hasParticipant {} .\n", parts.join(", "));
    for (t, a) in &arms {
        let iri = arm_iri(t, a);
        let mine: Vec<&Item> = items
            .iter()
            .filter(|i| i.arm.as_deref() == Some(a) && &i.table_id == t)
            .collect();
        let lower = a.to_lowercase();
        let kind = if [
            "placebo",
            "control",
            "usual care",
            "no intervention",
            "standard care",
        ]
        .iter()
        .any(|k| lower.contains(k))
        {
            "sco:ControlArm"
        } else if ["total", "all ", "overall", "all participants", "entire"]
            .iter()
            .any(|k| lower == k.trim() || lower.starts_with(k))
        {
            "sco:StudyArm"
        } else {
            "sco:InterventionArm"
        };
        let _ = writeln!(out, "{iri}\n    a owl:Class, {kind} ;");
        let _ = writeln!(out, "    rdfs:subClassOf sio:StudySubject ;");
        let _ = writeln!(out, "    rdfs:label {} ;", lit(a));
        let _ = writeln!(out, "    quarry:table {} ;", lit(t));
        let mut attrs: Vec<String> = Vec::new();
        let size = mine.iter().find_map(|i| i.arm_n).or_else(|| {
            mine.iter()
                .find(|i| i.measure == Measure::PopulationSize)
                .and_then(|i| i.value)
                .map(|v| v as i64)
        });
        if let Some(n) = size {
            attrs.push(format!("[ a sco:PopulationSize ; sio:hasValue {n} ]"));
        }
        // Continuous characteristics: items with no category, by path.
        let mut continuous: BTreeMap<Vec<String>, Vec<&Item>> = BTreeMap::new();
        let mut order: Vec<Vec<String>> = Vec::new();
        let mut categories: Vec<(Vec<String>, String)> = Vec::new();
        let mut by_cat: BTreeMap<(Vec<String>, String), Vec<&Item>> = BTreeMap::new();
        for it in &mine {
            if it.measure == Measure::PopulationSize || it.value.is_none() {
                continue;
            }
            if let Some(c) = &it.category {
                let k = (it.characteristic.clone(), c.clone());
                if !categories.contains(&k) {
                    categories.push(k.clone());
                }
                by_cat.entry(k).or_default().push(it);
            } else {
                if !order.contains(&it.characteristic) {
                    order.push(it.characteristic.clone());
                }
                continuous
                    .entry(it.characteristic.clone())
                    .or_default()
                    .push(it);
            }
        }
        for path in &order {
            let its = &continuous[path];
            let label = path.join(" › ");
            let mut classes = vec!["sco:SubjectCharacteristic".to_string()];
            if let Some(c) = path.iter().rev().find_map(|p| characteristic_class(p)) {
                classes.push(c.to_string());
            }
            let mut s = format!(
                "[ a {} ;\n        rdfs:label {}",
                classes.join(", "),
                lit(&label)
            );
            if let Some(u) = its.iter().find_map(|i| i.unit.clone()) {
                let _ = write!(
                    s,
                    " ;\n        sio:hasUnit [ a sio:UnitOfMeasurement ; rdfs:label {} ]",
                    lit(&u)
                );
            }
            let ms = measures(its);
            if !ms.is_empty() {
                let _ = write!(
                    s,
                    " ;\n        sio:hasAttribute {}",
                    ms.join(",\n            ")
                );
            }
            s.push_str(" ]");
            attrs.push(s);
        }
        if !attrs.is_empty() {
            let _ = writeln!(out, "    sio:hasAttribute {} ;", attrs.join(",\n    "));
        }
        let _ = writeln!(out, "    sio:isParticipantIn {study} .\n");
        // Categories: sub-populations of the arm.
        for (k, (path, cat)) in categories.iter().enumerate() {
            let its = &by_cat[&(path.clone(), cat.clone())];
            let sub = format!("{iri}_C{}_{}", k + 1, slug(cat));
            let characteristic = path
                .iter()
                .rev()
                .find(|p| super::strip_annotation(p) != *cat)
                .cloned()
                .unwrap_or_else(|| cat.clone());
            let _ = writeln!(out, "{sub}\n    a owl:Class ;\n    rdfs:subClassOf {iri} ;");
            let _ = writeln!(out, "    rdfs:label {} ;", lit(cat));
            let _ = writeln!(
                out,
                "    rdfs:subClassOf [ a owl:Restriction ; owl:onProperty sio:hasAttribute ;\n        owl:someValuesFrom [ a owl:Class ; rdfs:label {} ; rdfs:subClassOf [ a sco:SubjectCharacteristic ; rdfs:label {} ] ] ] ;",
                lit(cat),
                lit(&characteristic)
            );
            let mut attrs = Vec::new();
            for it in its {
                let v = it.value.unwrap_or_default();
                let s = match it.measure {
                    Measure::Count => format!("[ a sco:PopulationSize ; sio:hasValue {} ]", num(v)),
                    Measure::Percent => {
                        format!(
                            "[ a sio:Percentage ; sio:hasValue {} ; sio:inRelationTo {iri} ]",
                            num(v)
                        )
                    }
                    m => format!("[ a {} ; sio:hasValue {} ]", measure_class(m), num(v)),
                };
                attrs.push(s);
            }
            let _ = writeln!(
                out,
                "    sio:hasAttribute {} .\n",
                attrs.join(",\n        ")
            );
        }
    }
}

/// The measure nodes of one characteristic: single measures as
/// `[a sio:Mean; sio:hasValue v]`, interval ends paired under their interval.
fn measures(its: &[&Item]) -> Vec<String> {
    let mut out = Vec::new();
    let mut lows: BTreeMap<&str, f64> = BTreeMap::new();
    for it in its {
        let v = it.value.unwrap_or_default();
        let (class, end) = match it.measure {
            Measure::IqrLow => ("obo:STATO_0000164", 0),
            Measure::IqrHigh => ("obo:STATO_0000164", 1),
            Measure::RangeLow => ("sio:Range", 0),
            Measure::RangeHigh => ("sio:Range", 1),
            Measure::CiLow => ("sio:ConfidenceInterval", 0),
            Measure::CiHigh => ("sio:ConfidenceInterval", 1),
            Measure::Other => {
                out.push(format!(
                    "[ a sio:Attribute ; sio:hasValue {} ; rdfs:comment {} ]",
                    num(v),
                    lit(&it.cell_text)
                ));
                continue;
            }
            m => {
                out.push(format!(
                    "[ a {} ; sio:hasValue {} ]",
                    measure_class(m),
                    num(v)
                ));
                continue;
            }
        };
        if end == 0 {
            lows.insert(class, v);
        } else if let Some(lo) = lows.remove(class) {
            out.push(format!(
                "[ a {class} ; sio:hasAttribute [ a sio:MinimalValue ; sio:hasValue {} ], [ a sio:MaximalValue ; sio:hasValue {} ] ]",
                num(lo),
                num(v)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_names() {
        assert_eq!(lit("a \"b\"\n"), "\"a \\\"b\\\"\\n\"");
        assert_eq!(num(60.0), "60.0");
        assert_eq!(num(56.7), "56.7");
        assert_eq!(slug("EP group (T0)"), "EPGroupT0");
        assert_eq!(characteristic_class("Mean age (SD), y"), Some("sio:Age"));
        assert_eq!(characteristic_class("Male sex"), None);
    }
}
