//! The stream form's rules, each a test named after it.

use proptest::prelude::*;

use super::*;
use crate::receipt::{Receipt, ReceiptError, Scrape, ScrapeOutcome, sha256_hex};

const NATIVE: &[u8] = include_bytes!("../../../tests/data/receipt/native_sim.json");

fn native() -> Receipt {
    Receipt::from_json(NATIVE).unwrap()
}

/// The stream of `r`, uncompressed, and each record's start offset.
fn stream_of(r: &Receipt) -> (Vec<u8>, Vec<usize>) {
    let bytes = whole(r, "00112233445566778899aabbccddeeff");
    let mut starts = Vec::new();
    let mut at = MAGIC.len();
    while at < bytes.len() {
        starts.push(at);
        let eol = at + memchr::memchr(b'\n', &bytes[at..]).unwrap();
        let h: Header = serde_json::from_slice(&bytes[at..eol]).unwrap();
        at = eol + 1 + h.len as usize + 1;
    }
    (bytes, starts)
}

fn records(bytes: &[u8], starts: &[usize]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (i, &s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(bytes.len());
        out.push(bytes[s..e].to_vec());
    }
    out
}

fn join(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    for r in records {
        out.extend_from_slice(r);
    }
    out
}

fn read(bytes: &[u8]) -> Result<Receipt, ReceiptError> {
    Receipt::from_bytes(bytes)
}

#[test]
fn a_receipt_read_back_from_its_stream_is_the_receipt_written() {
    let r = native();
    let (bytes, starts) = stream_of(&r);
    let back = read(&bytes).unwrap();
    let status = back.stream.clone().unwrap();
    assert!(status.sealed);
    assert_eq!(status.records, starts.len() as u64);
    assert!(status.torn_tail.is_none());
    // Scrape bodies are held packed (as their deltas); rebuilt, they are the bodies written.
    assert_eq!(back.packed.len(), 3);
    assert!(back.evidence.keys().all(|n| !n.starts_with("metrics/")));
    let mut same = back.unpacked().into_owned();
    same.stream = None;
    assert_eq!(same, r);
    assert!(back.verify_evidence().is_empty());
    // Scrape bodies after the first from a URL are written as deltas against the one before.
    let deltas = records(&bytes, &starts)
        .iter()
        .filter(|r| r.windows(8).any(|w| w == b"\"base\":\""))
        .count();
    assert!(deltas > 0);
}

#[test]
fn a_v1_document_is_read_as_sealed() {
    let r = Receipt::from_bytes(NATIVE).unwrap();
    assert!(r.stream.is_none());
    assert!(r.sealed());
}

#[test]
fn a_stream_cut_anywhere_is_read_up_to_its_last_whole_record_and_unsealed() {
    let r = native();
    let (bytes, starts) = stream_of(&r);
    // Every cut inside the last three records, and at every record boundary.
    let from = starts[starts.len().saturating_sub(3)];
    let mut cuts: Vec<usize> = (from..bytes.len()).collect();
    cuts.extend(starts.iter().skip(1).copied());
    for cut in cuts {
        let got = read(&bytes[..cut]);
        let whole_records = starts
            .iter()
            .filter(|&&s| s < cut)
            .count()
            .saturating_sub(usize::from(!starts.contains(&cut)));
        match got {
            Ok(back) => {
                let s = back.stream.clone().unwrap();
                assert!(!s.sealed, "cut {cut}");
                assert_eq!(s.records as usize, whole_records, "cut {cut}");
                assert_eq!(s.torn_tail.is_some(), !starts.contains(&cut), "cut {cut}");
                // Every block the cut receipt holds verifies: nothing torn was counted.
                assert!(
                    back.verify_evidence()
                        .iter()
                        .all(|e| matches!(e, crate::receipt::EvidenceError::Missing { .. })),
                    "cut {cut}"
                );
            }
            Err(e) => panic!("cut {cut}: {e}"),
        }
    }
}

#[test]
fn a_stream_without_a_whole_first_record_is_refused() {
    let r = native();
    let (bytes, starts) = stream_of(&r);
    for cut in [0, 5, MAGIC.len(), starts[1] - 1] {
        assert!(read(&bytes[..cut]).is_err(), "cut {cut}");
    }
}

#[test]
fn a_dropped_record_is_a_named_gap() {
    let r = native();
    let (bytes, starts) = stream_of(&r);
    let mut recs = records(&bytes, &starts);
    recs.remove(3);
    let e = read(&join(&recs)).unwrap_err();
    assert!(
        matches!(
            e,
            ReceiptError::Stream(StreamError::Gap {
                position: 3,
                seq: 4
            })
        ),
        "{e}"
    );
}

