//! The netfilter queue protocol (nfnetlink_queue), only what a verdict-only listener needs:
//! bind a queue with copies of each packet's first 40 bytes (its IPv4 and TCP headers,
//! which identify it from hop to hop, and its length), read queued-packet messages, and
//! send verdicts (one packet, or every packet up to an id).
//!
//! Layout (linux/netlink.h, linux/netfilter/nfnetlink.h, nfnetlink_queue.h): each message is
//! a 16-byte `nlmsghdr`, a 4-byte `nfgenmsg` (family, version, queue number big-endian),
//! then attributes (`nlattr`: u16 length, u16 type, payload padded to 4). Payload integers
//! of nfnetlink_queue are big-endian.

pub const NETLINK_NETFILTER: i32 = 12;
const NFNL_SUBSYS_QUEUE: u16 = 3;
const NFQNL_MSG_PACKET: u16 = 0;
const NFQNL_MSG_VERDICT: u16 = 1;
const NFQNL_MSG_CONFIG: u16 = 2;
const NFQNL_MSG_VERDICT_BATCH: u16 = 3;

const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_ERROR: u16 = 2;
const NLMSG_HDRLEN: usize = 16;
const NFGEN_HDRLEN: usize = 4;
const NLA_TYPE_MASK: u16 = 0x3fff;

const NFQA_CFG_CMD: u16 = 1;
const NFQA_CFG_PARAMS: u16 = 2;
const NFQA_CFG_QUEUE_MAXLEN: u16 = 3;
const NFQNL_CFG_CMD_BIND: u8 = 1;
const NFQNL_COPY_PACKET: u8 = 2;
/// Bytes of each packet copied to us: the IPv4 header and the TCP header without options,
/// enough to know the packet again at its next port ([`packet_key`]); its length the kernel
/// sends (as NFQA_CAP_LEN) when the packet is longer than this. (Metadata-only copies carry
/// no length.)
const COPY_RANGE: u32 = 40;

const NFQA_PACKET_HDR: u16 = 1;
const NFQA_VERDICT_HDR: u16 = 2;
const NFQA_PAYLOAD: u16 = 10;
const NFQA_CAP_LEN: u16 = 13;

pub const NF_DROP: u32 = 0;
pub const NF_ACCEPT: u32 = 1;

/// A message the kernel sent on a queue socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet was queued: its queue, id, length (the IP packet, bytes) and key
    /// ([`packet_key`] of the copied bytes).
    Packet {
        queue: u16,
        id: u32,
        len: u32,
        key: u64,
    },
    /// An acknowledgement (errno 0) or error (negative errno) for request `seq`.
    Ack { seq: u32, errno: i32 },
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn start(buf: &mut Vec<u8>, msg: u16, flags: u16, seq: u32, queue: u16) -> usize {
    let at = buf.len();
    buf.extend_from_slice(&0u32.to_ne_bytes()); // length, patched by finish()
    buf.extend_from_slice(&((NFNL_SUBSYS_QUEUE << 8) | msg).to_ne_bytes());
    buf.extend_from_slice(&flags.to_ne_bytes());
    buf.extend_from_slice(&seq.to_ne_bytes());
    buf.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel
    buf.extend_from_slice(&[0 /* AF_UNSPEC */, 0 /* NFNETLINK_V0 */]);
    buf.extend_from_slice(&queue.to_be_bytes());
    at
}

fn attr(buf: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    buf.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(payload);
    buf.resize(align4(buf.len()), 0);
}

fn finish(buf: &mut [u8], at: usize) {
    let len = (buf.len() - at) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_ne_bytes());
}

/// Bind `queue` to this socket (acknowledged as `seq`).
pub fn bind(buf: &mut Vec<u8>, queue: u16, seq: u32) {
    let at = start(buf, NFQNL_MSG_CONFIG, NLM_F_REQUEST | NLM_F_ACK, seq, queue);
    // struct nfqnl_msg_config_cmd { u8 command; u8 pad; be16 pf; }
    attr(buf, NFQA_CFG_CMD, &[NFQNL_CFG_CMD_BIND, 0, 0, 0]);
    finish(buf, at);
}

