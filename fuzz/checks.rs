// Property checks shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and the stable
// test that replays the kept corpora (`tests/integration/fuzz_corpora.rs`). Both `include!` this
// file, so it holds plain items only (no inner attributes, no `//!` docs) and uses only crates
// both sides depend on: egs-schema, egs-api, egs-entities, async-graphql, chrono, serde_json.
//
// Each `check_*` takes the raw input bytes and panics, with the input in the message, when a
// property fails. Text inputs are read with `from_utf8_lossy` so every input exercises the parser.

use async_graphql::{ID, InputType, Pos, ScalarType, Value};
use chrono::{DateTime, Utc};
use egs_domain::error::ErrorCode;
use egs_schema::ids::{self, Kind};
use egs_schema::pagination::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageRequest, encode_cursor};
use egs_schema::scalars::Duration;
use egs_wire::duration::{MAX_SECS as MAX_DURATION_SECS, format_iso as format_duration, parse, parse_secs as parse_duration};
use std::fmt::Debug;

/// An i64 taken from (up to) the first eight bytes, for properties over arbitrary numbers.
fn derived_i64(data: &[u8]) -> i64 {
    let mut bytes = [0u8; 8];
    for (slot, byte) in bytes.iter_mut().zip(data) {
        *slot = *byte;
    }
    i64::from_le_bytes(bytes)
}

// ---------------------------------------------------------------------------------------------
// duration: egs_wire::duration's grammar (milliseconds and whole seconds) and the Duration scalar.

pub fn check_duration(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parsed = parse_duration(&text);
    match &parsed {
        Ok(secs) => {
            let secs = *secs;
            assert!((0..=MAX_DURATION_SECS).contains(&secs), "parse_duration({text:?}) = Ok({secs}): outside 0..=10 years");
            let formatted = format_duration(secs);
            assert_eq!(
                parse_duration(&formatted),
                Ok(secs),
                "parse_duration({text:?}) = Ok({secs}), but its ISO form {formatted:?} does not parse back"
            );
            assert_eq!(parse_duration(&format!(" \t{text}\n ")), Ok(secs), "surrounding whitespace changed how {text:?} parses");
        }
        Err(message) => assert!(
            message.contains("duration") || message.contains("maximum"),
            "parse_duration({text:?}) failed without saying what a duration looks like: {message}"
        ),
    }

    // The millisecond reading agrees: a span of whole seconds reads the same both ways, and one
    // with a fraction of a second is refused by the whole-second reading with a message.
    match (parse(&text), &parsed) {
        (Ok(span), Ok(secs)) => assert_eq!((span.as_secs() as i64, span.subsec_millis()), (*secs, 0), "{text:?} reads differently"),
        (Ok(span), Err(message)) => {
            assert!(span.subsec_millis() != 0 && message.contains("whole number of seconds"), "{text:?}: {span:?} but {message}")
        }
        (Err(_), Ok(secs)) => panic!("{text:?} reads as {secs} s but not as a span"),
        (Err(_), Err(_)) => {}
    }

    // The GraphQL scalar says the same as the function, its validity check agrees with its
    // parse, and what it writes back parses to the same value.
    let value = Value::String(text.clone().into_owned());
    let valid = <Duration as ScalarType>::is_valid(&value);
    let scalar = <Duration as ScalarType>::parse(value).ok();
    assert_eq!(scalar.map(Duration::secs), parsed.as_ref().ok().copied(), "the Duration scalar and parse_duration disagree on {text:?}");
    assert_eq!(valid, scalar.is_some(), "Duration::is_valid and Duration::parse disagree on {text:?}");
    if let Some(duration) = scalar {
        let written = ScalarType::to_value(&duration);
        assert_eq!(
            <Duration as ScalarType>::parse(written.clone()).ok(),
            Some(duration),
            "Duration {text:?} is written as {written}, which does not parse back"
        );
    }

    // Every number of seconds in range formats to ISO 8601 that parses back to it.
    let secs = derived_i64(data).rem_euclid(MAX_DURATION_SECS + 1);
    let formatted = format_duration(secs);
    assert!(formatted.starts_with('P'), "format_duration({secs}) = {formatted:?} is not ISO 8601");
    assert_eq!(parse_duration(&formatted), Ok(secs), "format_duration({secs}) = {formatted:?} does not parse back");
}