#[test]
fn a_duplicated_record_is_named() {
    let r = native();
    let (bytes, starts) = stream_of(&r);
    let mut recs = records(&bytes, &starts);
    let copy = recs[2].clone();
    recs.insert(3, copy);
    let e = read(&join(&recs)).unwrap_err();
    assert!(
        matches!(
            e,
            ReceiptError::Stream(StreamError::Repeated {
                position: 3,
                seq: 2,
                identical: true
            })
        ),
        "{e}"
    );
}

#[test]
fn a_reordered_record_is_named() {
    let r = native();
    let (bytes, starts) = stream_of(&r);
    let mut recs = records(&bytes, &starts);
    recs.swap(2, 3);
    let e = read(&join(&recs)).unwrap_err();
    assert!(
        matches!(
            e,
            ReceiptError::Stream(StreamError::Gap {
                position: 2,
                seq: 3
            })
        ),
        "{e}"
    );
}

#[test]
fn a_record_spliced_from_another_receipt_breaks_the_chain() {
    let r = native();
    let (bytes, starts) = stream_of(&r);
    let other = whole(&r, "ffffffffffffffffffffffffffffffff");
    let mut recs = records(&bytes, &starts);
    let theirs = records(&other, &starts);
    recs[4] = theirs[4].clone();
    let e = read(&join(&recs)).unwrap_err();
    assert!(
        matches!(e, ReceiptError::Stream(StreamError::Chain { seq: 4 })),
        "{e}"
    );
}

#[test]
fn a_record_after_the_seal_is_refused() {
    let r = native();
    let (bytes, _) = stream_of(&r);
    let mut w = bytes.clone();
    // A forged record that chains to the seal.
    let seal_line_start = {
        let last = w[..w.len() - 1].iter().rposition(|&b| b == b'\n').unwrap();
        // The seal's header line precedes its payload line.
        w[..last].iter().rposition(|&b| b == b'\n').unwrap() + 1
    };
    let seal_eol = seal_line_start + memchr::memchr(b'\n', &w[seal_line_start..]).unwrap();
    let seal: Header = serde_json::from_slice(&w[seal_line_start..seal_eol]).unwrap();
    let extra = Header {
        seq: seal.seq + 1,
        prev: sha256_hex(&w[seal_line_start..seal_eol]),
        kind: Kind::Block,
        at_mono_ns: 0,
        block: Some("x".into()),
        part: None,
        scrape: None,
        base: None,
        len: 0,
        sha256: sha256_hex(b""),
        bytes: 0,
    };
    w.extend(serde_json::to_vec(&extra).unwrap());
    w.extend(b"\n\n");
    let e = read(&w).unwrap_err();
    assert!(
        matches!(e, ReceiptError::Stream(StreamError::AfterSeal { .. })),
        "{e}"
    );
}

#[test]
fn a_changed_payload_byte_names_its_block_and_is_not_a_refusal() {
    let r = native();
    let (mut bytes, starts) = stream_of(&r);
    // The plan block's payload: flip one byte of its text.
    let recs = records(&bytes, &starts);
    let i = recs
        .iter()
        .position(|r| r.starts_with(b"{\"seq\"") && r.windows(11).any(|w| w == b"\"plan.json\""))
        .unwrap();
    let at = starts[i] + memchr::memchr(b'\n', &recs[i]).unwrap() + 5;
    bytes[at] ^= 0x01;
    let back = read(&bytes).unwrap();
    let errors = back.verify_evidence();
    assert!(
        errors.iter().any(|e| e.to_string().contains("plan.json")),
        "{errors:?}"
    );
}

#[test]
fn an_unsealed_native_stream_ends_its_run_at_the_last_record() {
    let r = native();
    let (bytes, starts) = stream_of(&r);
    let back = read(&bytes[..starts[starts.len() - 1]]).unwrap();
    assert!(!back.sealed());
    // The opening's fields are the receipt's (upgrade writes them final).
    assert_eq!(back.protocol, r.protocol);
}