/// Copy only the first bytes of each packet (the length arrives as NFQA_CAP_LEN) and let the kernel hold up to
/// `max_len` packets on `queue` (acknowledged as `seq`).
pub fn configure(buf: &mut Vec<u8>, queue: u16, max_len: u32, seq: u32) {
    let at = start(buf, NFQNL_MSG_CONFIG, NLM_F_REQUEST | NLM_F_ACK, seq, queue);
    // struct nfqnl_msg_config_params { be32 copy_range; u8 copy_mode; } (packed)
    let mut params = COPY_RANGE.to_be_bytes().to_vec();
    params.push(NFQNL_COPY_PACKET);
    attr(buf, NFQA_CFG_PARAMS, &params);
    attr(buf, NFQA_CFG_QUEUE_MAXLEN, &max_len.to_be_bytes());
    finish(buf, at);
}

fn verdict_hdr(verdict: u32, id: u32) -> [u8; 8] {
    let mut hdr = [0u8; 8];
    hdr[..4].copy_from_slice(&verdict.to_be_bytes());
    hdr[4..].copy_from_slice(&id.to_be_bytes());
    hdr
}

/// Verdict on packet `id` alone.
pub fn verdict(buf: &mut Vec<u8>, queue: u16, id: u32, verdict: u32) {
    let at = start(buf, NFQNL_MSG_VERDICT, NLM_F_REQUEST, 0, queue);
    attr(buf, NFQA_VERDICT_HDR, &verdict_hdr(verdict, id));
    finish(buf, at);
}