// ---------------------------------------------------------------------------------------------
// ids: egs_schema::ids::{decode_any, decode, encode}, and cursors through the public
// PageRequest::new (decode_cursor itself is private) and encode_cursor.

pub fn check_ids(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let id = ID(text.clone().into_owned());
    let any = ids::decode_any(&text);
    if let Some((kind, row)) = any {
        assert!(row > 0, "decode_any({text:?}) = {kind:?} row {row}: row ids are positive");
        assert_eq!(ids::decode_any(&ids::encode(kind, row)), Some((kind, row)), "re-encoding decode_any({text:?}) does not decode to the same id");
    }
    for kind in Kind::ALL {
        match ids::decode("id", &id, kind) {
            Ok(row) => assert_eq!(any, Some((kind, row)), "decode({text:?}, {kind:?}) = Ok({row}) but decode_any says {any:?}"),
            Err(error) => {
                assert!(any.is_none_or(|(found, _)| found != kind), "decode({text:?}, {kind:?}) failed but decode_any says {any:?}");
                assert_eq!(error.code(), ErrorCode::InvalidInput, "a bad id must be the caller's error: {text:?} gave {error:?}");
                let message = error.public_message();
                assert!(message.contains(id.as_str()), "the error for {text:?} does not quote the id: {message}");
            }
        }
    }

    // encode → decode for an arbitrary kind and row id taken from the input.
    if let Some((first, rest)) = data.split_first() {
        let kind = Kind::ALL[usize::from(*first) % Kind::ALL.len()];
        let row = derived_i64(rest);
        let encoded = ids::encode(kind, row);
        let expected = (row > 0).then_some((kind, row));
        assert_eq!(ids::decode_any(&encoded), expected, "decode_any(encode({kind:?}, {row}))");
        assert_eq!(ids::decode("id", &encoded, kind).ok(), expected.map(|(_, row)| row), "decode(encode({kind:?}, {row}))");
    }

    // Cursors: any text is either a cursor (which re-encodes to itself) or the caller's error.
    match PageRequest::new(None, Some(text.clone().into_owned())) {
        Ok(page) => {
            assert_eq!(page.limit, DEFAULT_PAGE_SIZE, "no `first` must mean the default page size");
            let after = page.after.unwrap_or_else(|| panic!("the cursor {text:?} was accepted but gave no position"));
            let again = PageRequest::new(None, Some(encode_cursor(after))).map(|page| page.after).ok();
            assert_eq!(again, Some(Some(after)), "cursor {text:?} → {after} does not round-trip");
        }
        Err(error) => assert_eq!(error.code(), ErrorCode::InvalidInput, "a bad cursor must be the caller's error: {text:?} gave {error:?}"),
    }
    let row = derived_i64(data.get(1..).unwrap_or_default());
    let first = i32::from(data.first().copied().unwrap_or_default() as i8);
    match PageRequest::new(Some(first), Some(encode_cursor(row))) {
        Ok(page) => {
            assert!((0..=MAX_PAGE_SIZE as i32).contains(&first), "first = {first} was accepted");
            assert_eq!(page.limit, first as u64);
            assert_eq!(page.after, Some(row), "encode_cursor({row}) does not decode to {row}");
        }
        Err(error) => {
            assert!(!(0..=MAX_PAGE_SIZE as i32).contains(&first), "first = {first}, cursor of {row} refused: {error:?}");
            assert_eq!(error.code(), ErrorCode::InvalidInput);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// trace_csv: egs_api::replay::parse_trace.

pub fn check_trace_csv(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let jobs = match egs_api::replay::parse_trace(&text) {
        Ok(jobs) => jobs,
        Err(error) => {
            assert!(!format!("{error:#}").trim().is_empty(), "parse_trace failed without a message on {text:?}");
            return;
        }
    };
    // Values are refused unless in 0..1e12; durations and GPU counts are rounded up to ≥ 1.
    const LIMIT: i64 = 1_000_000_000_000;
    for job in &jobs {
        assert!(job.gpus >= 1, "{job:?}: a job needs at least one GPU (trace {text:?})");
        assert!((1..=LIMIT).contains(&job.duration), "{job:?}: duration out of 1..=1e12 (trace {text:?})");
        assert!((0..LIMIT).contains(&job.submitted_at), "{job:?}: submission time out of 0..1e12 (trace {text:?})");
        assert_eq!(job.id.trim(), job.id, "{job:?}: fields are trimmed (trace {text:?})");
    }
    // The jobs written back as canonical CSV parse to the same jobs.
    let mut canonical = String::from("job_id,submission_time,duration,num_gpu\n");
    for job in &jobs {
        canonical += &format!("\"{}\",{},{},{}\n", job.id.replace('"', "\"\""), job.submitted_at, job.duration, job.gpus);
    }
    match egs_api::replay::parse_trace(&canonical) {
        Ok(again) => assert_eq!(again, jobs, "the jobs of {text:?} written back as {canonical:?} parse differently"),
        Err(error) => panic!("the jobs of {text:?} written back as {canonical:?} do not parse: {error:#}"),
    }
}

// ---------------------------------------------------------------------------------------------
// variables: JSON variables → async_graphql::Value → EGS input types and scalars.

/// Coerces `value` into `T` as a variable would be. When that works, `to_value()` of the result
/// must coerce again, and to something that writes out the same. Returns both coercions.
fn coerce<T: InputType>(value: &Value) -> Option<(T, T)> {
    match T::parse(Some(value.clone())) {
        Ok(first) => {
            let written = first.to_value();
            let again = T::parse(Some(written.clone())).unwrap_or_else(|error| {
                let message = error.into_server_error(Pos::default()).message;
                panic!("{}: {value} coerced, but its to_value() {written} does not: {message}", T::type_name())
            });
            assert_eq!(again.to_value(), written, "{}: {value} → {written} does not write back the same", T::type_name());
            Some((first, again))
        }
        Err(error) => {
            let message = error.into_server_error(Pos::default()).message;
            assert!(!message.trim().is_empty(), "{}: {value} refused without a message", T::type_name());
            None
        }
    }
}

/// [`coerce`], and the re-coerced value equals the first.
fn coerce_eq<T: InputType + PartialEq + Debug>(value: &Value) {
    if let Some((first, again)) = coerce::<T>(value) {
        assert_eq!(first, again, "{}: {value} does not survive to_value() and back", T::type_name());
    }
}

/// The mutation inputs of the gpr, slice, cluster and token modules (none implements PartialEq).
fn coerce_inputs(value: &Value) {
    use egs_schema::{cluster, gpr, slice, token};
    coerce::<gpr::Label>(value);
    coerce::<gpr::GprFilter>(value);
    coerce::<gpr::WaitTimeInput>(value);
    coerce::<gpr::CreateGprInput>(value);
    coerce::<gpr::UpdateGprInput>(value);
    coerce::<gpr::GprActionInput>(value);
    coerce::<gpr::SetGprPriorityInput>(value);
    coerce::<gpr::GprDecisionInput>(value);
    coerce::<slice::SlicePolicyInput>(value);
    coerce::<slice::NamespaceInput>(value);
    coerce::<slice::MemberInput>(value);
    coerce::<slice::CreateSliceInput>(value);
    coerce::<slice::UpdateSliceInput>(value);
    coerce::<slice::DeleteSliceInput>(value);
    coerce::<slice::SliceNamespaceInput>(value);
    coerce::<slice::AddSliceMemberInput>(value);
    coerce::<slice::RemoveSliceMemberInput>(value);
    coerce::<slice::SetSlicePolicyInput>(value);
    coerce::<cluster::RegisterClusterInput>(value);
    coerce::<cluster::UpdateClusterInput>(value);
    coerce::<cluster::RemoveClusterInput>(value);
    coerce::<token::TokenScopeInput>(value);
    coerce::<token::CreateTokenInput>(value);
    coerce::<token::RevokeTokenInput>(value);
}

/// The scalars and enums those inputs are made of.
fn coerce_scalars(value: &Value) {
    coerce_eq::<Duration>(value);
    coerce_eq::<Option<Duration>>(value);
    coerce_eq::<DateTime<Utc>>(value);
    coerce_eq::<ID>(value);
    coerce_eq::<Vec<ID>>(value);
    coerce_eq::<i32>(value);
    coerce_eq::<i64>(value);
    coerce_eq::<bool>(value);
    coerce_eq::<String>(value);
    coerce_eq::<egs_entities::Role>(value);
    coerce_eq::<egs_entities::SliceRole>(value);
    coerce_eq::<egs_entities::ClusterProvider>(value);
    coerce_eq::<egs_entities::PodPlacement>(value);
    coerce_eq::<egs_entities::GprPhase>(value);
}

/// Every value in the tree, depth first, at most `limit` of them.
fn collect_values<'a>(value: &'a Value, out: &mut Vec<&'a Value>, limit: usize) {
    if out.len() >= limit {
        return;
    }
    out.push(value);
    match value {
        Value::List(items) => items.iter().for_each(|item| collect_values(item, out, limit)),
        Value::Object(fields) => fields.values().for_each(|field| collect_values(field, out, limit)),
        _ => {}
    }
}

pub fn check_variables(data: &[u8]) {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let value = match Value::from_json(json.clone()) {
        Ok(value) => value,
        Err(error) => panic!("JSON {json} is not a GraphQL value: {error}"),
    };
    // The whole document, and each variable of a `{"input": {...}}` object, as every input type.
    coerce_inputs(&value);
    if let Value::Object(variables) = &value {
        variables.values().take(8).for_each(coerce_inputs);
    }
    // Every value inside it as every scalar.
    let mut values = Vec::new();
    collect_values(&value, &mut values, 256);
    values.into_iter().for_each(coerce_scalars);
    // A variable that is absent altogether.
    coerce_inputs_absent();
}

/// `parse(None)` (an absent variable) must not panic either.
fn coerce_inputs_absent() {
    let _ = <Option<Duration> as InputType>::parse(None);
    let _ = <egs_schema::gpr::CreateGprInput as InputType>::parse(None);
    let _ = <egs_schema::slice::SlicePolicyInput as InputType>::parse(None);
    let _ = <Option<egs_schema::token::CreateTokenInput> as InputType>::parse(None);
}

// ---------------------------------------------------------------------------------------------
// gate: egs_schema::limits::Gate, the checks every GraphQL document passes before validation
// (fragment shape, expanded size, output cost, planning questions, aliases, budget).

/// Longer than any document could take even in an unoptimised build, if the gate's work is
/// linear in the document; a walk that visits fragments again for every spread takes minutes.
const GATE_TIME_BOUND: std::time::Duration = std::time::Duration::from_secs(1);

fn gate() -> &'static egs_schema::limits::Gate {
    static GATE: std::sync::OnceLock<egs_schema::limits::Gate> = std::sync::OnceLock::new();
    GATE.get_or_init(|| egs_schema::limits::Gate::new(None))
}

/// The gate's answer for `text` as an anonymous caller: the operation, or the refusal's text.
fn gate_answer(text: &str) -> Result<String, String> {
    let mut request = async_graphql::Request::new(text);
    let started = std::time::Instant::now();
    let answer = gate().admit(&mut request, egs_domain::auth::Principal::Anonymous);
    let took = started.elapsed();
    assert!(took < GATE_TIME_BOUND, "the gate took {took:?} over a document of {} bytes: {text:?}", text.len());
    match answer {
        Ok(operation) => Ok(format!("{operation:?}")),
        Err(error) => {
            assert!(!error.message.trim().is_empty(), "the gate refused {text:?} without a message");
            Err(error.message)
        }
    }
}

pub fn check_gate(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let first = gate_answer(&text);
    // The second look comes from the gate's cache of parsed documents: the same answer.
    assert_eq!(gate_answer(&text), first, "the gate answered {text:?} differently the second time");
    if async_graphql::parser::parse_query(text.as_ref()).is_err() {
        assert!(first.is_err(), "the gate admitted {text:?}, which does not parse");
    }
}