#[test]
fn a_compressed_stream_cut_mid_block_names_its_torn_tail() {
    // A frame flushed after every record, then cut: what was flushed reads.
    let r = native();
    let (bytes, starts) = stream_of(&r);
    let mut frame = Vec::new();
    // Stored (raw) zstd blocks written by hand: header 3 bytes (size<<3 | type 0 | last).
    frame.extend_from_slice(&ZSTD_MAGIC);
    frame.extend_from_slice(&[0x00, 0x50]); // frame header: no checksum, window 2^(10+10)
    let mut cuts = Vec::new();
    let mut prev = 0;
    for &s in starts.iter().skip(1).chain(std::iter::once(&bytes.len())) {
        let chunk = &bytes[prev..s];
        for piece in chunk.chunks(100_000) {
            let h = (piece.len() as u32) << 3;
            frame.extend_from_slice(&h.to_le_bytes()[..3]);
            frame.extend_from_slice(piece);
        }
        cuts.push(frame.len());
        prev = s;
    }
    frame.extend_from_slice(&[0x01, 0, 0]);
    let all = read(&frame).unwrap();
    assert!(all.sealed());
    let cut = cuts[cuts.len() - 3] + 7;
    let back = read(&frame[..cut]).unwrap();
    let s = back.stream.unwrap();
    assert!(!s.sealed);
    let t = s.torn_tail.unwrap();
    assert_eq!(t.layer, "compressed");
    assert_eq!(t.bytes, 7);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn any_edit_to_a_stream_is_read_or_refused_never_a_panic(
        at in 0usize..60_000, len in 0usize..40, fill in any::<u8>(), cut in 0usize..70_000,
    ) {
        let r = native();
        let (mut bytes, _) = stream_of(&r);
        let n = bytes.len();
        for b in bytes.iter_mut().skip(at % n).take(len) {
            *b = fill;
        }
        bytes.truncate(cut.min(n));
        if let Ok(back) = read(&bytes) {
            // Whatever reads, every block it holds either verifies or is named.
            let _ = back.verify_evidence();
        }
    }
}

// ---- Found by the adversarial pass: each a named rule. ----

/// A hand-built stream: an opening of the fixture's fields and whatever `build` appends.
fn built(build: impl FnOnce(&mut RecordWriter, &mut Vec<u8>)) -> Vec<u8> {
    let r = native();
    let (mut w, mut out) = RecordWriter::open("00", &Fields::of(&r), 0);
    build(&mut w, &mut out);
    out
}

#[test]
fn an_unsealed_stream_with_an_extreme_start_stamp_is_read_not_a_panic() {
    let mut r = native();
    if let crate::receipt::Execution::Native { started, .. } = &mut r.execution {
        started.mono_ns = i64::MIN;
    }
    let (w, out) = RecordWriter::open("00", &Fields::of(&r), 0);
    drop(w);
    let back = read(&out).unwrap();
    assert!(!back.sealed());
}

#[test]
fn a_small_stream_cannot_decompress_to_gigabytes_in_memory() {
    // A zstd frame of RLE blocks: 4 bytes each, 128 KiB each decompressed.
    let mut bomb = ZSTD_MAGIC.to_vec();
    bomb.extend_from_slice(&[0x00, 0x38]); // no checksum; window 128 KiB
    for i in 0..3000u32 {
        let last = u32::from(i == 2999);
        let header = (131_072u32 << 3) | (1 << 1) | last;
        bomb.extend_from_slice(&header.to_le_bytes()[..3]);
        bomb.push(b'a');
    }
    assert!(bomb.len() < 13_000);
    let e = read(&bomb).unwrap_err();
    assert!(
        matches!(e, ReceiptError::Stream(StreamError::TooLarge { .. })),
        "{e}"
    );
    assert_eq!(super::evidence_budget(12_000), 256 << 20);
    assert_eq!(super::evidence_budget(1 << 30), super::MAX_STREAM_BYTES);
}

#[test]
fn rebuilt_delta_bodies_are_bounded_in_total() {
    let body = "a 1\n".repeat(256 << 10).into_bytes(); // 1 MiB
    let stream = built(|w, out| {
        for i in 0..40 {
            let s = Scrape {
                url: "http://h:1/metrics".into(),
                phase: crate::receipt::Phase::During,
                requested: None,
                completed_mono_ns: Some(i),
                outcome: ScrapeOutcome::Response {
                    status: Some(200),
                    body: format!("metrics/{i}"),
                },
                exporter: Default::default(),
            };
            out.extend(w.scrape(&s, &body, i));
        }
    });
    // 40 MiB of bodies from a few kilobytes of deltas: refused past the bound, not held.
    assert!(stream.len() < (1 << 20) + 40_000, "{}", stream.len());
    let e = read_records(&stream, None, stream.len() as u64, 16 << 20).unwrap_err();
    assert!(matches!(e, StreamError::TooLarge { .. }), "{e}");
    assert!(read_records(&stream, None, stream.len() as u64, 64 << 20).is_ok());
}

#[test]
fn bytes_after_the_seal_are_refused() {
    let (mut bytes, _) = stream_of(&native());
    bytes.extend_from_slice(b"{\"seq\": 99, \"trailing\"");
    let e = read(&bytes).unwrap_err();
    assert!(
        matches!(e, ReceiptError::Stream(StreamError::Seal { .. })),
        "{e}"
    );
}