/// Verdict on every packet of `queue` still waiting whose id is not after `id`.
pub fn verdict_batch(buf: &mut Vec<u8>, queue: u16, id: u32, verdict: u32) {
    let at = start(buf, NFQNL_MSG_VERDICT_BATCH, NLM_F_REQUEST, 0, queue);
    attr(buf, NFQA_VERDICT_HDR, &verdict_hdr(verdict, id));
    finish(buf, at);
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A 64-bit key that tells a packet from the others at neighbouring ports: FNV-1a over its
/// first bytes (IPv4 header and TCP header: addresses, IP id, ports, sequence and
/// acknowledgement numbers, checksums), leaving out the TTL and the header checksum, which a
/// router would change (the emulated switches are bridges: they change nothing).
pub fn packet_key(head: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, &b) in head.iter().enumerate().take(COPY_RANGE as usize) {
        if i == 8 || i == 10 || i == 11 {
            continue;
        }
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Decode the messages of one datagram into `out`; messages of other kinds are skipped.
/// Returns an error text for a malformed datagram.
pub fn parse(data: &[u8], out: &mut Vec<Event>) -> Result<(), String> {
    let mut at = 0;
    while at + NLMSG_HDRLEN <= data.len() {
        let len = u32_at(data, at) as usize;
        if len < NLMSG_HDRLEN || at + len > data.len() {
            return Err(format!("netlink message of length {len} at offset {at}"));
        }
        let kind = u16_at(data, at + 4);
        let seq = u32_at(data, at + 8);
        let msg = &data[at..at + len];
        if kind == NLMSG_ERROR {
            if len < NLMSG_HDRLEN + 4 {
                return Err("short netlink error message".into());
            }
            let errno = u32_at(msg, NLMSG_HDRLEN) as i32;
            out.push(Event::Ack { seq, errno });
        } else if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET {
            out.push(parse_packet(msg)?);
        }
        at += align4(len);
    }
    Ok(())
}

fn parse_packet(msg: &[u8]) -> Result<Event, String> {
    if msg.len() < NLMSG_HDRLEN + NFGEN_HDRLEN {
        return Err("short queued-packet message".into());
    }
    let queue = u16::from_be_bytes([msg[NLMSG_HDRLEN + 2], msg[NLMSG_HDRLEN + 3]]);
    let mut id = None;
    let mut len = None;
    let mut payload_len = None;
    let mut key = 0;
    let mut at = NLMSG_HDRLEN + NFGEN_HDRLEN;
    while at + 4 <= msg.len() {
        let alen = u16_at(msg, at) as usize;
        let kind = u16_at(msg, at + 2) & NLA_TYPE_MASK;
        if alen < 4 || at + alen > msg.len() {
            return Err(format!(
                "attribute of length {alen} in a queued-packet message"
            ));
        }
        let body = &msg[at + 4..at + alen];
        match kind {
            NFQA_PACKET_HDR if body.len() >= 4 => id = Some(be32_at(body, 0)),
            NFQA_CAP_LEN if body.len() >= 4 => len = Some(be32_at(body, 0)),
            NFQA_PAYLOAD => {
                payload_len = Some(body.len() as u32);
                key = packet_key(body);
            }
            _ => {}
        }
        at += align4(alen);
    }
    match (id, len.or(payload_len)) {
        (Some(id), Some(len)) => Ok(Event::Packet {
            queue,
            id,
            len,
            key,
        }),
        (None, _) => Err("queued-packet message without a packet header".into()),
        (Some(_), None) => Err("queued-packet message without a length".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet_message(queue: u16, id: u32, cap_len: Option<u32>, payload: &[u8]) -> Vec<u8> {
        let mut buf = Vec::new();
        let at = start(&mut buf, NFQNL_MSG_PACKET, 0, 0, queue);
        let mut hdr = id.to_be_bytes().to_vec();
        hdr.extend_from_slice(&[0x08, 0x00, 4]); // hw protocol IPv4, hook postrouting
        attr(&mut buf, NFQA_PACKET_HDR, &hdr);
        attr(&mut buf, 6, &2u32.to_be_bytes()); // an attribute we skip (out device)
        attr(&mut buf, NFQA_PAYLOAD, payload);
        if let Some(len) = cap_len {
            attr(&mut buf, NFQA_CAP_LEN, &len.to_be_bytes());
        }
        finish(&mut buf, at);
        buf
    }

    #[test]
    fn reads_queue_id_and_length_of_queued_packets() {
        let mut data = packet_message(7, 41, Some(1500), &[0x45, 0, 0x05, 0xdc]);
        data.extend(packet_message(7, 42, None, &[1, 2, 3]));
        let mut out = Vec::new();
        parse(&data, &mut out).unwrap();
        assert_eq!(
            out,
            vec![
                Event::Packet {
                    queue: 7,
                    id: 41,
                    len: 1500,
                    key: packet_key(&[0x45, 0, 0x05, 0xdc]),
                },
                Event::Packet {
                    queue: 7,
                    id: 42,
                    len: 3,
                    key: packet_key(&[1, 2, 3]),
                },
            ]
        );
    }

    #[test]
    fn the_key_ignores_ttl_and_header_checksum_only() {
        let mut head: Vec<u8> = (0..40).collect();
        let key = packet_key(&head);
        // FNV-1a of the empty input is its offset basis; a byte changes it
        assert_eq!(packet_key(&[]), 0xcbf2_9ce4_8422_2325);
        head[8] = 63; // TTL
        head[10] ^= 0xff; // header checksum
        head[11] ^= 0xff;
        assert_eq!(packet_key(&head), key);
        for i in [4, 5, 12, 19, 24, 27, 36, 39] {
            // IP id, addresses, TCP sequence number, checksum, ...
            let mut other = head.clone();
            other[i] ^= 1;
            assert_ne!(packet_key(&other), key, "byte {i}");
        }
        // bytes past the copy range do not count
        let mut longer = head.clone();
        longer.push(7);
        assert_eq!(packet_key(&longer), key);
    }

    #[test]
    fn verdicts_are_well_formed_messages() {
        let mut buf = Vec::new();
        verdict_batch(&mut buf, 3, 0x01020304, NF_ACCEPT);
        verdict(&mut buf, 3, 9, NF_DROP);
        assert_eq!(buf.len(), 2 * (16 + 4 + 12));
        assert_eq!(u32_at(&buf, 0), 32);
        assert_eq!(u16_at(&buf, 4), (3 << 8) | 3); // queue subsystem, verdict batch
        assert_eq!(&buf[18..20], &3u16.to_be_bytes()); // queue number, big-endian
        assert_eq!(&buf[24..28], &1u32.to_be_bytes()); // NF_ACCEPT
        assert_eq!(&buf[28..32], &[1, 2, 3, 4]); // up to this id
        assert_eq!(u16_at(&buf, 36), (3 << 8) | 1); // single verdict
    }

    #[test]
    fn a_truncated_message_is_an_error() {
        let data = packet_message(0, 1, Some(60), &[]);
        let mut out = Vec::new();
        let mut bad = data.clone();
        bad[0] = 200; // longer than the datagram
        assert!(parse(&bad, &mut out).is_err());
        assert!(parse(&data[..20], &mut out).is_err()); // cut inside the message
        assert!(parse(&data[..12], &mut out).is_ok()); // less than a header: nothing
        assert!(out.is_empty());
    }
}
