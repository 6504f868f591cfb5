use super::{ReadStart, Recent, TOKEN_CACHE_MAX, TOKEN_CACHE_TTL, TokenCache, TokenKeys};
use std::time::Instant;

#[test]
fn a_read_a_forget_overtook_fills_no_cache() {
    let cache = TokenCache::default();
    let read = cache.read_start();
    cache.keep_read("kept", None, &read);
    assert!(cache.records.holds("kept"));
    // A revocation lands while a read is out: what it brought may be from before it.
    let read = cache.read_start();
    cache.forget("revoked");
    cache.keep_read("revoked", None, &read);
    cache.keep_read("another", None, &read);
    assert!(!cache.records.holds("revoked") && !cache.records.holds("another"));
    // Records are timed from their read's start.
    let lapsed = ReadStart { at: Instant::now().checked_sub(TOKEN_CACHE_TTL).expect("a clock past the TTL"), forgets: read.forgets + 1 };
    cache.keep_read("old", None, &lapsed);
    assert!(cache.records.lock().contains_key("old") && !cache.records.holds("old"));
}

#[test]
fn a_full_cache_drops_lapsed_entries_first() {
    let recent: Recent<u8> = Recent::default();
    let lapsed = Instant::now().checked_sub(TOKEN_CACHE_TTL).expect("a clock past the TTL");
    {
        let mut entries = recent.lock();
        for n in 0..TOKEN_CACHE_MAX - 1 {
            entries.insert(format!("old{n}").into(), (lapsed, 0));
        }
    }
    recent.put("fresh", 1);
    recent.put("another", 2);
    assert_eq!((recent.get("fresh"), recent.get("another"), recent.lock().len()), (Some(1), Some(2), 2));
    // Full of live entries: cleared, rather than growing without bound.
    let recent: Recent<u8> = Recent::default();
    for n in 0..TOKEN_CACHE_MAX {
        recent.put(&format!("live{n}"), 0);
    }
    recent.put("one more", 1);
    assert_eq!(recent.lock().len(), 1);
}

#[test]
fn the_deployment_name_is_the_same_for_one_key_and_reveals_nothing_of_it() {
    let key = "0123456789abcdef0123456789abcdef";
    let (one, again, other) =
        (TokenKeys::from_secret(key.as_bytes()), TokenKeys::from_secret(key.as_bytes()), TokenKeys::from_secret(b"another key"));
    assert_eq!(one.deployment(), again.deployment());
    assert_ne!(one.deployment(), other.deployment());
    assert_eq!(one.deployment().len(), 16);
    assert!(one.deployment().chars().all(|c| c.is_ascii_hexdigit()) && !key.contains(one.deployment()));
}