#[test]
fn a_part_whose_payload_differs_from_its_header_digest_is_refused() {
    let mut stream = built(|w, out| {
        out.extend(w.part("native/events.jsonl", b"{\"index\":0}\n", 1));
        out.extend(w.part("native/events.jsonl", b"{\"index\":1}\n", 2));
    });
    let at = stream
        .windows(11)
        .rposition(|x| x == b"{\"index\":0}")
        .unwrap();
    stream[at + 9] = b'7';
    let e = read(&stream).unwrap_err();
    assert!(
        matches!(&e, ReceiptError::Stream(StreamError::Record { detail, .. }) if detail.contains("part 0")),
        "{e}"
    );
}

#[test]
fn the_opening_agrees_with_the_seal_on_what_cannot_change() {
    let r = native();
    let mut other = r.clone();
    other.protocol.requests = Some(5);
    let (w, mut out) = RecordWriter::open("00", &Fields::of(&r), 0);
    out.extend(w.seal(&other, 1));
    let e = read(&out).unwrap_err();
    assert!(
        matches!(&e, ReceiptError::Stream(StreamError::Seal { detail }) if detail.contains("protocol.requests")),
        "{e}"
    );
    let mut bogus = r.clone();
    bogus.schema = "bogus/v0".into();
    let (w, out) = RecordWriter::open("00", &Fields::of(&bogus), 0);
    drop(w);
    assert!(read(&out).is_err());
}

#[test]
fn record_headers_carry_only_their_kinds_fields_and_time_runs_forward() {
    let backwards = built(|w, out| {
        out.extend(w.block("a", b"x", 10));
        out.extend(w.block("b", b"y", 5));
    });
    let e = read(&backwards).unwrap_err();
    assert!(
        matches!(&e, ReceiptError::Stream(StreamError::Record { detail, .. }) if detail.contains("before record")),
        "{e}"
    );
}

#[test]
fn a_receipt_whose_scrapes_share_a_body_does_not_read_back_from_a_stream() {
    let mut r = native();
    let first = r.scrapes[0].outcome.clone();
    r.scrapes[1].outcome = first;
    // whole() writes it; the reader refuses it, so `receipt upgrade` refuses to write it.
    assert!(read(&whole(&r, "00")).is_err());
}

/// Many similar scrapes of one URL, as a stream: `n` bodies of a real vLLM scrape with one
/// counter moving.
fn many_scrapes(n: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let base = include_str!("../../../../../shared/vllm/real-runs/vllm-cpu/metrics_after.txt");
    let mut bodies = Vec::new();
    let stream = built(|w, out| {
        for i in 0..n {
            let body = base
                .replace(
                    "vllm:num_requests_running{engine=\"0\",model_name=\"tiny-llama\"} 0.0",
                    &format!(
                        "vllm:num_requests_running{{engine=\"0\",model_name=\"tiny-llama\"}} {i}.0"
                    ),
                )
                .into_bytes();
            let s = Scrape {
                url: "http://h:1/metrics".into(),
                phase: crate::receipt::Phase::During,
                requested: None,
                completed_mono_ns: Some(i as i64),
                outcome: ScrapeOutcome::Response {
                    status: Some(200),
                    body: format!("metrics/{i}"),
                },
                exporter: Default::default(),
            };
            out.extend(w.scrape(&s, &body, i as i64));
            bodies.push(body);
        }
    });
    (stream, bodies)
}

/// Errors of scrape bodies (a stream built by hand lacks the native run's other blocks).
fn scrape_errors(r: &Receipt) -> Vec<crate::receipt::EvidenceError> {
    r.verify_evidence()
        .into_iter()
        .filter(|e| e.block().starts_with("metrics/"))
        .collect()
}

#[test]
fn scrape_bodies_are_held_as_their_deltas_not_as_text() {
    let (stream, bodies) = many_scrapes(200);
    let read = read_records(&stream, None, stream.len() as u64, 1 << 30).unwrap();
    let r = read.receipt;
    let raw: u64 = bodies.iter().map(|b| b.len() as u64).sum();
    assert_eq!(r.packed.len(), 200);
    assert!(r.evidence.keys().all(|n| !n.starts_with("metrics/")));
    // One whole body and 199 deltas of a few bytes each.
    assert!(
        r.packed.payload_bytes() < raw / 50,
        "{} of {raw}",
        r.packed.payload_bytes()
    );
    // Every body rebuilds as received, one walk or one at a time.
    let mut n = 0;
    r.walk_scrapes(|w| {
        assert_eq!(w.verified().unwrap(), &bodies[n][..]);
        n += 1;
    });
    assert_eq!(n, 200);
    assert_eq!(r.block("metrics/137").unwrap(), bodies[137]);
    assert!(scrape_errors(&r).is_empty());
}

#[test]
fn a_stream_serializes_as_the_v1_document_it_holds() {
    let r = native();
    let (bytes, _) = stream_of(&r);
    let back = read(&bytes).unwrap();
    assert!(!back.packed.is_empty());
    assert_eq!(back.to_json(), r.to_json());
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(&r).unwrap()
    );
}

/// The scrape bodies an audit fails, by name.
fn failed_scrape_bodies(audit: &crate::audit::Audit) -> Vec<&str> {
    audit
        .digests
        .iter()
        .filter(|d| !d.ok && d.block.starts_with("metrics/"))
        .map(|d| d.block.as_str())
        .collect()
}

/// The third scrape's delta in a [`many_scrapes`] stream: its literal line holds "2.0"; make
/// it "7.0" (the record's own digests still match: only the body's does not).
fn edit_third_delta(stream: &mut [u8]) {
    let record = b"\"metrics/2\"";
    let from = stream
        .windows(record.len())
        .position(|w| w == record)
        .unwrap();
    let needle = b"} 2.0\n";
    let at = from
        + stream[from..]
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap()
        + 2;
    stream[at] = b'7';
}

#[test]
fn a_changed_delta_fails_its_scrape_by_name_in_the_audit_and_the_series() {
    let (mut stream, _) = many_scrapes(5);
    edit_third_delta(&mut stream);
    let r = read_records(&stream, None, stream.len() as u64, 1 << 30)
        .unwrap()
        .receipt;
    let errors = scrape_errors(&r);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].block(), "metrics/2");
    let audited = crate::audit::audit_read(&r, &crate::audit::Policy::default());
    assert_eq!(failed_scrape_bodies(&audited.audit), ["metrics/2"]);
    // The series reads the other four, and says why the third is unread.
    assert_eq!(audited.series.len(), 5);
    assert!(
        audited.series[2]
            .read
            .as_ref()
            .unwrap_err()
            .contains("metrics/2")
    );
    for (i, s) in audited.series.iter().enumerate().filter(|(i, _)| *i != 2) {
        assert_eq!(s.read.as_ref().unwrap().running, Some(i as f64));
    }
}

/// The adversarial pass's finding: a scrape record naming a fixed block (the plan, the
/// schedule, the capture, the lease) would have moved it out of every check that reads it.
#[test]
fn a_scrape_body_named_like_a_fixed_block_is_refused() {
    for name in [
        "plan.json",
        "plan/timed_trace.jsonl",
        "run/capture.json",
        "window/lease.json",
    ] {
        let stream = built(|w, out| {
            let s = Scrape {
                url: "http://h:1/metrics".into(),
                phase: crate::receipt::Phase::Before,
                requested: None,
                completed_mono_ns: Some(1),
                outcome: ScrapeOutcome::Response {
                    status: Some(404),
                    body: name.into(),
                },
                exporter: Default::default(),
            };
            out.extend(w.scrape(&s, b"{}", 1));
        });
        let e = read_records(&stream, None, stream.len() as u64, 1 << 30).unwrap_err();
        assert!(
            e.to_string()
                .contains("scrape bodies are metrics/<n> blocks"),
            "{name}: {e}"
        );
    }
}

/// The adversarial pass's finding: 4,000 bodies after one that does not rebuild made messages
/// that each held the one before (10.7 GB for the audit of a 175 KB file).
#[test]
fn a_chain_after_a_body_that_does_not_rebuild_costs_linear_memory() {
    let (stream, _) = many_scrapes(300);
    let mut r = read_records(&stream, None, stream.len() as u64, 1 << 30)
        .unwrap()
        .receipt;
    // The first (whole) body claims one byte fewer than it holds: it does not rebuild.
    let first = r.packed.get("metrics/0").unwrap().clone();
    let mut p = crate::receipt::Packed::default();
    for name in r.packed.order().to_vec() {
        let mut b = r.packed.get(&name).unwrap().clone();
        if name == "metrics/0" {
            b.bytes = first.bytes - 1;
        }
        p.push(name, b);
    }
    r.packed = p;
    let errors = scrape_errors(&r);
    assert_eq!(errors.len(), 300);
    assert!(
        errors.iter().all(|e| e.to_string().len() < 200),
        "{}",
        errors[299]
    );
    let audit = crate::audit::audit(&r);
    assert!(
        audit
            .digests
            .iter()
            .all(|d| d.error.as_ref().is_none_or(|e| e.len() < 200))
    );
}

/// The adversarial pass's finding: the lease's token was looked for in the inline blocks only.
#[test]
fn a_lease_block_is_read_for_its_token_wherever_it_is_held() {
    let mut r = native();
    let lease = r.lease.clone().unwrap();
    let text = String::from_utf8(r.block(&lease).unwrap()).unwrap();
    let with_token = text
        .replacen("{", "{\"token\": \"SECRET\",", 1)
        .into_bytes();
    r.evidence.remove(&lease);
    r.packed.push(
        lease.clone(),
        crate::receipt::PackedBody {
            base: None,
            sha256: sha256_hex(&with_token),
            bytes: with_token.len() as u64,
            payload: with_token,
        },
    );
    assert_eq!(r.lease_token(), Ok(Some("SECRET".to_owned())));
    assert!(!r.redact_lease_token().to_json().contains("SECRET"));
}

/// Runs a [`crate::audit::Deferred`] audit over `r` two scrapes at a time, `hash` standing for
/// the caller's hashing of each body it is handed.
fn deferred_audit(
    r: &Receipt,
    mut hash: impl FnMut(&str, &[u8]) -> Option<String>,
) -> crate::audit::Audited {
    let policy = crate::audit::Policy::default();
    let mut digests = std::collections::BTreeMap::new();
    let mut deferred = crate::audit::Deferred::start(r, &policy);
    while !deferred.done() {
        deferred.step(2, &mut |name, bytes| {
            if let Some(d) = hash(name, bytes) {
                digests.insert(name.to_owned(), d);
            }
        });
    }
    deferred.finish(&digests)
}

fn stream_receipt(stream: &[u8]) -> Receipt {
    read_records(stream, None, stream.len() as u64, 1 << 30)
        .unwrap()
        .receipt
}

#[test]
fn a_deferred_audit_whose_digests_confirm_is_the_audit() {
    let (stream, _) = many_scrapes(7);
    let r = stream_receipt(&stream);
    let mut handed = Vec::new();
    let deferred = deferred_audit(&r, |name, bytes| {
        handed.push(name.to_owned());
        Some(sha256_hex(bytes))
    });
    let audited = crate::audit::audit_read(&r, &crate::audit::Policy::default());
    assert_eq!(deferred.audit, audited.audit);
    assert_eq!(deferred.series, audited.series);
    // Every packed body, once, in the order written.
    assert_eq!(handed, r.packed.order());
}

/// A body whose bytes are not the recorded ones (an edited delta) is read by the deferred
/// scan as rebuilt; its digest does not confirm, so none of that reading is the audit.
#[test]
fn a_deferred_audit_whose_digests_do_not_confirm_reads_nothing_unchecked() {
    let (mut stream, _) = many_scrapes(5);
    edit_third_delta(&mut stream);
    let r = stream_receipt(&stream);
    let deferred = deferred_audit(&r, |_, bytes| Some(sha256_hex(bytes)));
    let audited = crate::audit::audit_read(&r, &crate::audit::Policy::default());
    assert_eq!(deferred.audit, audited.audit);
    assert_eq!(deferred.series, audited.series);
    assert!(deferred.series[2].read.is_err());
    assert!(!deferred.audit.digests_ok);
}

/// The caller's digests are the ones that count: a caller that hashes nothing leaves core to
/// hash every body; one whose digest of a body is wrong fails that body by name.
#[test]
fn a_deferred_audit_without_the_callers_digests_is_hashed_by_core() {
    let (stream, _) = many_scrapes(5);
    let r = stream_receipt(&stream);
    let audited = crate::audit::audit_read(&r, &crate::audit::Policy::default());
    let none = deferred_audit(&r, |_, _| None);
    assert_eq!(none.audit, audited.audit);
    let wrong = deferred_audit(&r, |name, bytes| {
        Some(if name == "metrics/3" {
            "0".repeat(64)
        } else {
            sha256_hex(bytes)
        })
    });
    assert_eq!(failed_scrape_bodies(&wrong.audit), ["metrics/3"]);
    assert!(wrong.series[3].read.is_err());
}
// The adversarial pass on the deferred audit: its differential test, kept.

/// `r`'s scrapes replaced: `plan[i]` = (url index, phase, outcome kind, template, running,
/// generation); bodies are the fixture's own scrape bodies with those numbers edited.
fn varied_stream_receipt(plan: &[(u8, u8, u8, u8, u16, u16)]) -> Receipt {
    let mut r = native();
    let urls = [
        "http://127.0.0.1:18311/metrics",
        "http://other:9/metrics",
        "http://127.0.0.1:18311/metrics2",
    ];
    let templates: Vec<String> = (0..3)
        .map(|i| String::from_utf8(r.block(&format!("metrics/{i}")).unwrap()).unwrap())
        .collect();
    for i in 0..3 {
        r.evidence.remove(&format!("metrics/{i}"));
    }
    let mut scrapes = Vec::new();
    for (i, &(u, ph, kind, t, running, generation)) in plan.iter().enumerate() {
        let phase = match ph % 3 {
            0 => crate::receipt::Phase::Before,
            1 => crate::receipt::Phase::During,
            _ => crate::receipt::Phase::After,
        };
        let name = format!("metrics/{i}");
        let outcome = match kind % 6 {
            0 => ScrapeOutcome::Failed {
                error: "connection refused".into(),
            },
            1 => ScrapeOutcome::Response {
                status: Some(500),
                body: name.clone(),
            },
            2 => ScrapeOutcome::Response {
                status: None,
                body: name.clone(),
            },
            _ => ScrapeOutcome::Response {
                status: Some(200),
                body: name.clone(),
            },
        };
        if matches!(outcome, ScrapeOutcome::Response { .. }) {
            let body = templates[usize::from(t % 3)]
                .replace(
                    "vllm:num_requests_running{engine=\"0\",model_name=\"sim\"} 0.0",
                    &format!("vllm:num_requests_running{{engine=\"0\",model_name=\"sim\"}} {running}.0"),
                )
                .replace(
                    "vllm:generation_tokens_total{engine=\"0\",model_name=\"sim\"} 12.0",
                    &format!("vllm:generation_tokens_total{{engine=\"0\",model_name=\"sim\"}} {generation}.0"),
                );
            r.evidence
                .insert(name.clone(), crate::receipt::Evidence::of(body.as_bytes()));
        }
        let base = r.scrapes[usize::from(ph % 3)].clone();
        scrapes.push(Scrape {
            url: urls[usize::from(u % 3)].into(),
            phase,
            requested: base.requested,
            completed_mono_ns: base.completed_mono_ns,
            outcome,
            exporter: Default::default(),
        });
    }
    r.scrapes = scrapes;
    let stream = whole(&r, "00112233445566778899aabbccddeeff");
    read(&stream).unwrap()
}

/// An edit of the packed bodies an attacker can write in the file (payload, digest, length
/// are header and payload fields the reader does not verify; the seal is rewritten to agree).
fn edit_packed_bodies(r: &mut Receipt, edits: &[(u8, u8, u16)]) {
    let order = r.packed.order().to_vec();
    if order.is_empty() {
        return;
    }
    let mut bodies: Vec<(String, crate::receipt::PackedBody)> = order
        .iter()
        .map(|n| (n.clone(), r.packed.get(n).unwrap().clone()))
        .collect();
    let shas: Vec<String> = bodies.iter().map(|(_, b)| b.sha256.clone()).collect();
    for &(which, how, at) in edits {
        let i = usize::from(which) % bodies.len();
        let b = &mut bodies[i].1;
        match how % 7 {
            0 => {
                if !b.payload.is_empty() {
                    let j = usize::from(at) % b.payload.len();
                    b.payload[j] ^= 0x01;
                }
            }
            1 => b.sha256 = shas[usize::from(at) % shas.len()].clone(),
            2 => b.bytes = b.bytes.saturating_add(1),
            3 => b.bytes = b.bytes.saturating_sub(1 + u64::from(at % 50)),
            4 => b.sha256 = b.sha256.to_uppercase(),
            5 => {
                if !b.payload.is_empty() {
                    let j = usize::from(at) % b.payload.len();
                    b.payload.truncate(j);
                }
            }
            _ => b.bytes = u64::MAX,
        }
    }
    let mut p = crate::receipt::Packed::default();
    for (n, b) in bodies {
        p.push(n, b);
    }
    r.packed = p;
}

fn deferred_stepped(r: &Receipt, steps: &[usize], stop_early: bool) -> crate::audit::Audited {
    let policy = crate::audit::Policy::default();
    let mut digests = std::collections::BTreeMap::new();
    let mut deferred = crate::audit::Deferred::start(r, &policy);
    let mut k = 0;
    while !deferred.done() {
        let n = steps.get(k % steps.len().max(1)).copied().unwrap_or(1);
        k += 1;
        if stop_early && k > steps.len() {
            break;
        }
        // A step of 0 is allowed, but the loop must move on.
        let n = if k > 4 * steps.len() + 4 { n.max(1) } else { n };
        deferred.step(n, &mut |name, bytes| {
            digests.insert(name.to_owned(), sha256_hex(bytes));
        });
    }
    deferred.finish(&digests)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn a_deferred_audit_stepped_any_way_is_the_audit_of_any_stream(
        plan in proptest::collection::vec((0u8..3, 0u8..3, 0u8..6, 0u8..3, 0u16..4, 0u16..20), 0..9),
        edits in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u16>()), 0..4),
        steps in proptest::collection::vec(0usize..4, 1..4),
        stop_early in any::<bool>(),
    ) {
        let mut r = varied_stream_receipt(&plan);
        edit_packed_bodies(&mut r, &edits);
        let want = crate::audit::audit_read(&r, &crate::audit::Policy::default());
        let got = deferred_stepped(&r, &steps, stop_early);
        prop_assert_eq!(format!("{:?}", got.audit), format!("{:?}", want.audit));
        prop_assert_eq!(format!("{:?}", got.series), format!("{:?}", want.series));
    }
}

/// `whole`, with the firing client's key: the same records, then the seal's signature.
fn signed_stream_of(r: &Receipt, seed: u8) -> Vec<u8> {
    let run = "00112233445566778899aabbccddeeff";
    let unsigned = whole(r, run);
    // Write the same stream again through a writer that signs its seal.
    let (mut writer, mut out) = RecordWriter::open(run, &Fields::of(r), 0);
    let replay = read(&unsigned).unwrap();
    assert_eq!(replay.scrapes.len(), r.scrapes.len());
    for (name, e) in &r.evidence {
        let is_body = r
            .scrapes
            .iter()
            .any(|s| matches!(&s.outcome, ScrapeOutcome::Response { body, .. } if body == name));
        if !is_body {
            out.extend(writer.block(name, &e.decoded(name).unwrap(), 0));
        }
    }
    for s in &r.scrapes {
        let body = match &s.outcome {
            ScrapeOutcome::Response { body, .. } => r.block(body).unwrap(),
            ScrapeOutcome::Failed { .. } => Vec::new(),
        };
        out.extend(writer.scrape(s, &body, 0));
    }
    let key = crate::signing::SecretKey::from_seed([seed; 32]);
    out.extend(writer.seal_signed(r, 0, Some(&key)));
    out
}

#[test]
fn a_signed_seal_is_read_with_the_chain_head_it_must_name() {
    let r = native();
    let bytes = signed_stream_of(&r, 5);
    let back = read(&bytes).unwrap();
    let status = back.stream.as_ref().unwrap();
    assert!(status.sealed);
    assert_eq!(status.last_kind, Kind::SealSignature);
    let sig = status.seal_signature.as_ref().unwrap();
    let signed = crate::signing::Signed::from_json(sig.envelope.as_bytes()).unwrap();
    let statement = SealStatement::from_bytes(signed.statement()).unwrap();
    assert_eq!(statement.seal, sig.seal_sha256);
    assert_eq!(statement.run, status.run);
    // The receipt read is the receipt written: the signature adds no field to it.
    assert_eq!(
        back.evidence.len(),
        read(&whole(&r, &status.run)).unwrap().evidence.len()
    );
    // A second signature, or any record after it, is refused.
    let (_, starts) = stream_of(&r);
    let last_start = {
        let all: Vec<usize> = {
            let mut v = Vec::new();
            let mut at = MAGIC.len();
            while at < bytes.len() {
                v.push(at);
                let eol = at + memchr::memchr(b'\n', &bytes[at..]).unwrap();
                let h: Header = serde_json::from_slice(&bytes[at..eol]).unwrap();
                at = eol + 1 + h.len as usize + 1;
            }
            v
        };
        assert_eq!(all.len(), starts.len() + 1);
        *all.last().unwrap()
    };
    let mut twice = bytes.clone();
    twice.extend_from_slice(&bytes[last_start..]);
    assert!(read(&twice).is_err());
}

/// issue 19: records dropped after the seal was signed — the stream re-sealed without them and
/// the old signature carried over, re-chained — name another seal than the one read.
#[test]
fn records_dropped_after_a_signed_seal_break_its_signature() {
    let r = native();
    let signed = signed_stream_of(&r, 5);
    let status = read(&signed).unwrap().stream.unwrap();
    let envelope = status.seal_signature.unwrap().envelope;
    // The same receipt less its last scrape, sealed again by the claimant (no key).
    let mut fewer = r.clone();
    fewer.scrapes.pop();
    let mut forged = whole(&fewer, &status.run);
    // The old signature appended as a record chained onto the new seal.
    let (_, starts) = stream_of(&fewer);
    let seal_start = *starts.last().unwrap();
    let seal_eol = seal_start + memchr::memchr(b'\n', &forged[seal_start..]).unwrap();
    let seal: Header = serde_json::from_slice(&forged[seal_start..seal_eol]).unwrap();
    let header = Header {
        seq: seal.seq + 1,
        prev: sha256_hex(&forged[seal_start..seal_eol]),
        kind: Kind::SealSignature,
        at_mono_ns: seal.at_mono_ns,
        block: None,
        part: None,
        scrape: None,
        base: None,
        len: envelope.len() as u64,
        sha256: sha256_hex(envelope.as_bytes()),
        bytes: envelope.len() as u64,
    };
    forged.extend(serde_json::to_vec(&header).unwrap());
    forged.push(b'\n');
    forged.extend(envelope.as_bytes());
    forged.push(b'\n');
    let back = read(&forged).unwrap();
    let a = crate::audit::audit(&back);
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("names another stream") && i.contains("after it was signed")),
        "{:?}",
        a.inconsistencies
    );
    assert!(!a.qualified);
    // The untouched signed stream audits with its seal's key named.
    let a = crate::audit::audit(&read(&signed).unwrap());
    assert!(a.attestation.seal_key.is_some(), "{:?}", a.inconsistencies);
    assert!(!a.inconsistencies.iter().any(|i| i.contains("seal")));
}
